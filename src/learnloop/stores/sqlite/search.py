"""Which partitions a scope searches, and FTS5 match expressions for text search in listings."""

from __future__ import annotations

from ...models import Scope
from ...terms import query_terms

__all__ = ["match_expression", "partition_keys"]


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
