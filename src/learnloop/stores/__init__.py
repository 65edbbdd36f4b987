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
    """A file path (or `sqlite:///path`) opens the embedded SQLite backend; a `postgresql://` (or `postgres://`)
    URL the PostgreSQL one (the `postgres` extra: pip install 'learnloop[postgres]')."""
    if target.startswith(("postgresql://", "postgres://")):
        try:
            from .postgres import PostgresStore
        except ImportError as exc:
            raise ConfigurationError(
                f"a PostgreSQL URL needs the postgres extra: pip install 'learnloop[postgres]' ({exc})"
            ) from exc
        return PostgresStore(
            target,
            embedding_model=embedding_model,
            dimension=dimension,
            ann_threshold=settings.ann_threshold,
            blas_threads=settings.blas_threads,
            clock=clock,
            ann_dir=settings.ann_dir,
        )
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
