"""The thin synchronous face of the async core: `loop.sync.retrieve_context(...)`.

Coroutines run on one background event loop per process (the portal), so sync callers — scripts, Flask
handlers, notebooks with a running loop of their own — all share the same parts safely.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

__all__ = ["SyncProxy", "run_sync"]

T = TypeVar("T")


class _Portal:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="learnloop-portal", daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        if threading.current_thread() is self.thread:
            coro.close()
            raise RuntimeError("learnloop's sync API was called from inside its own event loop; use await")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()


_portal: _Portal | None = None
_portal_lock = threading.Lock()


def _get_portal() -> _Portal:
    global _portal
    with _portal_lock:
        if _portal is None:
            _portal = _Portal()
        return _portal


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from synchronous code."""
    return _get_portal().run(coro)


class SyncProxy:
    """Wraps an object of the async core: coroutine methods block, async generators become iterators,
    nested async namespaces (marked `__learnloop_async__`) are wrapped in turn."""

    def __init__(self, target: Any) -> None:
        object.__setattr__(self, "_target", target)

    def __repr__(self) -> str:
        return f"SyncProxy({self._target!r})"

    def __getattr__(self, name: str) -> Any:
        if name == "close":
            name = "aclose"
        attr = getattr(self._target, name)
        if inspect.iscoroutinefunction(attr):
            return _blocking(attr)
        if inspect.isasyncgenfunction(attr):
            return _iterating(attr)
        if getattr(type(attr), "__learnloop_async__", False):
            return SyncProxy(attr)
        return attr

    def __enter__(self) -> SyncProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        run_sync(self._target.aclose())


def _blocking(method: Callable[..., Coroutine[Any, Any, T]]) -> Callable[..., T]:
    def call(*args: Any, **kwargs: Any) -> T:
        return run_sync(method(*args, **kwargs))

    call.__name__ = method.__name__
    call.__doc__ = method.__doc__
    return call


def _iterating(method: Callable[..., Any]) -> Callable[..., Iterator[Any]]:
    def call(*args: Any, **kwargs: Any) -> Iterator[Any]:
        agen = method(*args, **kwargs)
        try:
            while True:
                try:
                    yield run_sync(agen.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            run_sync(agen.aclose())

    call.__name__ = method.__name__
    call.__doc__ = method.__doc__
    return call
