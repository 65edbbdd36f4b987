"""Bounded retention of 'retrieved' events: high-volume telemetry, folded into counts once old.

Every retrieval appends one event (action 'retrieved', no learning, data {"ids": [...], "count": n}). Kept
forever they would outgrow everything else and slow the metrics that count them. Once older than a retention
(30 days by default) they are folded into `retrieval_counts` — per tenant, user and hour, the number of
retrievals and of those that returned something — and deleted. Both happen in one transaction per batch, with
the same predicate, so a pass killed at any point has either moved a batch whole or not at all, and running it
again finds nothing twice. The metrics (`service.SqlServiceStore.metric_rows`) add the counts to the live
events, so totals, series and hit rates do not change. The learnings' own events (the audit trail, the
history of each learning) are never touched: only 'retrieved' events without a learning are compacted.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from ..retention import COMPACT_EVERY, COUNTER_BUCKET
from .dialect import Connection, dialect_of
from .idle_pass import IdlePass, without_waiting
from .transactions import write_transaction

__all__ = ["COMPACT_EVERY", "compact_retrievals", "retrieval_compactor"]

# Events folded per transaction: a long backlog (the first pass after an upgrade) never holds the write lock
# for long, and continues on the next idle step.
_BATCH = 10_000

# Which events a pass folds: old retrievals that belong to no learning (the partial index covers the rest).
_DUE = "action = 'retrieved' AND learning_id IS NULL AND at < ?"


def compact_retrievals(conn: Connection, now: float, retention: float, batch: int = _BATCH) -> tuple[int, bool]:
    """One write transaction: fold up to about `batch` retrieval events older than `retention` seconds into
    `retrieval_counts` and delete them. Returns (events folded, whether more are due now). Writes nothing, and
    takes no lock, when nothing is due: an idle process stays read-only. Raises at once (SQLite: SQLITE_BUSY),
    rather than waiting, while another connection writes."""
    cutoff = now - retention
    if conn.execute(f"SELECT 1 FROM events WHERE {_DUE} LIMIT 1", (cutoff,)).fetchone() is None:
        return 0, False
    with without_waiting(conn), write_transaction(conn):
        # The batch ends at the time of its last event (ties included), so both statements below select the
        # same events by the same predicate, in this one snapshot.
        row = conn.execute(
            f"SELECT at FROM events WHERE {_DUE} ORDER BY at LIMIT 1 OFFSET ?", (cutoff, batch - 1)
        ).fetchone()
        more = row is not None
        upto = cutoff if row is None else row[0]
        where = f"{_DUE} AND at <= ?"
        dialect = dialect_of(conn)
        hit = f"CASE WHEN COALESCE({dialect.json_number('data', 'count')}, 0) > 0 THEN 1 ELSE 0 END"
        conn.execute(
            "INSERT INTO retrieval_counts (tenant, user_id, bucket, retrievals, hits) "
            f"SELECT tenant, user_id, {dialect.whole(f'at / {COUNTER_BUCKET}')} * {COUNTER_BUCKET}, COUNT(*), "
            f"SUM({hit}) FROM events WHERE {where} GROUP BY 1, 2, 3 "
            "ON CONFLICT (tenant, user_id, bucket) DO UPDATE SET "
            "retrievals = retrieval_counts.retrievals + excluded.retrievals, "
            "hits = retrieval_counts.hits + excluded.hits",
            (cutoff, upto),
        )
        folded = conn.execute(f"DELETE FROM events WHERE {where}", (cutoff, upto)).rowcount
    return int(folded), more


def retrieval_compactor(retention: timedelta, clock: Callable[[], datetime]) -> IdlePass:
    """`compact_retrievals` from the store's idle housekeeping, at most once every `COMPACT_EVERY` seconds."""
    seconds = retention.total_seconds()
    return IdlePass(lambda conn, now: compact_retrievals(conn, now, seconds), COMPACT_EVERY, clock)
