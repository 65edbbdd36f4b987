"""Error recovery (seed 001 §4.2, §6.4): a failed call followed by a successful one in the same session
becomes a pattern "when X fails like this, do Y instead".

The failure is identified by a fingerprint over the error type, the tool and the shape of its arguments
(the same shape templates use), so the same mistake made with other dates or limits matches. The change
that fixed it is described in words the model can apply ("Changed sort_key from 'REVENUE' to
'BEST_SELLING'"); a pattern the tenant shares is described, and stores its calls, as shapes, so the change
it names is between the API's own constants, never between one user's values. A pattern's confidence is
times_succeeded / times_applied: reusing the fix and failing again lowers it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .models import RecoveryPattern, RecoverySuggestion
from .shapes import Redactor, Shaper

__all__ = [
    "MAX_ERROR_CHARS",
    "SUGGEST_MIN_CONFIDENCE",
    "classify_error",
    "describe_change",
    "error_fingerprint",
    "recovery_line",
    "suggest",
]

# Seed 001 §6.4: a recovery is suggested from confidence 0.7.
SUGGEST_MIN_CONFIDENCE = 0.7
# Seed 001 §8.9: error messages are cut to 100 characters in the prompt.
MAX_ERROR_CHARS = 100

_WORD_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_CLASS_NAME = re.compile(r"\b([A-Z][A-Za-z]+(?:Error|Exception))\b")
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("timeout", re.compile(r"time[d ]?\s?out|deadline exceeded", re.I)),
    ("rate_limited", re.compile(r"rate.?limit|too many requests|\b429\b", re.I)),
    ("permission_denied", re.compile(r"permission|forbidden|unauthori[sz]ed|access denied|\b40[13]\b", re.I)),
    ("not_found", re.compile(r"not found|no such|does not exist|\b404\b", re.I)),
    (
        "invalid_argument",
        re.compile(
            r"invalid|unknown (?:field|argument|enum|value|key|parameter)|not a valid|unexpected|"
            r"must be|required|missing|type ?mismatch|cannot parse|bad request|\b400\b",
            re.I,
        ),
    ),
    ("unavailable", re.compile(r"unavailable|connection (?:refused|reset)|\b50[023]\b", re.I)),
)


def classify_error(message: str | None) -> str:
    """A coarse, stable error type from a message: an exception class name if one is quoted, else a rule."""
    if not message:
        return "error"
    named = _CLASS_NAME.search(message)
    if named:
        return _snake(named.group(1))
    for error_type, pattern in _RULES:
        if pattern.search(message):
            return error_type
    return "error"


def _snake(name: str) -> str:
    return _WORD_BOUNDARY.sub("_", name).lower()


def error_fingerprint(
    error_type: str, tool: str, params: Mapping[str, Any], key_params: Mapping[str, Sequence[str]]
) -> str:
    """Under the default write gate; the facade uses its engine's gate and the tools' schemas (`Shaper`)."""
    return Shaper(Redactor.default(), key_params).fingerprint(error_type, tool, params)


def _value(value: Any) -> str:
    if isinstance(value, str):
        return value if len(value) <= 60 else value[:57] + "…"
    return json.dumps(value, ensure_ascii=False, default=str)[:60]


def describe_change(failed_tool: str, failed_params: Mapping[str, Any], tool: str, params: Mapping[str, Any]) -> str:
    """What changed between the failed call and the one that worked, in words."""
    changes: list[str] = []
    if failed_tool != tool:
        changes.append(f"Switched from {failed_tool} to {tool}")
    else:
        for key in sorted(set(failed_params) | set(params)):
            if key not in params:
                changes.append(f"Removed {key}")
            elif key not in failed_params:
                changes.append(f"Added {key}='{_value(params[key])}'")
            elif failed_params[key] != params[key]:
                changes.append(f"Changed {key} from '{_value(failed_params[key])}' to '{_value(params[key])}'")
    if changes:
        return "; ".join(changes)
    return "Retried with the same parameters" if failed_tool == tool else "Modified query parameters"


def suggest(
    patterns: Sequence[RecoveryPattern], fingerprint: str, error_type: str, tool: str
) -> RecoverySuggestion | None:
    """Seed 001's lookup: the exact fingerprint first, else the same error type on the same tool."""

    def best(candidates: list[RecoveryPattern]) -> RecoveryPattern | None:
        usable = [p for p in candidates if p.status == "active"]
        return max(usable, key=lambda p: (p.effective_confidence, p.times_succeeded), default=None)

    found = best([p for p in patterns if p.fingerprint == fingerprint])
    if found is None:
        found = best([p for p in patterns if p.error_type == error_type and p.failed_tool == tool])
    if found is None or found.effective_confidence < SUGGEST_MIN_CONFIDENCE:
        return None
    return RecoverySuggestion(
        pattern_id=found.id,
        recovery_tool=found.recovery_tool,
        recovery_params=found.recovery_params,
        description=found.description,
        confidence=round(found.effective_confidence, 4),
    )


def recovery_line(pattern: RecoveryPattern, redactor: Redactor | None = None) -> str:
    description = (redactor or Redactor.default()).text(pattern.description)
    return (
        f"If {pattern.error_type} occurs with {pattern.failed_tool}: {description} "
        f"(worked {pattern.times_succeeded}/{pattern.times_applied} times)"
    )
