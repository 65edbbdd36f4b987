"""The rows behind a search's hits (see `stores.search.fusion`)."""

from __future__ import annotations

import functools
from typing import Any

from ...models import Learning, Scope, Status
from ..base import Candidate, Select
from ..candidate_pool import CandidatePool
from ..search.fusion import chosen_candidates
from . import review
from .dialect import Connection, dialect_of
from .row_cache import RowCache, served
from .rows import LEARNING_COLUMNS, LEARNING_ROWS, learning_from_row
from .writes import visible_by_id, visible_clause

__all__ = ["candidates"]


def candidates(
    conn: Connection, scope: Scope, pool: CandidatePool, select: Select | None, cache: RowCache | None = None
) -> list[Candidate]:
    """The visible rows behind the hits of `pool` (built from what the partitions hold) as candidates: all of
    them, or (with `select`) only those `select` keeps, in its order, so whole rows are read for those only.
    With `cache` (at the stamp of this search), rows and links it holds are not read again."""
    chosen = chosen_candidates(pool, select)
    if not chosen:
        return []
    if cache is not None and select is not None:  # a retrieval's few kept (a caller wanting every hit: not kept)
        return _cached(conn, scope, chosen, cache)
    clause, params = visible_clause(scope, by_id=True)
    ids = [c.id for c in chosen]
    marks = ", ".join("?" for _ in chosen)
    # The rows and their open conflict links are read together (one round trip to a server, not two); links of
    # a row that is not visible are dropped below with it.
    whole, links = dialect_of(conn).fetch_together(
        conn,
        [
            (
                f"SELECT {LEARNING_COLUMNS}, gate_version FROM {LEARNING_ROWS} WHERE id IN ({marks}) AND {clause}",
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
    live = visible_by_id(conn, scope, wanted, "!= 'deprecated'")
    for candidate in kept:
        found = tuple(live[i] for i in partners.get(candidate.id, ()) if i in live)
        if found:
            candidate.conflicts = found


def _cached(conn: Connection, scope: Scope, chosen: list[Candidate], cache: RowCache) -> list[Candidate]:
    """`candidates` through the row cache: what it lacks is read (and kept), the rest comes from it; the same
    rows, links and order as the statements above would give at the cache's stamp."""
    ids = [c.id for c in chosen]
    # What this call uses, whatever the cache keeps of it (it may drop its oldest entries as it fills).
    rows = {i: held for i in ids if (held := cache.row(i)) is not None}
    partners = {i: links for i in ids if (links := cache.partners(scope, i)) is not None}
    unread = [i for i in ids if i not in rows]
    unlinked = [i for i in ids if i not in partners]
    if unread or unlinked:
        statements = [_rows_query(scope, unread)] if unread else []
        if unlinked:
            statements.append(review.conflict_partners_query(scope, unlinked))
        found = dialect_of(conn).fetch_together(conn, statements)
        if unread:
            rows.update(_kept_rows(cache, found[0]))
        if unlinked:
            read = review.partners_from_rows(found[-1])
            for i in unlinked:
                partners[i] = tuple(read.get(i, ()))
                cache.put_partners(scope, i, partners[i])
    kept = []
    for candidate in chosen:
        held = rows.get(candidate.id)
        if held is not None and _visible(scope, held[0]):
            candidate.build = functools.partial(served, held[0])
            candidate.gate_version = held[1]
            kept.append(candidate)
    wanted = sorted({p for c in kept for p in partners[c.id]})
    if not wanted:
        return kept
    others = {i: held for i in wanted if (held := cache.row(i)) is not None}
    unread = [i for i in wanted if i not in others]
    if unread:
        sql, params = _rows_query(scope, unread)
        others.update(_kept_rows(cache, conn.execute(sql, params).fetchall()))
    live = {
        i: learning
        for i, (learning, _) in others.items()
        if _visible(scope, learning) and learning.status is not Status.DEPRECATED
    }
    for candidate in kept:
        conflicts = tuple(served(live[i]) for i in partners[candidate.id] if i in live)
        if conflicts:
            candidate.conflicts = conflicts
    return kept


def _rows_query(scope: Scope, ids: list[int]) -> tuple[str, list[Any]]:
    clause, params = visible_clause(scope, by_id=True)
    marks = ", ".join("?" for _ in ids)
    return f"SELECT {LEARNING_COLUMNS}, gate_version FROM {LEARNING_ROWS} WHERE id IN ({marks}) AND {clause}", [
        *ids,
        *params,
    ]


def _kept_rows(cache: RowCache, rows: list[Any]) -> dict[int, tuple[Learning, str | None]]:
    """Rows read (with their gate version last), decoded and kept in the cache."""
    decoded = {}
    for row in rows:
        held = decoded[row[0]] = (learning_from_row(row[:-1]), row[-1])
        cache.put_row(*held)
    return decoded


def _visible(scope: Scope, learning: Learning) -> bool:
    """`visible_clause` on a decoded row: the scope's tenant, and its user's or the tenant's global rows."""
    if learning.tenant != scope.tenant:
        return False
    return scope.user is None or learning.user is None or learning.user == scope.user
