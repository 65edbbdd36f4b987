"""Query templates (seed 001 §4.1, §6.3, §8.2–§8.4): successful calls become reusable ways of calling a tool.

A template is keyed by (intent, tool, call signature). The signature is a hash of the *shape* of the
arguments (`learnloop.tools.shapes`): the API's own constants (`BEST_SELLING`, enum values of the tool's
schema) are kept because they are what makes a call work or fail, numbers, dates and free text are reduced
to their type so `limit=10` and `limit=20` reinforce the same template. Apps that know better name the
identifying arguments per tool (`ToolConfig.key_params`). A template shared by the tenant stores that shape
as its parameters, never a user's values.

Confidence is seed 001's `successes / (successes + failures)`, with response-quality feedback counted as
fractional successes or failures and a seed template's prior of one of each (so it starts at 0.5).
Conflicts between templates of one intent are settled by confidence, then recency, then speed (§8.3).

Matching (§4.1, `match_template`): a template of the intent and tool with confidence ≥ 0.7 whose parameters
are more than 0.8 similar to the call's (compared as shapes); failing that, the intent's best template if its
confidence is ≥ 0.9. Looked up by intent alone (§6.3), the floor is 0.7. A template whose pattern failed is
left out of the next lookup in the session, so the next best is tried (§8.3).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from .decay import EXCLUDE_BELOW
from .models import QueryTemplate
from .shapes import Redactor, Shaper

__all__ = [
    "INTENT_ONLY_CONFIDENCE",
    "MATCH_CONFIDENCE",
    "MAX_PARAMS_CHARS",
    "PARAM_SIMILARITY",
    "call_shape",
    "call_signature",
    "compact_params",
    "feedback_split",
    "match_template",
    "param_similarity",
    "rank_templates",
    "template_confidence",
    "template_line",
]

# Seed 001 §8.9: template parameters are cut to 200 characters in the prompt.
MAX_PARAMS_CHARS = 200
# Seed 001 §4.1: a match needs confidence 0.7 and parameters more than 0.8 alike; by intent alone, 0.9.
MATCH_CONFIDENCE = 0.7
PARAM_SIMILARITY = 0.8
INTENT_ONLY_CONFIDENCE = 0.9


def call_shape(tool: str, params: Mapping[str, Any], key_params: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """The part of a call that identifies its pattern, under the default write gate (the facade uses its
    engine's gate and the tools' schemas: `shapes.Shaper`)."""
    return Shaper(Redactor.default(), key_params).identity(tool, params)


def call_signature(tool: str, params: Mapping[str, Any], key_params: Mapping[str, Sequence[str]]) -> str:
    return Shaper(Redactor.default(), key_params).signature(tool, params)


def template_confidence(
    successes: float, failures: float, feedback_positive: float, feedback_negative: float, prior: float
) -> float:
    good = successes + feedback_positive + prior
    total = successes + failures + feedback_positive + feedback_negative + 2 * prior
    return good / total if total > 0 else 0.0


def feedback_split(score: float) -> tuple[float, float]:
    """A quality score in [-1, 1] as (fractional success, fractional failure)."""
    clipped = max(-1.0, min(1.0, score))
    return (clipped, 0.0) if clipped >= 0 else (0.0, -clipped)


def rank_templates(templates: Sequence[QueryTemplate], *, min_effective: float = EXCLUDE_BELOW) -> list[QueryTemplate]:
    """Active templates worth recommending, best first: confidence, then recency, then speed (§8.3)."""
    kept = [t for t in templates if t.status == "active" and t.effective_confidence >= min_effective]
    return sorted(kept, key=lambda t: (-t.effective_confidence, -t.last_used_at.timestamp(), t.avg_latency_ms))


def compact_params(params: Mapping[str, Any], limit: int = MAX_PARAMS_CHARS) -> str:
    text = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False, default=str)}" for k, v in params.items())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def template_line(template: QueryTemplate) -> str:
    label = template.intent or (template.examples[0] if template.examples else "") or template.description
    head = f'"{label}" → ' if label else ""
    successes = template.successes
    plural = "success" if successes == 1 else "successes"
    return (
        f"{head}{template.tool}({compact_params(template.params)}) — confidence "
        f"{template.effective_confidence:.0%} ({successes} {plural})"
    )


def param_similarity(a: Mapping[str, Any], b: Mapping[str, Any]) -> float:
    """The share of argument names (of either call) with the same value in both; 1.0 for two empty calls."""
    keys = set(a) | set(b)
    if not keys:
        return 1.0
    same = sum(1 for k in keys if k in a and k in b and a[k] == b[k])
    return same / len(keys)


def match_template(
    templates: Sequence[QueryTemplate],
    intent: str,
    *,
    tool: str | None = None,
    params: Mapping[str, Any] | None = None,
    shape: Callable[[str, Mapping[str, Any]], dict[str, Any]] | None = None,
    exclude: Collection[int] = (),
    min_confidence: float = MATCH_CONFIDENCE,
) -> QueryTemplate | None:
    """Seed 001 §4.1's `find_matching_template` (with `tool` and `params`), else §6.3's lookup by intent.
    `shape` reduces both calls to what they are compared on (a `Shaper`; default: as given)."""
    usable = [t for t in templates if t.intent == intent and t.id not in exclude]
    if tool is None or params is None:
        ranked = rank_templates(usable, min_effective=min_confidence)
        return ranked[0] if ranked else None
    reduce = shape or (lambda _tool, p: dict(p))
    wanted = reduce(tool, params)
    for template in rank_templates([t for t in usable if t.tool == tool], min_effective=min_confidence):
        if param_similarity(reduce(template.tool, template.params), wanted) > PARAM_SIMILARITY:
            return template
    fallback = rank_templates(usable, min_effective=max(min_confidence, INTENT_ONLY_CONFIDENCE))
    return fallback[0] if fallback else None
