"""Which partitions a scope searches, the rows behind their hits, and FTS5 expressions for listings."""

from __future__ import annotations

import functools
import sqlite3

from ...models import Scope, Status
from ...terms import query_terms
from ..base import Candidate, Select
from . import review
from .partition import RankingColumns
from .rows import LEARNING_COLUMNS, learning_from_row
from .writes import visible_clause

__all__ = ["Hit", "Hits", "Ranking", "candidates", "match_expression", "partition_keys"]

# A learning's vector similarity and rank, keyword score and rank (None where that search missed it).
# … and the share of the query's keyword weight (IDF) the learning holds (None: the query had no keywords).
Hit = tuple[float | None, int | None, float | None, int | None, float | None]
Hits = dict[int, Hit]
# What ranking reads of a hit, from the in-memory partitions: status, hits, updated_at, tags.
Ranking = dict[int, RankingColumns]


def partition_keys(scope: Scope, include_global: bool) -> list[tuple[str, str]]:
    """(tenant, user_id) partitions a scope searches: its user's, and the tenant's global one."""
    keys = [(scope.tenant, scope.user or "")]
    if include_global and scope.user is not None:
        keys.append((scope.tenant, ""))
    return keys


def candidates(
    conn: sqlite3.Connection, scope: Scope, found: Hits, ranking: Ranking, select: Select | None
) -> list[Candidate]:
    """The visible rows behind `found` as candidates, built from what the partitions hold (`ranking`): all of
    them, or (with `select`) only those `select` keeps, in its order, so whole rows are read for those only."""
    pool = [_candidate(learning_id, *columns, found) for learning_id in found if (columns := ranking.get(learning_id))]
    chosen = pool if select is None else list(select(pool))
    if not chosen:
        return []
    clause, params = visible_clause(scope, by_id=True)
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
    _attach_conflicts(conn, scope, kept)
    return kept


def _attach_conflicts(conn: sqlite3.Connection, scope: Scope, kept: list[Candidate]) -> None:
    """Give each kept candidate the live learnings it has an open possible-conflict link with: the block shows
    such pairs together, newer first, so the model sees that something changed."""
    partners = review.conflict_partners(conn, scope, [c.id for c in kept])
    if not partners:
        return
    wanted = sorted({i for ids in partners.values() for i in ids})
    clause, params = visible_clause(scope, by_id=True)
    marks = ", ".join("?" for _ in wanted)
    rows = conn.execute(
        f"SELECT {LEARNING_COLUMNS} FROM learnings WHERE id IN ({marks}) AND {clause} AND status != 'deprecated'",
        [*wanted, *params],
    ).fetchall()
    live = {row[0]: learning_from_row(row) for row in rows}
    for candidate in kept:
        found = tuple(live[i] for i in partners.get(candidate.id, ()) if i in live)
        if found:
            candidate.conflicts = found


def _candidate(
    learning_id: int,
    status: Status,
    hits: int,
    updated_at: float,
    tags: list[str],
    said_at: float,
    event_at: float,
    event_until: float,
    found: Hits,
) -> Candidate:
    # Positional, in `Candidate` field order: this runs for every hit of every query.
    candidate = Candidate(learning_id, status, hits, updated_at, tags, *found[learning_id])
    candidate.said_at, candidate.event_at, candidate.event_until = said_at, event_at, event_until
    return candidate


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def match_expression(text: str, *, prefix: bool = False) -> str | None:
    """An FTS5 expression matching any content word of `text` (prefix matches for search boxes)."""
    terms = query_terms(text)
    if not terms:
        return None
    suffix = "*" if prefix else ""
    return " OR ".join(_quote(t) + suffix for t in terms)
