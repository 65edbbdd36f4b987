"""Query templates (seed 001 §4.1, §6.3, §8.2–§8.4): successful calls become reusable ways of calling a tool.

A template is keyed by (intent, tool, call signature). The signature is the *shape* of the arguments:
enum-like values (`BEST_SELLING`, `products`) are kept because they are what makes a call work or fail,
numbers, dates and free text are reduced to their type so `limit=10` and `limit=20` reinforce the same
template. Apps that know better name the identifying arguments per tool (`ToolConfig.key_params`).

Confidence is seed 001's `successes / (successes + failures)`, with response-quality feedback counted as
fractional successes or failures and a seed template's prior of one of each (so it starts at 0.5).
Conflicts between templates of one intent are settled by confidence, then recency, then speed (§8.3).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .decay import EXCLUDE_BELOW
from .models import QueryTemplate

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
_ENUMISH = re.compile(r"^[A-Za-z][A-Za-z_.\-]{0,39}$")
_MAX_DEPTH = 4
_MAX_ITEMS = 16


def _shape(value: Any, depth: int = 0) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return "<number>"
    if isinstance(value, str):
        return value if _ENUMISH.match(value) else "<text>"
    if depth >= _MAX_DEPTH:
        return "<nested>"
    if isinstance(value, Mapping):
        return {str(k): _shape(v, depth + 1) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, list | tuple):
        shapes = [_shape(v, depth + 1) for v in value[:_MAX_ITEMS]]
        # Order inside a list of enum values rarely matters to whether a call works.
        return sorted(shapes, key=lambda s: json.dumps(s, sort_keys=True, default=str))
    return f"<{type(value).__name__}>"


def call_shape(tool: str, params: Mapping[str, Any], key_params: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """The part of a call that identifies its pattern (see the module docstring)."""
    keys = key_params.get(tool)
    if keys is not None:
        return {k: params.get(k) for k in keys}
    shaped = _shape(dict(params))
    assert isinstance(shaped, dict)
    return shaped


def call_signature(tool: str, params: Mapping[str, Any], key_params: Mapping[str, Sequence[str]]) -> str:
    text = json.dumps(call_shape(tool, params, key_params), sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


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
