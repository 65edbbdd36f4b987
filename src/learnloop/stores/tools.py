"""The storage contract of the tool layer (its records are in `learnloop.tools.base`).

Like the learnings `Store`, every read and write is bound to a `Scope` (tenant, user): per-user rows
(signals, learned pairs, statistics, template examples, privacy choices) carry the user; shared knowledge
(templates and recovery patterns learned from everyone, with no user on them) is owned by the tenant;
global insights are anonymised aggregates. A backend applies one `record_call` in one transaction —
signal row, learned pair, statistics, template, recovery pattern — and returns only once it is durable.
Decisions (signal class, learning weight, privacy, fingerprints, what the write gate redacts, the shape a
shared row keeps of a call) are made before the call, in `learnloop.tools`; the backend stores, indexes and
looks up. A backend offers it as `StoreParts.tools` (see `learnloop.stores.parts`); the engine holds it as
`Engine.tools`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from ..models import Scope
from ..tools.base import (
    CallRecord,
    CatalogEntry,
    EvidenceRequest,
    InsightDraft,
    InsightInputs,
    LearningPolicy,
    ObservationRecord,
    ToolEvidence,
    ToolKnowledge,
)
from ..tools.models import (
    Insight,
    LearnedPair,
    PrivacyMode,
    QueryTemplate,
    RecoveryPattern,
    SeedTemplate,
    SignalKind,
    SignalReceipt,
    ToolInfo,
    ToolSignal,
    ToolStat,
)
from ..tools.shapes import Shaper
from .base import Vector

__all__ = ["ToolStore"]


@runtime_checkable
class ToolStore(Protocol):
    """Where tool knowledge lives. Methods taking a `Scope` never read or change another tenant's rows,
    and a user scope never another user's (except learned pairs read for routing when `share` is set)."""

    # -- catalog ---------------------------------------------------------------------------------------

    async def put_tools(self, tenant: str, entries: Sequence[CatalogEntry], now: datetime) -> None: ...

    async def remove_tools(self, tenant: str, names: Sequence[str]) -> int: ...

    async def list_tools(
        self, tenant: str, *, server: str | None = None, embedding_model: str | None = None
    ) -> list[ToolInfo]:
        """The catalog; `embedded` tells whether a tool has a description vector (of `embedding_model`)."""
        ...

    # -- signals ---------------------------------------------------------------------------------------

    async def record_call(
        self, scope: Scope, record: CallRecord, policy: LearningPolicy, now: datetime
    ) -> SignalReceipt:
        """Store the signal and everything learned from it at once, in one transaction."""
        ...

    async def record_observation(self, scope: Scope, record: ObservationRecord, now: datetime) -> int: ...

    async def flush_weak(self, tenant: str, policy: LearningPolicy, now: datetime, limit: int = 500) -> int:
        """Fold queued weak signals into the learned pairs; returns how many were applied."""
        ...

    async def pending_weak(self, tenant: str) -> int: ...

    async def signals(
        self,
        scope: Scope,
        *,
        session: str | None = None,
        kind: SignalKind | None = None,
        after: int = 0,
        limit: int = 100,
    ) -> list[ToolSignal]: ...

    # -- routing ---------------------------------------------------------------------------------------

    async def evidence(self, scope: Scope, request: EvidenceRequest) -> list[ToolEvidence]:
        """The `pool` tools with the best weighted sum of description similarity, keyword match and learned
        evidence, best first, with each part."""
        ...

    async def popular_tools(self, scope: Scope, limit: int) -> list[ToolEvidence]:
        """Tools by successful uses (then catalog order), for a session with no context yet."""
        ...

    async def learned_pairs(
        self, scope: Scope, now: datetime, *, tool: str | None = None, limit: int = 100
    ) -> list[LearnedPair]: ...

    # -- templates, recovery, statistics -----------------------------------------------------------------

    async def templates(
        self,
        scope: Scope,
        now: datetime,
        *,
        intent: str | None = None,
        tool: str | None = None,
        vector: Vector | None = None,
        include_archived: bool = False,
    ) -> list[QueryTemplate]: ...

    async def seed_templates(self, tenant: str, seeds: Sequence[tuple[SeedTemplate, str]], now: datetime) -> int:
        """Add (seed, signature) templates that do not exist yet; returns how many were added."""
        ...

    async def template_feedback(
        self, scope: Scope, template_ids: Sequence[int], score: float, now: datetime
    ) -> list[QueryTemplate]: ...

    async def recovery_patterns(
        self,
        scope: Scope,
        now: datetime,
        *,
        fingerprint: str | None = None,
        error_type: str | None = None,
        tool: str | None = None,
        include_archived: bool = False,
    ) -> list[RecoveryPattern]: ...

    async def tool_stats(self, scope: Scope, *, intent: str | None = None) -> list[ToolStat]: ...

    async def knowledge(
        self,
        scope: Scope,
        vector: Vector | None,
        now: datetime,
        *,
        failures_since: datetime,
        template_similarity: float = 0.45,
        intent: str | None = None,
        recovery_confidence: float = 0.8,
        limit: int = 20,
    ) -> ToolKnowledge:
        """What the context sections may show for a query: active templates about it (query direction at
        least `template_similarity` similar, or the same `intent`), recovery patterns with at least
        `recovery_confidence`, the user's failures since `failures_since`, insights — `limit` of each at
        most, read in one go because it runs on every `retrieve_context`."""
        ...

    def may_know(self, tenant: str) -> bool:
        """False when the tenant had nothing `knowledge` would return as of the store's latest read (decided
        without I/O), so retrievals of the many tenants with no tool knowledge skip asking."""
        ...

    # -- insights and maintenance ----------------------------------------------------------------------

    async def insight_inputs(self, tenant: str, since: datetime, now: datetime) -> InsightInputs: ...

    async def put_insights(
        self, tenant: str, insights: Sequence[InsightDraft], now: datetime, *, stale_before: datetime
    ) -> tuple[int, int]:
        """Upsert insights and delete those not refreshed since `stale_before`: (written, pruned)."""
        ...

    async def insights(self, tenant: str, now: datetime, *, type: str | None = None) -> list[Insight]: ...

    async def maintain(self, tenant: str, now: datetime) -> tuple[int, int, int]:
        """Archive templates and recovery patterns, prune learned pairs, whose decayed confidence fell
        below `decay.ARCHIVE_BELOW`: (templates, recoveries, pairs)."""
        ...

    async def scrub_shared(self, tenant: str, shaper: Shaper) -> int:
        """Reduce the tenant's shared templates, recovery patterns and insights to shapes, as `shaper` makes
        them (rows written before shapes, or under another gate); returns how many rows changed. Idempotent."""
        ...

    # -- privacy -----------------------------------------------------------------------------------------

    async def privacy(self, tenant: str, user: str) -> PrivacyMode | None: ...

    async def set_privacy(self, tenant: str, user: str, mode: PrivacyMode, now: datetime) -> None: ...
