"""Maintenance passes run from the store's idle housekeeping: rarely, and never waiting for another writer."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime

__all__ = ["IdlePass", "without_waiting"]

# One pass: (connection, now as epoch seconds) -> (rows handled, whether more are due now).
Pass = Callable[[sqlite3.Connection, float], tuple[int, bool]]


@contextmanager
def without_waiting(conn: sqlite3.Connection) -> Iterator[None]:
    """busy_timeout 0 inside: a write lock held by another connection raises SQLITE_BUSY at once."""
    previous = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(previous)}")


class IdlePass:
    """Runs `run` from idle housekeeping at most once every `every` seconds of `clock`, again at once while
    it reports a backlog, and later (not now) while another connection holds the write lock."""

    def __init__(self, run: Pass, every: float, clock: Callable[[], datetime]) -> None:
        self.run = run
        self.every = every
        self.clock = clock
        self._last: float | None = None

    def step(self, conn: sqlite3.Connection) -> bool:
        """Run if a pass is due; True while a backlog remains for the next idle step."""
        now = self.clock().timestamp()
        # A clock that went back counts as due: otherwise it would stall the pass until it caught up again.
        if conn.in_transaction or (self._last is not None and self._last <= now < self._last + self.every):
            return False
        self._last = now
        try:
            _, more = self.run(conn, now)
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode & 0xFF not in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                raise
            # Housekeeping never waits for another process's write: it tries again on a later idle step.
            self._last = None
            return False
        if more:
            self._last = None
        return more
