"""The tool layer's part of the context block (seed 001 §8.9), under the same budget as user learnings.

Sections in priority order — the budget drops lines from the lowest priority first:

1. error recovery patterns (highest value, fewest tokens): confidence ≥ 0.8 and applied at least twice
   (§6.2: one lucky retry is not a pattern yet), not decayed below 0.5;
2. proven query templates: about this query (similar past queries or the same intent), settled by
   confidence, then recency, then speed; parameters cut to 200 characters;
3. user learnings (the existing "Relevant memories" section);
4. the user's past errors not covered by a recovery pattern, messages cut to 100 characters, each with
   its lesson (§9: `lessons`);
5. global insights, only if room remains.

Relevance is judged against the tools the router picks for the query, so a recovery pattern for a tool
that has nothing to do with the question does not take room from one that does. Every value and error text
a line shows passes the write gate first (`shapes.Redactor`): stored rows were gated when written, but rows
written before that, or under a stricter gate since, must not reach a prompt as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from ..models import Limits, RetrievedItem, Scope
from ..prompting import RenderedBlock, Section, render_block
from ..retrieval import MEMORY_SECTION_TITLE, item_line, one_line_per_pair
from ..stores.base import Vector
from ..stores.tools import ToolStore
from ..tokens import TokenCounter
from .base import ToolKnowledge
from .config import ToolConfig, configured
from .decay import EXCLUDE_BELOW, Knowledge, decayed
from .insights import insight_line, insight_tools
from .lessons import lesson_for
from .models import QueryTemplate
from .recovery import MAX_ERROR_CHARS, recovery_line
from .router import route
from .shapes import Redactor
from .sharing import ensure_scrubbed, tenant_shaper
from .templates import rank_templates, template_line

if TYPE_CHECKING:
    from ..engine import Engine

__all__ = [
    "ERRORS_TITLE",
    "INSIGHTS_TITLE",
    "MEMORY_PRIORITY",
    "RECOVERY_TITLE",
    "TEMPLATES_TITLE",
    "build_sections",
    "may_add_sections",
    "render_with_tool_sections",
    "retrieval_sections",
    "tool_sections",
]

RECOVERY_TITLE = "Error recovery patterns (apply these if errors occur):"
TEMPLATES_TITLE = "Proven query templates (use these when the intent matches):"
ERRORS_TITLE = "Past errors to avoid:"
INSIGHTS_TITLE = "Global insights:"
MEMORY_PRIORITY = 3


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def build_sections(
    knowledge: ToolKnowledge,
    config: ToolConfig,
    now: datetime,
    *,
    relevant: set[str] | None,
    intent: str | None = None,
    redactor: Redactor | None = None,
) -> list[Section]:
    """The tool sections for one query. `relevant` is the set of tools routed for it (None: no catalog, so
    nothing can be judged irrelevant); `redactor` is the engine's gate (default: the built-in one)."""
    caps = config.sections
    redactor = redactor or Redactor.default()

    def about(*tools: str) -> bool:
        return relevant is None or any(t in relevant for t in tools)

    recoveries = sorted(
        (
            r
            for r in knowledge.recoveries
            if r.status == "active"
            and r.confidence >= caps.recovery_confidence
            and r.times_applied >= caps.recovery_applied
            and r.effective_confidence >= EXCLUDE_BELOW
            and about(r.failed_tool, r.recovery_tool)
        ),
        key=lambda r: (-r.effective_confidence, -r.times_succeeded, -r.last_used_at.timestamp()),
    )[: caps.recoveries]
    templates = rank_templates(
        [
            t
            for t in knowledge.templates
            if (intent and t.intent == intent)
            or (t.similarity is not None and t.similarity >= caps.template_similarity)
        ]
    )[: caps.templates]
    covered = {r.fingerprint for r in recoveries}
    errors: list[str] = []
    seen: set[str | None] = set()
    for failure in knowledge.failures:
        if failure.fingerprint in covered or failure.fingerprint in seen or not about(failure.tool or ""):
            continue
        if decayed(1.0, failure.at, now, Knowledge.USER_PATTERN) < EXCLUDE_BELOW:
            continue
        seen.add(failure.fingerprint)
        message = _clip(redactor.text(failure.error or ""), MAX_ERROR_CHARS)
        lesson = (config.lesson(failure) if config.lesson else None) or lesson_for(
            failure, knowledge.recoveries, knowledge.insights
        )
        lesson = _clip(redactor.text(lesson), MAX_ERROR_CHARS)
        errors.append(f"[{failure.tool}] {failure.error_type or 'error'}: {message} Lesson: {lesson}")
        if len(errors) >= caps.errors:
            break
    insights: list[str] = []
    for insight in sorted(knowledge.insights, key=lambda i: -i.effective_confidence):
        line = insight_line(insight)
        line = None if line is None else redactor.text(line)
        # An insight's confidence measures different things per type; its age is what retires it.
        if line is None or decayed(1.0, insight.updated_at, now, Knowledge.INSIGHT) < EXCLUDE_BELOW:
            continue
        if not (about(*insight_tools(insight)) or (intent and insight.key == intent)):
            continue
        insights.append(line)
        if len(insights) >= caps.insights:
            break
    sections = [
        Section(RECOVERY_TITLE, [recovery_line(r, redactor) for r in recoveries], priority=1),
        Section(TEMPLATES_TITLE, [template_line(_gated(t, redactor)) for t in templates], priority=2),
        Section(ERRORS_TITLE, errors, priority=4),
        Section(INSIGHTS_TITLE, insights, priority=5),
    ]
    return [s for s in sections if s.lines]


