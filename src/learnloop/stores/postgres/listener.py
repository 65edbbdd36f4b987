"""Events across processes: a thread that LISTENs on the channel the `events` table's trigger notifies
(migration 0002) and rings this process's event bus, so a Server-Sent Events stream wakes when any process
commits an event for its tenant, not at its next poll.

The notification is only a doorbell: it carries the tenant and user, and the woken stream reads the committed
events from the table after the last sequence number it sent (as it does on `Last-Event-ID`). PostgreSQL
delivers a notification at commit, never for a rolled-back write, and may fold identical ones of one
transaction into one. A lost connection is opened again (with a growing pause); after every (re)connect every
stream is rung once, since a commit in the gap rang nobody.
"""

from __future__ import annotations

import contextlib
import logging
import select
import socket
import threading
from collections.abc import Callable
from typing import Any

import psycopg

__all__ = ["CHANNEL", "EventListener", "Ring"]

log = logging.getLogger("learnloop.events")

CHANNEL = "learnloop_events"
_SEPARATOR = "\x1f"
_MAX_PAUSE = 5.0

# Called with the tenant and user of committed events (user None: tenant-wide, or every user of it); tenant
# None: everything may have changed.
Ring = Callable[[str | None, str | None], None]


class EventListener:
    """Started once per store (`PostgresStore.watch_events`), stopped by `close` (prompt: a socket pair wakes
    the thread out of its wait)."""

    def __init__(self, url: str, ring: Ring) -> None:
        self._url = url
        self._ring = ring
        self._wake_read, self._wake_write = socket.socketpair()
        self._stopped = threading.Event()
        self._connected = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="learnloop-postgres-listen", daemon=True)
        self._thread.start()

    def wait_listening(self, timeout: float) -> bool:
        """Whether the thread is listening (within `timeout` seconds): a commit after that rings."""
        return self._connected.wait(timeout)

    def close(self) -> None:
        if self._stopped.is_set():
            return
        self._stopped.set()
        with contextlib.suppress(OSError):
            self._wake_write.send(b"x")
        self._thread.join()
        self._wake_read.close()
        self._wake_write.close()

    def _serve(self) -> None:
        pause = 0.1
        while not self._stopped.is_set():
            try:
                with psycopg.connect(
                    self._url, autocommit=True, connect_timeout=10, application_name="learnloop-listen"
                ) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self._connected.set()
                    pause = 0.1
                    self._ring(None, None)  # a commit while nobody listened rang nobody
                    self._listen(conn)
            except psycopg.Error as exc:
                self._connected.clear()
                if self._stopped.is_set():
                    return
                log.warning("event listener lost its PostgreSQL connection (%s); reconnecting", exc)
                self._stopped.wait(pause)
                pause = min(pause * 2, _MAX_PAUSE)

    def _listen(self, conn: psycopg.Connection[Any]) -> None:
        pgconn = conn.pgconn
        while not self._stopped.is_set():
            ready, _, _ = select.select([pgconn.socket, self._wake_read.fileno()], [], [])
            if self._wake_read.fileno() in ready:
                return
            pgconn.consume_input()
            if pgconn.status != psycopg.pq.ConnStatus.OK:
                raise psycopg.OperationalError("the listening connection was closed")
            while (notice := pgconn.notifies()) is not None:
                if notice.relname.decode() != CHANNEL:
                    continue
                tenant, _, user = notice.extra.decode("utf-8", "replace").partition(_SEPARATOR)
                try:
                    self._ring(tenant, user or None)
                except Exception:  # a broken bell must not stop the listening
                    log.exception("ringing the event bus failed")
