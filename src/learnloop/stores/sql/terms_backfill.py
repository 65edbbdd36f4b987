"""Stored keyword terms (`learnings.index_terms`, see `stores.search.stored_terms`) for the learnings written
before the column existed, a batch per idle step, so their partitions load without tokenising them.

Until then a load tokenises those rows, so nothing waits for this pass. It walks learning ids up to the newest
one at migration time ('index_terms_unstored_through' in `store_meta`; later rows are written with their
terms) and records how far it got ('index_terms_checked_through'), so a process that starts later resumes there
and one that finds the walk done reads nothing more. Each row is written only if its text, topic and tags are
still those the terms were made from, and only where no terms are stored yet. The partitions need no change-log
entry: the terms equal what a load computes from the same row.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime

from ..search.stored_terms import stored_terms
from .dialect import Connection
from .idle_pass import IdlePass, without_waiting
from .transactions import write_transaction

__all__ = ["backfill_terms", "terms_backfiller"]

# Rows tokenised per idle step: a step took 12.5 ms at the median (47 ms at worst, load average 4) backfilling a
# 100k-learning file, 6.2 s in all; a job arriving meanwhile waits for the step.
_BATCH = 250
# Ids looked at per step at most, so a stretch of rows that already have terms costs one short index range.
_WINDOW = 5_000
_BOUND = "index_terms_unstored_through"
_CHECKED = "index_terms_checked_through"
# Seconds between passes once the walk is done (a no-op then, without reading the database).
_EVERY = 300.0


class _Cursor:
    """How far this process has walked (None: not read from the database yet) and where the walk ends."""

    def __init__(self) -> None:
        self.checked: int | None = None
        self.bound = 0


def backfill_terms(conn: Connection, cursor: _Cursor, batch: int = _BATCH) -> tuple[int, bool]:
    """Store the terms of the next rows without them; returns (rows written, whether more remain)."""
    if cursor.checked is None:
        meta = dict(conn.execute("SELECT key, value FROM store_meta WHERE key IN (?, ?)", (_BOUND, _CHECKED)))
        cursor.bound, cursor.checked = int(meta.get(_BOUND, 0)), int(meta.get(_CHECKED, 0))
    if cursor.checked >= cursor.bound:
        return 0, False
    end = min(cursor.checked + _WINDOW, cursor.bound)
    rows = conn.execute(
        "SELECT id, text, topic, tags FROM learnings WHERE id > ? AND id <= ? AND index_terms IS NULL "
        "ORDER BY id LIMIT ?",
        (cursor.checked, end, batch),
    ).fetchall()
    last = rows[-1][0] if len(rows) == batch else end
    written = 0
    with without_waiting(conn), write_transaction(conn, ordered=False):
        for learning_id, text, topic, tags in rows:
            written += conn.execute(
                "UPDATE learnings SET index_terms = ? WHERE id = ? AND index_terms IS NULL "
                "AND text = ? AND topic = ? AND tags = ?",
                (stored_terms(text, topic, json.loads(tags)), learning_id, text, topic, tags),
            ).rowcount
        conn.execute(
            "INSERT INTO store_meta (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value WHERE store_meta.value < excluded.value",
            (_CHECKED, last),
        )
    cursor.checked = last
    return written, last < cursor.bound


def terms_backfiller(clock: Callable[[], datetime]) -> IdlePass:
    """`backfill_terms` from the store's idle housekeeping: batch after batch until the walk is done."""
    cursor = _Cursor()
    return IdlePass(lambda conn, now: backfill_terms(conn, cursor), _EVERY, clock)
