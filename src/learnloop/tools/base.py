"""The storage contract of the tool layer, and the records its writes take.

Like the learnings `Store`, every read and write is bound to a `Scope` (tenant, user): per-user rows
(signals, learned pairs, statistics, template examples, privacy choices) carry the user; shared knowledge
(templates and recovery patterns learned from everyone, with no user on them) is owned by the tenant;
global insights are anonymised aggregates. A backend applies one `record_call` in one transaction —
signal row, learned pair, statistics, template, recovery pattern — and returns only once it is durable.
Decisions (signal class, learning weight, privacy, fingerprints, what the write gate redacts, the shape a
shared row keeps of a call) are made before the call, in `learnloop.tools`; the backend stores, indexes and
looks up. A row every user of the tenant reads (user '') never holds a user's argument values: only shapes
(`learnloop.tools.shapes`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from ..models import Scope
from ..stores.base import Vector
from .models import (
    Insight,
    LearnedPair,
    PrivacyMode,
    QueryTemplate,
    RecoveryPattern,
    SeedTemplate,
    SignalKind,
    SignalReceipt,
    Strength,
    ToolInfo,
    ToolSignal,
    ToolStat,
)
from .shapes import Shaper, types_only

__all__ = [
    "CallRecord",
    "CatalogEntry",
    "EvidenceRequest",
    "Familiarity",
    "InsightDraft",
    "InsightInputs",
    "LearningPolicy",
    "ObservationRecord",
    "ShapeFn",
    "ToolEvidence",
    "ToolKnowledge",
    "ToolStore",
]


# Reduces a call (tool, arguments) to what a shared row may keep of it (see `shapes.Shaper`).
ShapeFn = Callable[[str, Mapping[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class CatalogEntry:
    name: str
    server: str
    description: str
    input_schema: dict[str, Any]
    digest: str
    vector: Vector | None
    embedding_model: str | None
    keep_vector: bool = False  # the description did not change: keep the stored vector


@dataclass(frozen=True)
class LearningPolicy:
    """How a backend folds a signal into the learned query→tool pairs."""

    merge_similarity: float = 0.95  # a query this close to a stored one of the same tool reinforces it
    max_pairs_per_tool: int = 64  # per user and tool; the weakest pair goes first
    recovery_window_s: float = 600.0  # a success this long after a failure is no longer its recovery
    max_examples: int = 5


@dataclass(frozen=True)
class CallRecord:
    """A tools/call, enriched with its session context and already classified."""

    session: str
    tool: str
    arguments: dict[str, Any]  # the user's, with what the write gate refuses already redacted
    ok: bool
    signature: str
    intent: str = ""
    error: str | None = None  # redacted like the arguments
    error_type: str | None = None
    fingerprint: str | None = None
    latency_ms: float | None = None
    strength: Strength | None = None
    weight: float = 0.0  # confidence the pair query→tool gets from this signal; 0 learns nothing
    apply_now: bool = True  # False for weak signals: stored durably now, folded into pairs by `flush_weak`
    query_hash: str | None = None
    query_text: str | None = None  # only under PrivacyMode.FULL
    vector: Vector | None = None  # the context's query vector, computed when the tools were routed
    embedding_model: str | None = None
    shared: bool = True  # templates and recoveries learned from this call belong to the tenant, not the user
    example: str | None = None  # query text kept as a template example (PrivacyMode.FULL only)
    pattern: dict[str, Any] = field(default_factory=dict)  # what a shared template or recovery keeps of the call
    # The same reduction for another stored call of the user: the failed call a recovery starts from, read back.
    shape: ShapeFn = types_only


@dataclass(frozen=True)
class ObservationRecord:
    """A tools/list with context, or a search_available_tools with its results."""

    session: str
    kind: SignalKind
    tools: tuple[str, ...]
    intent: str = ""
    query_hash: str | None = None
    query_text: str | None = None


@dataclass(frozen=True)
class Familiarity:
    """When a query lies outside everything a tool has been used for (see `learnloop.tools.router`).

    A tool's uses map the queries it serves. Once it has a few, a query unlike all of them (its nearest
    use less similar than `similarity`) is less likely to be for it than its description alone suggests.
    The tool's `unfamiliar` evidence ramps from 0 at `similarity` to 1 at `similarity - margin`, times the
    confidence that its uses are known: pairs / (pairs + `prior`). Tools never used get none. Pairs count
    whatever their age: maintenance prunes the ones decay has worn out."""

    weight: float = 0.2  # subtracted from the fused score, times the unfamiliar evidence
    similarity: float = 0.45
    margin: float = 0.1
    prior: float = 5.0


@dataclass(frozen=True)
class EvidenceRequest:
    vector: Vector | None
    terms: Sequence[str]  # the query's content words, for keyword match
    now: datetime
    pool: int = 50  # how many tools to return, best fused score first
    weights: tuple[float, float, float] = (1.0, 0.1, 1.0)  # description, keyword, learned (see tools.router)
    share: bool = True  # learned pairs of every user of the tenant, not only the caller's
    learned_floor: float = 0.5  # learned queries less similar than this say nothing for the tool
    learned_support: int = 3  # a tool's learned evidence is the mean of its best this-many pairs
    use_learned: bool = True
    familiarity: Familiarity = Familiarity()


@dataclass
class ToolEvidence:
    """What a backend knows about one tool for one query; `learnloop.tools.router` fuses it."""

    name: str
    server: str
    description: str
    input_schema: dict[str, Any]
    description_similarity: float
    keyword: float  # BM25 over name and description, scaled by the best score of the query (0..1)
    learned: float  # mean of the tool's best pairs' decayed confidence × scaled similarity (0..1)
    learned_uses: int
    unfamiliar: float = 0.0  # how far the query lies from every use of a well-used tool (0..1, see Familiarity)


@dataclass
class ToolKnowledge:
    """Everything the context sections draw from, read in one go."""

    templates: list[QueryTemplate] = field(default_factory=list)
    recoveries: list[RecoveryPattern] = field(default_factory=list)
    failures: list[ToolSignal] = field(default_factory=list)
    insights: list[Insight] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.templates or self.recoveries or self.failures or self.insights)


@dataclass
class InsightInputs:
    """Aggregates across every user of a tenant, with no user identity left in them."""

    stats: list[ToolStat]
    users_per_intent: dict[str, int]
    failure_groups: list[tuple[str, str, int]]  # (error_type, tool, count)
    failed_arguments: list[tuple[str, dict[str, Any]]]  # (tool, arguments) of recent failed calls
    templates: list[QueryTemplate]
    recoveries: list[RecoveryPattern]


@dataclass(frozen=True)
class InsightDraft:
    type: str
    key: str
    value: dict[str, Any]
    sample_size: int
    confidence: float


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
