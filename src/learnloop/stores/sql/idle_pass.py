"""Maintenance passes run from the store's idle housekeeping: rarely (`stores.retention.PassSchedule`), and
never waiting for another writer."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime

from ..retention import PassSchedule
from .dialect import Connection, dialect_of

__all__ = ["IdlePass", "without_waiting"]

# One pass: (connection, now as epoch seconds) -> (rows handled, whether more are due now).
Pass = Callable[[Connection, float], tuple[int, bool]]


def without_waiting(conn: Connection) -> AbstractContextManager[None]:
    """Inside, a write lock held by another connection raises at once (an error the dialect calls `busy`)."""
    return dialect_of(conn).without_waiting(conn)


class IdlePass:
    """Runs `run` from idle housekeeping when its `PassSchedule` says a pass is due, and later (not now)
    while another connection holds the write lock."""

    def __init__(self, run: Pass, every: float, clock: Callable[[], datetime]) -> None:
        self.run = run
        self.schedule = PassSchedule(every, clock)

    def step(self, conn: Connection) -> bool:
        """Run if a pass is due; True while a backlog remains for the next idle step."""
        now = self.schedule.start(busy=conn.in_transaction)
        if now is None:
            return False
        try:
            _, more = self.run(conn, now)
        except Exception as exc:
            if not dialect_of(conn).busy(exc):
                raise
            self.schedule.blocked()
            return False
        self.schedule.finished(more=more)
        return more
