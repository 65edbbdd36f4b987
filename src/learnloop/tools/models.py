"""Data types of the tool layer: the catalog, usage signals, routing results, templates, recovery patterns,
statistics and insights. They are what `loop.tools` returns and what the REST layer serialises."""

from __future__ import annotations

import re
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

__all__ = [
    "AggregationReport",
    "Insight",
    "LearnedPair",
    "PrivacyMode",
    "QueryTemplate",
    "RecoveryPattern",
    "RecoverySuggestion",
    "RegisterReport",
    "RoutedTool",
    "SeedTemplate",
    "SignalKind",
    "SignalReceipt",
    "Strength",
    "ToolDef",
    "ToolInfo",
    "ToolSignal",
    "ToolStat",
]

# MCP names are free-form strings in practice ("PDF&URLTool" exists in the wild); only whitespace and control
# characters are refused, because they break prompt lines and log formats.
_TOOL_NAME = re.compile(r"^[^\s\x00-\x1f\x7f]{1,128}$")

Standing = Literal["active", "archived"]


class Strength(StrEnum):
    """Seed 002's signal classes, strongest first."""

    VERY_STRONG = "very_strong"  # found by search_available_tools AND in the routed list, then used
    STRONG = "strong"  # in the routed list, then used
    DISCOVERY = "discovery"  # only found through search_available_tools (the router missed it)
    WEAK = "weak"  # used although neither listed nor searched


class SignalKind(StrEnum):
    LIST = "list"  # tools/list with a context
    CALL = "call"  # tools/call
    SEARCH = "search"  # search_available_tools


class PrivacyMode(StrEnum):
    """What the tool layer keeps of a user's queries."""

    FULL = "full"  # query text too (debugging, template examples)
    HASHED = "hashed"  # a hash and the embedding only
    OPT_OUT = "opt_out"  # nothing derived from the user's queries


def check_tool_name(value: str) -> str:
    if not isinstance(value, str) or not _TOOL_NAME.match(value):
        raise ValueError(f"tool names are 1-128 characters without whitespace (got {value!r})")
    return value


class ToolDef(BaseModel):
    """A tool as an app or an MCP server describes it."""

    name: str
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=dict)
    server: str = ""

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        return check_tool_name(value)


class ToolInfo(ToolDef):
    digest: str
    embedded: bool
    created_at: datetime
    updated_at: datetime


class RegisterReport(BaseModel):
    added: list[str] = Field(default_factory=list)
    changed: list[str] = Field(default_factory=list)  # description or schema changed (re-embedded if described)
    unchanged: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)


class RoutedTool(BaseModel):
    """One tool the router picked for a context, with the evidence behind its place."""

    name: str
    server: str
    description: str
    input_schema: dict[str, Any] = Field(default_factory=dict)
    score: float
    description_similarity: float
    keyword: float
    learned: float
    learned_uses: int
    why: str
    # How far the context lies from every past use of this well-used tool (0..1); weighted, it is subtracted.
    unfamiliar: float = 0.0


class ToolSignal(BaseModel):
    """One observed event: a tools/list, a tools/call or a search_available_tools."""

    id: int
    tenant: str
    user: str | None
    session: str
    kind: SignalKind
    tool: str | None = None
    tools: list[str] = Field(default_factory=list)
    arguments: dict[str, Any] = Field(default_factory=dict)
    ok: bool | None = None
    error_type: str | None = None
    error: str | None = None
    fingerprint: str | None = None
    latency_ms: float | None = None
    strength: Strength | None = None
    intent: str = ""
    query_hash: str | None = None
    query: str | None = None
    applied: bool = True
    at: datetime


class RecoveryPattern(BaseModel):
    """Seed 001's error-recovery pattern: when this call fails this way, that change made it work."""

    id: int
    tenant: str
    user: str | None
    fingerprint: str
    error_type: str
    failed_tool: str
    failed_params: dict[str, Any]
    recovery_tool: str
    recovery_params: dict[str, Any]
    description: str
    times_applied: int
    times_succeeded: int
    confidence: float
    effective_confidence: float
    status: Standing
    created_at: datetime
    last_used_at: datetime


class RecoverySuggestion(BaseModel):
    pattern_id: int
    recovery_tool: str
    recovery_params: dict[str, Any]
    description: str
    confidence: float


class SignalReceipt(BaseModel):
    """What `record_call` returns once the signal is durable."""

    id: int
    strength: Strength | None
    applied: bool  # learned from at once (strong, very strong, discovery) or queued for the next batch (weak)
    template_id: int | None = None
    recovery: RecoveryPattern | None = None  # created or reinforced by this call (fail → success)
    suggestion: RecoverySuggestion | None = None  # for a failed call: what worked before
    # For a failed call that followed a template: the intent's next best template to try (seed 001 §8.3).
    fallback: QueryTemplate | None = None


class LearnedPair(BaseModel):
    """Seed 002's learned query→tool pair: the embedding of a query that led to a tool being used."""

    id: int
    tenant: str
    user: str | None
    tool: str
    query_hash: str
    query: str | None
    confidence: float
    weight: float  # confidence after decay
    uses: int
    strength: Strength
    created_at: datetime
    last_used_at: datetime


class QueryTemplate(BaseModel):
    """A way of calling a tool that worked for an intent (seed 001 `query_templates`)."""

    id: int
    tenant: str
    user: str | None
    intent: str
    tool: str
    params: dict[str, Any]
    signature: str
    description: str
    successes: int
    failures: int
    feedback_positive: float
    feedback_negative: float
    confidence: float
    effective_confidence: float
    avg_latency_ms: float
    examples: list[str] = Field(default_factory=list)
    origin: Literal["learned", "seed"]
    status: Standing
    similarity: float | None = None  # to the query it was looked up for
    created_at: datetime
    last_used_at: datetime


class SeedTemplate(BaseModel):
    """A template shipped with an app for a cold start (seed 001 §8.2): starts at confidence 0.5."""

    intent: str
    tool: str
    params: dict[str, Any] = Field(default_factory=dict)
    description: str = ""

    @field_validator("tool")
    @classmethod
    def _check_tool(cls, value: str) -> str:
        return check_tool_name(value)


class ToolStat(BaseModel):
    intent: str
    tool: str
    successes: int
    failures: int
    success_rate: float
    avg_latency_ms: float
    last_used_at: datetime


class Insight(BaseModel):
    """Anonymised cross-user knowledge (seed 001 `global_insights`)."""

    type: str
    key: str
    value: dict[str, Any]
    sample_size: int
    confidence: float
    effective_confidence: float
    updated_at: datetime


class AggregationReport(BaseModel):
    written: int
    pruned_insights: int
    archived_templates: int
    archived_recoveries: int
    pruned_pairs: int
    flushed_signals: int
