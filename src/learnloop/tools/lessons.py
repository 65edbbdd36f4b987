"""Lessons under past errors (seed 001 §9, "PAST ERRORS TO AVOID … Lesson: …"; §8.2: error classification
and lesson generation work from the first error, with no history).

A lesson says what to do differently next time. The best one is what worked before for the same error on
the same tool (a recovery pattern, even one not yet confident enough to be shown up front), then what the
tenant knows about the argument's valid values (a `parameter_values` insight), else a rule per error type.
Apps replace the rules with `ToolConfig.lesson` (a function of the failed call's signal).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .models import Insight, RecoveryPattern, ToolSignal

__all__ = ["default_lesson", "lesson_for"]

_QUOTED = re.compile(r"['\"`]([A-Za-z_][A-Za-z0-9_.]{0,60})['\"`]")

_RULES = {
    "invalid_argument": "check argument names and values against {tool}'s schema before calling it",
    "not_found": "make sure the record exists (list or search first) before calling {tool}",
    "permission_denied": "{tool} has no access to this; do not retry the same call, tell the user what is missing",
    "rate_limited": "wait before calling {tool} again and ask for more per call",
    "timeout": "narrow the request to {tool} (fewer items, a shorter period)",
    "unavailable": "{tool} was unavailable; retry once, then say so",
}


def default_lesson(failure: ToolSignal) -> str:
    """A rule-based lesson from the error type and message alone."""
    tool = failure.tool or "the tool"
    error_type = failure.error_type or "error"
    named = _QUOTED.search(failure.error or "")
    if error_type == "invalid_argument" and named:
        return f"'{named.group(1)}' was rejected by {tool}; use the names and values its schema declares"
    rule = _RULES.get(error_type)
    return rule.format(tool=tool) if rule else f"do not repeat the same call to {tool} unchanged"


def lesson_for(failure: ToolSignal, recoveries: Sequence[RecoveryPattern], insights: Sequence[Insight]) -> str:
    """The lesson to show under `failure`: a known fix, then known valid values, then the rule."""
    fixes = [
        r
        for r in recoveries
        if r.status == "active" and r.failed_tool == failure.tool and r.error_type == failure.error_type
    ]
    if fixes:
        best = max(fixes, key=lambda r: (r.effective_confidence, r.times_succeeded))
        return f"what worked before: {best.description}"
    for insight in insights:
        value = insight.value
        if insight.type != "parameter_values" or value.get("tool") != failure.tool:
            continue
        if any(str(bad) in (failure.error or "") for bad in value.get("invalid", [])):
            valid = ", ".join(str(v) for v in value.get("valid", [])[:5])
            return f"valid {value.get('parameter')} values for {failure.tool}: {valid}"
    return default_lesson(failure)
