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

from collections.abc import Callable
from datetime import datetime, timedelta

from ..retention import PRUNE_EVERY
from .dialect import Connection
from .idle_pass import IdlePass, without_waiting
from .transactions import write_transaction

__all__ = ["LOG_BOUNDS", "PRUNE_EVERY", "change_log_pruner", "prune_changes"]

# Rows deleted per transaction: a pass over a long backlog (the first after an upgrade) never holds the
# write lock for long, and continues on the next idle step.
_BATCH = 10_000

# (newest seq, highest seq pruned, forget epoch) in one statement; the larger is the newest seq even when
# every row has been pruned (seq never repeats, so new rows always come after the pruned ones).
LOG_BOUNDS = (
    "SELECT CASE WHEN c.newest > p.value THEN c.newest ELSE p.value END, p.value, f.value "
    "FROM (SELECT COALESCE(MAX(seq), 0) AS newest FROM vector_changes) AS c, store_meta AS p, store_meta AS f "
    "WHERE p.key = 'changes_pruned_through' AND f.key = 'forget_epoch'"
)

# Whether a pass has anything to do: changes newer than the newest mark, or rows under a mark old enough.
_WORK_DUE = (
    "SELECT EXISTS (SELECT 1 FROM vector_changes WHERE seq > (SELECT COALESCE(MAX(seq), 0) FROM vector_change_marks)) "
    "OR EXISTS (SELECT 1 FROM vector_changes WHERE seq <= (SELECT MAX(seq) FROM vector_change_marks WHERE at <= ?))"
)


def prune_changes(conn: Connection, now: float, retention: float, batch: int = _BATCH) -> tuple[int, bool]:
    """One write transaction: mark the newest seq as of `now`, then delete up to `batch` rows covered by a mark
    older than `retention` seconds. Returns (rows deleted, whether more are due now). Writes nothing, and
    takes no lock, when there is nothing to mark or delete: an idle process stays read-only. Raises at once
    (SQLite: SQLITE_BUSY), rather than waiting, while another connection writes."""
    old_enough = now - retention
    if not conn.execute(_WORK_DUE, (old_enough,)).fetchone()[0]:
        return 0, False
    with without_waiting(conn), write_transaction(conn):
        newest = conn.execute(LOG_BOUNDS).fetchone()[0]
        conn.execute(
            "INSERT INTO vector_change_marks (seq, at) "
            "SELECT ?, ? WHERE ? > (SELECT COALESCE(MAX(seq), 0) FROM vector_change_marks)",
            (newest, now, newest),
        )
        cutoff = conn.execute("SELECT MAX(seq) FROM vector_change_marks WHERE at <= ?", (old_enough,)).fetchone()[0]
        if cutoff is None:
            return 0, False
        conn.execute("DELETE FROM vector_change_marks WHERE seq < ?", (cutoff,))  # superseded by the cutoff mark
        last = conn.execute(
            "SELECT MAX(seq) FROM (SELECT seq FROM vector_changes WHERE seq <= ? ORDER BY seq LIMIT ?) AS batch",
            (cutoff, batch),
        ).fetchone()[0]
        if last is None:
            return 0, False
        deleted = conn.execute("DELETE FROM vector_changes WHERE seq <= ?", (last,)).rowcount
        conn.execute(
            "UPDATE store_meta SET value = ? WHERE key = 'changes_pruned_through' AND value < ?",
            (last, last),
        )
    return int(deleted), last < cutoff


def change_log_pruner(retention: timedelta, clock: Callable[[], datetime]) -> IdlePass:
    """`prune_changes` from the store's idle housekeeping, at most once every `PRUNE_EVERY` seconds."""
    seconds = retention.total_seconds()
    return IdlePass(lambda conn, now: prune_changes(conn, now, seconds), PRUNE_EVERY, clock)
