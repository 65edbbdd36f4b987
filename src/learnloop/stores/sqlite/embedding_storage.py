"""Learnings' embeddings written in an older layout (float32, or float16 before they were stored as int8;
see `stores.search.embeddings`) rewritten in place, a batch per idle step, so an older file shrinks too.

Readers take either form, so nothing waits for this pass. Each rewritten row is logged in `vector_changes` in
the same transaction, so every process's search partition (and the snapshots they save) takes the stored
values. How far the file has been checked is kept in `store_meta` ('embeddings_quantised_through', the highest
learning id; the float16 pass before it kept 'embeddings_checked_through', and a file it walked holds float16
rows behind that mark), so a pass that has reached the end looks only at newer rows. A new file has nothing to rewrite.
VACUUM, left to the operator, returns the freed pages to the file system.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from ..search.embeddings import embedding_blob, embedding_vector, is_quantised
from ..sql.dialect import Connection
from ..sql.idle_pass import IdlePass, without_waiting
from ..sql.transactions import write_transaction

__all__ = ["embedding_shrinker", "shrink_embeddings"]

_BATCH = 500
_CHECKED = "embeddings_quantised_through"
# Seconds between passes of one process once it has reached the end (new rows are written in int8).
_EVERY = 300.0


class _Cursor:
    """The highest learning id this process has checked (None: not read from the file yet)."""

    def __init__(self) -> None:
        self.checked: int | None = None
        self.stored = 0  # as recorded in the file


def shrink_embeddings(conn: Connection, cursor: _Cursor, batch: int = _BATCH) -> tuple[int, bool]:
    """Check the next `batch` learnings after the cursor; rewrite the float32 and float16 ones as int8 in one
    write transaction. Returns (rows rewritten, whether more remain)."""
    if cursor.checked is None:
        found = conn.execute("SELECT value FROM store_meta WHERE key = ?", (_CHECKED,)).fetchone()
        cursor.checked = cursor.stored = 0 if found is None else int(found[0])
    rows = conn.execute(
        "SELECT id, tenant, user_id, embedding FROM learnings WHERE id > ? ORDER BY id LIMIT ?",
        (cursor.checked, batch),
    ).fetchall()
    last = rows[-1][0] if rows else cursor.checked
    # A float32 blob the int8 layout cannot hold (a component not finite) stays as it is.
    wide = [
        (row, stored)
        for row in rows
        if row[3] is not None
        and not is_quantised(row[3])
        and (stored := embedding_blob(embedding_vector(row[3]))) != row[3]
    ]
    # Recorded with a rewrite, and once at the end of a walk (so the next process starts from there).
    if wide or (len(rows) < batch and last > cursor.stored):
        with without_waiting(conn), write_transaction(conn):
            for (learning_id, tenant, user_id, blob), stored in wide:
                changed = conn.execute(
                    "UPDATE learnings SET embedding = ? WHERE id = ? AND embedding = ?", (stored, learning_id, blob)
                ).rowcount
                if changed:
                    conn.execute(
                        "INSERT INTO vector_changes (tenant, user_id, learning_id) VALUES (?, ?, ?)",
                        (tenant, user_id, learning_id),
                    )
            conn.execute(
                "INSERT INTO store_meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = MAX(value, excluded.value)",
                (_CHECKED, last),
            )
        cursor.stored = last
    cursor.checked = last
    return len(wide), len(rows) == batch


def embedding_shrinker(clock: Callable[[], datetime]) -> IdlePass:
    """`shrink_embeddings` from the store's idle housekeeping: batch after batch while older rows remain,
    then at most once every five minutes."""
    cursor = _Cursor()
    return IdlePass(lambda conn, now: shrink_embeddings(conn, cursor), _EVERY, clock)