def _gated(template: QueryTemplate, redactor: Redactor) -> QueryTemplate:
    return template.model_copy(update={"params": redactor.arguments(template.params)})


async def tool_sections(
    store: ToolStore,
    scope: Scope,
    query: str,
    vector: Vector | None,
    config: ToolConfig,
    now: datetime,
    *,
    intent: str | None = None,
    redactor: Redactor | None = None,
) -> list[Section]:
    """The tool-layer sections for (user, query); empty when the tenant has no tool knowledge."""
    since = now - timedelta(days=config.sections.error_days)
    caps = config.sections
    knowledge = await store.knowledge(
        scope,
        vector,
        now,
        failures_since=since,
        template_similarity=caps.template_similarity,
        intent=intent,
        recovery_confidence=caps.recovery_confidence,
        limit=4 * max(caps.recoveries, caps.templates, caps.errors, caps.insights),
    )
    if not knowledge:
        return []
    relevant: set[str] | None = None
    if knowledge.recoveries or knowledge.failures or knowledge.insights:
        routed = await route(store, scope, query, vector, config.k, config.weights, now, share=config.share_learning)
        relevant = {r.name for r in routed} if routed else None
    return build_sections(knowledge, config, now, relevant=relevant, intent=intent, redactor=redactor)


def render_with_tool_sections(
    items: Sequence[RetrievedItem],
    limits: Limits,
    sections: Sequence[Section],
    counter: TokenCounter | None = None,
) -> tuple[RenderedBlock, list[RetrievedItem]]:
    """Like `retrieval.render_memories`, with the tool sections around the memories. `max_items` keeps
    limiting the memories (seed 004's MaxItems); the tool sections have their own caps (seed 001 §8.9)."""
    shown = one_line_per_pair(items)[: limits.max_items]
    lines = [item_line(i) for i in shown]
    memory = Section(MEMORY_SECTION_TITLE, lines, priority=MEMORY_PRIORITY)
    block = render_block([*sections, memory], max_chars=limits.max_chars, max_tokens=limits.max_tokens, counter=counter)
    return block, [shown[i] for i in block.kept.get(MEMORY_SECTION_TITLE, [])]


def may_add_sections(engine: Engine, scope: Scope) -> bool:
    """Whether `retrieval_sections` could return anything for the scope (False: certainly not; no I/O)."""
    store = engine.tools
    return store is not None and store.may_know(scope.tenant)


async def retrieval_sections(engine: Engine, scope: Scope, query: str, vector: Vector | None) -> list[Section]:
    """The tool sections `retrieve_context` adds to its block; none when the store keeps no tool knowledge."""
    store = engine.tools
    if store is None:
        return []
    config = configured(store, scope.tenant)
    redactor = Redactor.of(engine.gate)
    await ensure_scrubbed(store, scope.tenant, lambda: tenant_shaper(store, scope.tenant, redactor, config))
    return await tool_sections(store, scope, query, vector, config, engine.clock(), redactor=redactor)
