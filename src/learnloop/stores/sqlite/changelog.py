"""Bounded retention of `vector_changes`, the log every process replays to keep its partitions current.

The log only serves processes catching up, so its rows are pruned once older than a retention (an hour by
default). Rows carry no time of their own: stamping each would cost every write. Instead each prune pass
records a mark in `vector_change_marks` ("every change up to `seq` existed at `at`"), and the rows at or
below the newest mark older than the retention go; a row is thus kept at least the retention and at most
the retention plus the interval between passes. The highest seq pruned is recorded in store_meta
('changes_pruned_through') in the same transaction, so a reader that has not replayed that far knows the
log no longer covers its gap and loads again from the learnings table.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from .connection import write_transaction

__all__ = ["LOG_BOUNDS", "PRUNE_EVERY", "ChangeLogPruner", "prune_changes"]

# Seconds between prune passes of one process: each pass is one short write transaction, and the log grows
# by at most this much beyond the retention.
PRUNE_EVERY = 300.0
# Rows deleted per transaction: a pass over a long backlog (the first after an upgrade) never holds the
# write lock for long, and continues on the next idle step.
_BATCH = 10_000

# (newest seq, highest seq pruned, forget epoch) in one statement; the max is the newest seq even when
# every row has been pruned (seq is AUTOINCREMENT, so new rows always come after the pruned ones).
LOG_BOUNDS = (
    "SELECT MAX(COALESCE((SELECT MAX(seq) FROM vector_changes), 0), p.value), p.value, f.value "
    "FROM store_meta AS p, store_meta AS f WHERE p.key = 'changes_pruned_through' AND f.key = 'forget_epoch'"
)

# Whether a pass has anything to do: changes newer than the newest mark, or rows under a mark old enough.
_WORK_DUE = (
    "SELECT EXISTS (SELECT 1 FROM vector_changes WHERE seq > (SELECT COALESCE(MAX(seq), 0) FROM vector_change_marks)) "
    "OR EXISTS (SELECT 1 FROM vector_changes WHERE seq <= (SELECT MAX(seq) FROM vector_change_marks WHERE at <= ?))"
)


def prune_changes(conn: sqlite3.Connection, now: float, retention: float, batch: int = _BATCH) -> tuple[int, bool]:
    """One write transaction: mark the newest seq as of `now`, then delete up to `batch` rows covered by a mark
    older than `retention` seconds. Returns (rows deleted, whether more are due now). Writes nothing, and
    takes no lock, when there is nothing to mark or delete: an idle process stays read-only. Raises
    SQLITE_BUSY at once, rather than waiting, while another connection writes."""
    old_enough = now - retention
    if not conn.execute(_WORK_DUE, (old_enough,)).fetchone()[0]:
        return 0, False
    with _without_waiting(conn), write_transaction(conn):
        newest = conn.execute(LOG_BOUNDS).fetchone()[0]
        conn.execute(
            "INSERT INTO vector_change_marks (seq, at) "
            "SELECT ?1, ?2 WHERE ?1 > (SELECT COALESCE(MAX(seq), 0) FROM vector_change_marks)",
            (newest, now),
        )
        cutoff = conn.execute("SELECT MAX(seq) FROM vector_change_marks WHERE at <= ?", (old_enough,)).fetchone()[0]
        if cutoff is None:
            return 0, False
        conn.execute("DELETE FROM vector_change_marks WHERE seq < ?", (cutoff,))  # superseded by the cutoff mark
        last = conn.execute(
            "SELECT MAX(seq) FROM (SELECT seq FROM vector_changes WHERE seq <= ? ORDER BY seq LIMIT ?)",
            (cutoff, batch),
        ).fetchone()[0]
        if last is None:
            return 0, False
        deleted = conn.execute("DELETE FROM vector_changes WHERE seq <= ?", (last,)).rowcount
        conn.execute(
            "UPDATE store_meta SET value = MAX(value, ?) WHERE key = 'changes_pruned_through'",
            (last,),
        )
    return int(deleted), last < cutoff


@contextmanager
def _without_waiting(conn: sqlite3.Connection) -> Iterator[None]:
    previous = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(previous)}")


class ChangeLogPruner:
    """Runs `prune_changes` from the store's idle housekeeping, at most once every `PRUNE_EVERY` seconds."""

    def __init__(self, retention: timedelta, clock: Callable[[], datetime]) -> None:
        self.retention = retention.total_seconds()
        self.clock = clock
        self._last: float | None = None

    def step(self, conn: sqlite3.Connection) -> bool:
        """Prune if a pass is due; True while a backlog remains for the next idle step."""
        now = self.clock().timestamp()
        # A clock that went back counts as due: otherwise it would stall pruning until it caught up again.
        if conn.in_transaction or (self._last is not None and self._last <= now < self._last + PRUNE_EVERY):
            return False
        self._last = now
        try:
            _, more = prune_changes(conn, now, self.retention)
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode & 0xFF not in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                raise
            # Housekeeping never waits for another process's write: it tries again on a later idle step.
            self._last = None
            return False
        if more:
            self._last = None
        return more
