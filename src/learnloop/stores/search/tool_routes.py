"""A route's evidence from one tenant's `ToolIndex`, as the backend hands it to `learnloop.tools.router`."""

from __future__ import annotations

from collections.abc import Mapping

from ...models import Scope
from ...tools.base import EvidenceRequest, ToolEvidence
from .tool_index import ToolIndex

__all__ = ["evidence", "popular"]


def evidence(index: ToolIndex, scope: Scope, request: EvidenceRequest) -> list[ToolEvidence]:
    """The best tools for the request's query: catalog similarity, keywords and learned pairs — every user's
    pairs when the request shares them (or the scope is tenant-wide), else the shared ones and the user's own."""
    owners = None if request.share or scope.user is None else ["", scope.user]
    hits = index.hits(
        request.vector,
        request.terms,
        weights=request.weights,
        owners=owners,
        now=request.now.timestamp(),
        floor=request.learned_floor,
        pool=request.pool,
        use_learned=request.use_learned,
        support=request.learned_support,
        familiarity=request.familiarity,
    )
    return [
        _evidence(index, h.position, h.description_similarity, h.keyword, h.learned, h.learned_uses, h.unfamiliar)
        for h in hits
    ]


def popular(index: ToolIndex, uses: Mapping[str, int], limit: int) -> list[ToolEvidence]:
    """The catalog's most used tools (`uses`: successes per tool name), ties in catalog order: what a route
    without a query can offer."""
    order = sorted(range(len(index.rows)), key=lambda i: (-uses.get(index.rows[i].name, 0), i))[:limit]
    return [_evidence(index, i, 0.0, 0.0, 0.0, int(uses.get(index.rows[i].name, 0))) for i in order]


def _evidence(
    index: ToolIndex,
    position: int,
    description: float,
    keyword: float,
    learned: float,
    uses: int,
    unfamiliar: float = 0.0,
) -> ToolEvidence:
    row = index.rows[position]
    return ToolEvidence(
        name=row.name,
        server=row.server,
        description=row.description,
        input_schema=row.input_schema,
        description_similarity=description,
        keyword=keyword,
        learned=learned,
        learned_uses=uses,
        unfamiliar=unfamiliar,
    )
