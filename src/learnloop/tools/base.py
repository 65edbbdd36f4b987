"""The records the tool layer's storage contract (`learnloop.stores.tools.ToolStore`) takes and returns.

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
from typing import Any

from ..stores.base import Vector
from .models import (
    Insight,
    QueryTemplate,
    RecoveryPattern,
    SignalKind,
    Strength,
    ToolSignal,
    ToolStat,
)
from .shapes import types_only

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
    # (intent, timestamp) of recent successful calls: when the tenant's users ask for what (`time_pattern`).
    call_times: list[tuple[str, float]] = field(default_factory=list)


@dataclass(frozen=True)
class InsightDraft:
    type: str
    key: str
    value: dict[str, Any]
    sample_size: int
    confidence: float
