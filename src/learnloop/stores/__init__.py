"""Storage backends. `open_store` picks one from a path or URL."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from ..config import Settings
from ..errors import ConfigurationError
from ..models import utcnow
from .base import Store

__all__ = ["Store", "open_store"]


def open_store(
    target: str,
    settings: Settings,
    *,
    embedding_model: str,
    dimension: int,
    clock: Callable[[], datetime] = utcnow,
) -> Store:
    """A file path (or `sqlite:///path`) opens the embedded SQLite backend."""
    if target.startswith(("postgresql://", "postgres://")):
        raise ConfigurationError("the PostgreSQL backend is not part of this build yet; use a SQLite path")
    path = target.removeprefix("sqlite:///").removeprefix("sqlite://")
    if not path:
        raise ConfigurationError("db must be a file path, ':memory:' or a database URL")
    from .sqlite import SQLiteStore

    return SQLiteStore(
        path,
        embedding_model=embedding_model,
        dimension=dimension,
        synchronous=settings.sqlite_synchronous,
        ann_threshold=settings.ann_threshold,
        blas_threads=settings.blas_threads,
        clock=clock,
    )
