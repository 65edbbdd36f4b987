"""Live fan-out of committed events: to SSE streams, activity pages and log sinks.

The event log in the store is the source of truth (history, replay with Last-Event-ID, other processes);
the bus only makes delivery immediate inside this process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field

from .models import Event

__all__ = ["EventBus", "Subscription"]

log = logging.getLogger("learnloop.events")


@dataclass(eq=False)
class Subscription:
    """Events of one tenant (optionally one user), delivered to the event loop that subscribed."""

    tenant: str
    user: str | None
    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue[Event] = field(default_factory=lambda: asyncio.Queue(maxsize=1000))
    overflowed: bool = False

    def wants(self, event: Event) -> bool:
        return event.tenant == self.tenant and (self.user is None or event.user in (None, self.user))

    def _deliver(self, event: Event) -> None:
        try:
            self.queue.put_nowait(event)
        except asyncio.QueueFull:
            self.overflowed = True  # the reader replays from the event log instead

    async def get(self, wait: float | None = None) -> Event | None:
        """The next event, or None after `wait` seconds without one."""
        try:
            return await asyncio.wait_for(self.queue.get(), wait)
        except TimeoutError:
            return None


class EventBus:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscriptions: set[Subscription] = set()
        self._sinks: list[Callable[[Event], None]] = []

    def add_sink(self, sink: Callable[[Event], None]) -> None:
        """A synchronous callback for every event (structured logging, metrics)."""
        with self._lock:
            self._sinks.append(sink)

    def publish(self, events: Sequence[Event]) -> None:
        if not events:
            return
        with self._lock:
            subscriptions = list(self._subscriptions)
            sinks = list(self._sinks)
        for event in events:
            for sink in sinks:
                try:
                    sink(event)
                except Exception:  # a broken sink must not break a write that already committed
                    log.exception("event sink failed")
            for sub in subscriptions:
                if sub.wants(event):
                    with contextlib.suppress(RuntimeError):  # the subscriber's loop has closed
                        sub.loop.call_soon_threadsafe(sub._deliver, event)

    @contextlib.asynccontextmanager
    async def subscribe(self, tenant: str, user: str | None = None) -> AsyncIterator[Subscription]:
        sub = Subscription(tenant=tenant, user=user, loop=asyncio.get_running_loop())
        with self._lock:
            self._subscriptions.add(sub)
        try:
            yield sub
        finally:
            with self._lock:
                self._subscriptions.discard(sub)
