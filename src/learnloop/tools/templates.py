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
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .decay import EXCLUDE_BELOW
from .models import QueryTemplate
from .shapes import Redactor, Shaper

__all__ = [
    "MAX_PARAMS_CHARS",
    "call_shape",
    "call_signature",
    "compact_params",
    "feedback_split",
    "rank_templates",
    "template_confidence",
    "template_line",
]

# Seed 001 §8.9: template parameters are cut to 200 characters in the prompt.
MAX_PARAMS_CHARS = 200


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
