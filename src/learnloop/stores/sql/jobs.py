"""What the parts of a SQL backend (tools, agent, quarantine, service) need of the store they share a
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
    def path(self) -> str:
        """Where the database is, for messages: a file path, or a URL without its password."""
        ...

    @property
    def embedding_model(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    async def _run(self, fn: Callable[..., T], *args: Any, stale_ok: bool = False) -> T:
        """Run `fn(connection, *args)` on the store's thread."""
        ...

    def _submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Queue `fn(connection, *args)` after the jobs already queued, without waiting for it."""
        ...
