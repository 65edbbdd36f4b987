"""What the parts of the SQLite backend (tools, agent, quarantine, service) need of the store they share a
file, a connection and a thread with. They take it through their constructor as this protocol, so they do not
import the store that builds them (the store imports them)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Protocol, TypeVar

__all__ = ["ConnectionJobs"]

T = TypeVar("T")


class ConnectionJobs(Protocol):
    @property
    def path(self) -> str: ...

    @property
    def embedding_model(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    @property
    def data_version_seen(self) -> int:
        """PRAGMA data_version when the store's thread last read it; moves when another process commits."""
        ...

    def note_data_version(self, version: int) -> None: ...

    async def _run(self, fn: Callable[..., T], *args: Any, stale_ok: bool = False) -> T:
        """Run `fn(connection, *args)` on the store's thread."""
        ...

    def _submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Queue `fn(connection, *args)` after the jobs already queued, without waiting for it."""
        ...
