"""Which partitions a scope searches, the rows behind their hits, and FTS5 expressions for listings."""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Callable

from ...models import Learning, Scope, Status
from ...terms import query_terms
from ..base import Candidate, Select
from .connection import read_transaction
from .rows import LEARNING_COLUMNS, learning_from_row
from .writes import visible_clause

__all__ = ["Hit", "Hits", "candidates", "match_expression", "partition_keys"]

# A learning's vector similarity and rank, keyword score and rank (None where that search missed it).
Hit = tuple[float | None, int | None, float | None, int | None]
Hits = dict[int, Hit]

# What ranking reads of every hit (see `_candidate`); whole rows are read only for the ones it keeps.
_RANKING_COLUMNS = "id, status, hits, updated_at, tags"
_STATUSES = {status.value: status for status in Status}


def partition_keys(scope: Scope, include_global: bool) -> list[tuple[str, str]]:
    """(tenant, user_id) partitions a scope searches: its user's, and the tenant's global one."""
    keys = [(scope.tenant, scope.user or "")]
    if include_global and scope.user is not None:
        keys.append((scope.tenant, ""))
    return keys


def candidates(conn: sqlite3.Connection, scope: Scope, found: Hits, select: Select | None) -> list[Candidate]:
    """The visible rows behind `found` as candidates: all of them with their whole rows, or (with `select`)
    only those `select` keeps, in its order, after it ranked the lot on a few columns."""
    if not found:
        return []
    clause, params = visible_clause(scope, by_id=True)
    ids = list(found)
    marks = ", ".join("?" for _ in ids)
    if select is None:
        rows = conn.execute(
            f"SELECT {LEARNING_COLUMNS} FROM learnings WHERE id IN ({marks}) AND {clause}", [*ids, *params]
        ).fetchall()
        # Column positions in LEARNING_COLUMNS: 0 id, 8 tags, 9 status, 11 hits, 25 updated_at.
        return [
            _candidate(row[0], row[9], row[11], row[25], row[8], found, functools.partial(learning_from_row, row))
            for row in rows
        ]
    # One snapshot for both reads: the whole rows say what `select` ranked on.
    with read_transaction(conn):
        rows = conn.execute(
            f"SELECT {_RANKING_COLUMNS} FROM learnings WHERE id IN ({marks}) AND {clause}", [*ids, *params]
        ).fetchall()
        chosen = list(select([_candidate(row[0], row[1], row[2], row[3], row[4], found) for row in rows]))
        if not chosen:
            return []
        marks = ", ".join("?" for _ in chosen)
        whole = conn.execute(
            f"SELECT {LEARNING_COLUMNS} FROM learnings WHERE id IN ({marks}) AND {clause}",
            [*(c.id for c in chosen), *params],
        ).fetchall()
    by_id = {row[0]: row for row in whole}
    kept = []
    for candidate in chosen:
        row = by_id.get(candidate.id)
        if row is not None:
            candidate.build = functools.partial(learning_from_row, row)
            kept.append(candidate)
    return kept


def _candidate(
    learning_id: int,
    status: str,
    hits: int,
    updated_at: float,
    tags: str,
    found: Hits,
    build: Callable[[], Learning] | None = None,
) -> Candidate:
    # Positional, in `Candidate` field order: this runs for every hit of every query.
    return Candidate(
        learning_id,
        _STATUSES[status],
        hits,
        updated_at,
        [] if tags == "[]" else json.loads(tags),
        *found[learning_id],
        build,
    )


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def match_expression(text: str, *, prefix: bool = False) -> str | None:
    """An FTS5 expression matching any content word of `text` (prefix matches for search boxes)."""
    terms = query_terms(text)
    if not terms:
        return None
    suffix = "*" if prefix else ""
    return " OR ".join(_quote(t) + suffix for t in terms)
