"""Maintenance passes run from the store's idle housekeeping: rarely (`stores.retention.PassSchedule`), and
never waiting for another writer."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime

from ..retention import PassSchedule

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
    """Runs `run` from idle housekeeping when its `PassSchedule` says a pass is due, and later (not now)
    while another connection holds the write lock."""

    def __init__(self, run: Pass, every: float, clock: Callable[[], datetime]) -> None:
        self.run = run
        self.schedule = PassSchedule(every, clock)

    def step(self, conn: sqlite3.Connection) -> bool:
        """Run if a pass is due; True while a backlog remains for the next idle step."""
        now = self.schedule.start(busy=conn.in_transaction)
        if now is None:
            return False
        try:
            _, more = self.run(conn, now)
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode & 0xFF not in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                raise
            self.schedule.blocked()
            return False
        self.schedule.finished(more=more)
        return more
