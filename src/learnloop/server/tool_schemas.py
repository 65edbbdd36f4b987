"""Request and response bodies of the tool-intelligence API (`/api/tools/...`).

Requests are strict like the rest of the API (unknown fields rejected, bounded sizes, no NaN). Free-form
JSON (tool arguments, input schemas, template parameters) is bounded too — depth, size, finite numbers — so
what is stored can always be served back as JSON and stays small enough to show in a prompt.
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, Field, StringConstraints

from ..tools.models import (
    LearnedPair,
    PrivacyMode,
    QueryTemplate,
    RecoveryPattern,
    RecoverySuggestion,
    Strength,
    ToolInfo,
    ToolStat,
)
from .schemas import Ident, Short, Strict

__all__ = [
    "MAX_JSON_DEPTH",
    "TOOL_NAME",
    "BestTemplateOut",
    "CallIn",
    "ContextIn",
    "FeedbackIn",
    "FeedbackOut",
    "ListIn",
    "PrivacyIn",
    "PrivacyOut",
    "RegisterIn",
    "RemovedOut",
    "RouteIn",
    "SearchIn",
    "SearchRecordIn",
    "SeedIn",
    "SeededOut",
    "SignalOut",
    "SuggestIn",
    "SuggestionOut",
    "ToolDetail",
    "ToolEvidenceOut",
    "ToolIn",
]

# `learnloop.tools.models.check_tool_name`, as a schema pattern: no whitespace or control characters.
TOOL_NAME = r"^[^\s\x00-\x1f\x7f]{1,128}$"
MAX_JSON_DEPTH = 32
_MAX_JSON_CHARS = 100_000


def _bounded_json(value: dict[str, Any]) -> dict[str, Any]:
    def walk(node: Any, depth: int) -> None:
        if depth > MAX_JSON_DEPTH:
            raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels")
        if isinstance(node, float) and not math.isfinite(node):
            raise ValueError("numbers must be finite")
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        for child in children:
            walk(child, depth + 1)

    walk(value, 0)
    if len(json.dumps(value, default=str)) > _MAX_JSON_CHARS:
        raise ValueError(f"larger than {_MAX_JSON_CHARS} characters as JSON")
    return value


JsonObject = Annotated[dict[str, Any], AfterValidator(_bounded_json)]
ToolName = Annotated[str, StringConstraints(pattern=TOOL_NAME, max_length=128)]
Session = Annotated[str, StringConstraints(min_length=1, max_length=200)]
Query = Annotated[str, StringConstraints(min_length=1, max_length=4000)]
ErrorText = Annotated[str, StringConstraints(max_length=4000)]
Names = Annotated[list[ToolName], Field(max_length=1000)]


class ToolIn(Strict):
    name: ToolName
    description: Annotated[str, StringConstraints(max_length=10_000)] = ""
    input_schema: JsonObject = Field(default_factory=dict)
    server: Short = ""


class RegisterIn(Strict):
    """Tools to add or update. With `replace`, the tools of `server` not listed here are removed."""

    tools: list[ToolIn] = Field(max_length=5000)
    server: Short = Field(default="", description="Server of the tools that name none")
    replace: bool = False


class RouteIn(Strict):
    query: Annotated[str, StringConstraints(max_length=4000)] | None = Field(
        default=None, description="What the user asks for; none or blank: the most used tools"
    )
    # Marked deprecated in the schema only: pydantic's own `deprecated=` would warn on every read in the route.
    context: Annotated[str, StringConstraints(max_length=4000)] | None = Field(
        default=None,
        description="The old name of `query` (answered with a Warning header)",
        json_schema_extra={"deprecated": True},
    )
    k: int | None = Field(default=None, ge=1, le=100, description="How many tools; default the tenant's k")
    user: Ident | None = None
    learned: bool = Field(default=True, description="False: rank by descriptions and keywords only")


class ContextIn(Strict):
    """Opens a correlation window in `session`: later calls, lists and searches there are about `query`."""

    session: Session
    query: Query
    user: Ident | None = None
    intent: Short | None = None
    k: int | None = Field(default=None, ge=1, le=100)


class SearchIn(Strict):
    query: Query
    limit: int | None = Field(default=None, ge=1, le=100)
    user: Ident | None = None
    session: Session | None = Field(default=None, description="Record the search in this session's window")


class CallIn(Strict):
    session: Session
    tool: ToolName
    arguments: JsonObject = Field(default_factory=dict)
    ok: bool = True
    error: ErrorText | None = None
    error_type: Annotated[str, StringConstraints(max_length=64)] | None = Field(
        default=None, description="Default: classified from `error`"
    )
    latency_ms: float | None = Field(default=None, ge=0, le=86_400_000)
    user: Ident | None = None
    intent: Short | None = None


class ListIn(Strict):
    session: Session
    tools: Names
    user: Ident | None = None


class SearchRecordIn(Strict):
    session: Session
    query: Query
    results: Names
    user: Ident | None = None


class FeedbackIn(Strict):
    session: Session
    score: float = Field(ge=-1.0, le=1.0, description="Quality of the answer, -1 (bad) to 1 (good)")
    user: Ident | None = None


class SeedTemplateIn(Strict):
    intent: Short
    tool: ToolName
    params: JsonObject = Field(default_factory=dict)
    description: Annotated[str, StringConstraints(max_length=500)] = ""


class SeedIn(Strict):
    templates: list[SeedTemplateIn] = Field(min_length=1, max_length=500)


class SuggestIn(Strict):
    tool: ToolName
    arguments: JsonObject = Field(default_factory=dict)
    error: ErrorText | None = None
    error_type: Annotated[str, StringConstraints(max_length=64)] | None = None
    user: Ident | None = None


class PrivacyIn(Strict):
    mode: PrivacyMode = Field(description="full: query text too; hashed: hash and embedding only; opt_out: nothing")


class SignalOut(BaseModel):
    id: int = Field(description="The stored signal's id; it is durable when this answer arrives")


class RemovedOut(BaseModel):
    name: str
    removed: bool = True


class SeededOut(BaseModel):
    added: int


class BestTemplateOut(BaseModel):
    template: QueryTemplate | None


class SuggestionOut(BaseModel):
    suggestion: RecoverySuggestion | None


class PrivacyOut(BaseModel):
    user: str
    mode: PrivacyMode


class FeedbackOut(BaseModel):
    session: str
    templates: list[QueryTemplate] = Field(description="The templates the session's window used, after the feedback")


class ToolEvidenceOut(BaseModel):
    """What has been learned about one tool from use: its learned query→tool pairs and its call statistics."""

    tool: str
    server: str
    description: str
    pairs: int = Field(description="Learned query→tool pairs")
    uses: int = Field(description="Signals folded into those pairs")
    confidence: float = Field(description="Best decayed pair confidence (0 when nothing is learned)")
    mean_confidence: float
    strengths: dict[Strength, int] = Field(default_factory=dict)
    examples: list[str] = Field(
        default_factory=list, description="Queries that led to the tool; kept only for users whose privacy is full"
    )
    successes: int
    failures: int
    success_rate: float | None


class ToolDetail(BaseModel):
    tool: ToolInfo
    evidence: ToolEvidenceOut
    pairs: list[LearnedPair]
    templates: list[QueryTemplate]
    recoveries: list[RecoveryPattern]
    stats: list[ToolStat]
