"""Live fan-out of committed events: to SSE streams, activity pages and log sinks.

The event log in the store is the source of truth (history, replay with Last-Event-ID, other processes);
the bus only makes delivery immediate: inside this process by publishing, and from other processes by a ring
(PostgreSQL's LISTEN/NOTIFY, when the store offers it) that wakes the subscriptions to read the log.
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
    # Set by every delivered event and every ring of the doorbell (events another process committed).
    bell: asyncio.Event = field(default_factory=asyncio.Event)

    def wants(self, event: Event) -> bool:
        return event.tenant == self.tenant and (self.user is None or event.user in (None, self.user))

    def rung_by(self, tenant: str | None, user: str | None) -> bool:
        """Whether a ring for `tenant` (None: every tenant) and `user` (None: any user) concerns this one."""
        if tenant is None:
            return True
        return tenant == self.tenant and (self.user is None or user is None or user == self.user)

    def _deliver(self, event: Event) -> None:
        self.bell.set()
        try:
            self.queue.put_nowait(event)
        except asyncio.QueueFull:
            self.overflowed = True  # the reader replays from the event log instead

    def _ring(self) -> None:
        self.bell.set()

    async def wait(self, seconds: float) -> bool:
        """Whether an event or a ring came (within `seconds`); clears the bell."""
        try:
            await asyncio.wait_for(self.bell.wait(), seconds)
        except TimeoutError:
            return False
        self.bell.clear()
        return True

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
        # Started at the first subscription: rings the bus when another process commits (`watch`).
        self._watch: Callable[[Callable[[str | None, str | None], None]], object] | None = None
        self._watching = False

    def watch(self, start: Callable[[Callable[[str | None, str | None], None]], object]) -> None:
        """`start(ring)` is called once, at the first subscription, to have another process's commits ring
        the bus (the PostgreSQL store's LISTEN thread: `PostgresStore.watch_events`)."""
        self._watch = start

    def ring(self, tenant: str | None, user: str | None = None) -> None:
        """Wake the subscriptions concerned (tenant None: all): events were committed that this process did
        not publish. They read the event log; nothing is delivered through the queue. Any thread may call it."""
        with self._lock:
            subscriptions = list(self._subscriptions)
        for sub in subscriptions:
            if sub.rung_by(tenant, user):
                with contextlib.suppress(RuntimeError):  # the subscriber's loop has closed
                    sub.loop.call_soon_threadsafe(sub._ring)

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
            start, self._watching = (self._watch if not self._watching else None), True
        if start is not None:
            start(self.ring)
        try:
            yield sub
        finally:
            with self._lock:
                self._subscriptions.discard(sub)
