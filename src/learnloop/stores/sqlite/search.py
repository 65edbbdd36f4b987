"""Full-text search over FTS5, restricted to the caller's partitions inside the index."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from ...models import Filters, Scope
from ...terms import query_terms
from .rows import scope_token

__all__ = ["match_expression", "partition_keys", "text_search"]

# bm25 column weights: text, topic, tags, scope_token (the scope column must not score).
_BM25 = "bm25(learnings_fts, 1.0, 0.6, 0.6, 0.0)"


def partition_keys(scope: Scope, include_global: bool) -> list[tuple[str, str]]:
    """(tenant, user_id) partitions a scope searches: its user's, and the tenant's global one."""
    keys = [(scope.tenant, scope.user or "")]
    if include_global and scope.user is not None:
        keys.append((scope.tenant, ""))
    return keys


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def match_expression(text: str, *, prefix: bool = False) -> str | None:
    """An FTS5 expression matching any content word of `text` (prefix matches for search boxes)."""
    terms = query_terms(text)
    if not terms:
        return None
    suffix = "*" if prefix else ""
    return " OR ".join(_quote(t) + suffix for t in terms)


def text_search(
    conn: sqlite3.Connection,
    scope: Scope,
    keys: Sequence[tuple[str, str]],
    terms: Sequence[str],
    filters: Filters,
    limit: int,
) -> list[tuple[int, float]]:
    """(learning id, bm25 score — higher is better), best first."""
    if not terms:
        return []
    tokens = " OR ".join(scope_token(tenant, user or None) for tenant, user in keys)
    words = " OR ".join(_quote(t) for t in terms)
    expression = f"scope_token : ({tokens}) AND {{text topic tags}} : ({words})"
    # The tenant/user columns are checked as well as the scope token: isolation never rests on a hash alone.
    owners = sorted({user for _, user in keys})
    where = ["learnings_fts MATCH ?", "l.tenant = ?", f"l.user_id IN ({', '.join('?' for _ in owners)})"]
    params: list[Any] = [expression, scope.tenant, *owners]
    statuses = [s.value for s in filters.statuses]
    where.append(f"l.status IN ({', '.join('?' for _ in statuses)})")
    params += statuses
    if filters.namespace is not None:
        where.append("l.namespace = ?")
        params.append(filters.namespace)
    if filters.categories is not None:
        where.append(f"l.category IN ({', '.join('?' for _ in filters.categories)})")
        params += filters.categories
    if filters.types is not None:
        where.append(f"l.type IN ({', '.join('?' for _ in filters.types)})")
        params += [t.value for t in filters.types]
    rows = conn.execute(
        f"SELECT l.id, {_BM25} AS score FROM learnings_fts JOIN learnings l ON l.id = learnings_fts.rowid "
        f"WHERE {' AND '.join(where)} ORDER BY score LIMIT ?",
        [*params, limit],
    ).fetchall()
    return [(row[0], -row[1]) for row in rows]
