"""The rows behind a search's hits (see `stores.search.fusion`)."""

from __future__ import annotations

import functools

from ...models import Scope
from ..base import Candidate, Select
from ..candidate_pool import CandidatePool
from ..search.fusion import chosen_candidates
from . import review
from .dialect import Connection, dialect_of
from .rows import LEARNING_COLUMNS, learning_from_row
from .writes import visible_clause

__all__ = ["candidates"]


def candidates(conn: Connection, scope: Scope, pool: CandidatePool, select: Select | None) -> list[Candidate]:
    """The visible rows behind the hits of `pool` (built from what the partitions hold) as candidates: all of
    them, or (with `select`) only those `select` keeps, in its order, so whole rows are read for those only."""
    chosen = chosen_candidates(pool, select)
    if not chosen:
        return []
    clause, params = visible_clause(scope, by_id=True)
    ids = [c.id for c in chosen]
    marks = ", ".join("?" for _ in chosen)
    # The rows and their open conflict links are read together (one round trip to a server, not two); links of
    # a row that is not visible are dropped below with it.
    whole, links = dialect_of(conn).fetch_together(
        conn,
        [
            (
                f"SELECT {LEARNING_COLUMNS}, gate_version FROM learnings WHERE id IN ({marks}) AND {clause}",
                [*ids, *params],
            ),
            review.conflict_partners_query(scope, ids),
        ],
    )
    by_id = {row[0]: row for row in whole}
    kept = []
    for candidate in chosen:
        row = by_id.get(candidate.id)
        if row is not None:
            candidate.build = functools.partial(learning_from_row, row[:-1])
            candidate.gate_version = row[-1]
            kept.append(candidate)
    partners = review.partners_from_rows(links)
    _attach_conflicts(conn, scope, kept, {i: partners[i] for i in by_id if i in partners})
    return kept


def _attach_conflicts(conn: Connection, scope: Scope, kept: list[Candidate], partners: dict[int, list[int]]) -> None:
    """Give each kept candidate the live learnings it has an open possible-conflict link with: the block shows
    such pairs together, newer first, so the model sees that something changed."""
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
