"""The PostgreSQL + pgvector backend."""

from .store import PostgresStore

__all__ = ["PostgresStore"]
