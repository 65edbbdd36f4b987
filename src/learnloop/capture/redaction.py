"""Redaction: a text with every span the write gate refuses replaced by its kind, e.g. ``[secret:aws]``.

Records that must exist (a turn, a tool call's error, an interaction handed to the learning agent, feedback)
cannot be refused like a learning; they are stored redacted instead, never raw. The gate finds the first
harmful span, it is replaced by a label naming the kind and the detector family, and the gate looks again,
until it lets the text through. A hit without a position in the text (the letters-only view that defeats
spacing tricks) or a text that does not come clean replaces the whole text. Injection spans are whole
sentences (the rules report them so): the rest of a poisoned sentence is no safer than its keyword.

Size and time-relative rules do not apply: a short or dated record is not a reusable learning, and may be kept.
"""

from __future__ import annotations

import functools

from .gate import WriteGate
from .gate_rule import GateHit, GateRule, normalize

__all__ = ["HARMFUL_KINDS", "label", "redact", "redacting_gate"]

#: What is never stored raw. Size and unstable facts concern learnings only.
HARMFUL_KINDS = frozenset({"secret", "personal_data", "injection", "custom"})
_KIND_TAG = {"secret": "secret", "personal_data": "pii", "injection": "injection", "custom": "custom"}
_GROUPS = frozenset({"ds", "prose", "poisoning", "government_id", "phone"})
_MAX_PASSES = 16


def label(rule: GateRule) -> str:
    """``[secret:aws]``, ``[pii:phone]``, ``[injection:exfiltrate]``: the kind and the rule's own name."""
    parts = rule.id.split(".")
    name = parts[1] if len(parts) > 1 else rule.kind
    if name in _GROUPS and len(parts) > 2 and name not in ("government_id", "phone"):
        name = parts[2]
    return f"[{_KIND_TAG.get(rule.kind, rule.kind)}:{name}]"


@functools.lru_cache(maxsize=16)
def redacting_gate(gate: WriteGate) -> WriteGate:
    """`gate` without its size and time-relative rules (cached: gates are immutable and hashable by identity)."""
    return gate.without("size", "empty", "unstable")


def redact(gate: WriteGate, text: str) -> str:
    """`text` with every span `gate` refuses replaced by its label; unchanged (not even normalised) when clean."""
    checker = redacting_gate(gate)
    if checker.first_hit(text) is None:
        return text
    current = normalize(text)
    # Labels already placed are masked (same length, inert) so the next pass never reads one as a value.
    masked = current
    last = ""
    for _ in range(_MAX_PASSES):
        hit = checker.first_hit(masked)
        if hit is None or hit.rule.kind not in HARMFUL_KINDS:
            return current
        last = label(hit.rule)
        span = _span(masked, hit)
        if span is None:
            return last
        start, end = span
        current = f"{current[:start]}{last}{current[end:]}"
        masked = f"{masked[:start]}{_MASK * len(last)}{masked[end:]}"
    return last  # still not clean after many passes: nothing of it is kept


_MASK = "x"  # "xxxx" reads as a placeholder to every detector


def _span(text: str, hit: GateHit) -> tuple[int, int] | None:
    """Where the hit is in `text`, or None when it cannot be placed there."""
    if hit.text == text and hit.end > hit.start:
        return hit.start, hit.end
    # The span is in another view (the raw text, or lower-cased text of another length): find the value.
    at = text.find(hit.value) if hit.value else -1
    return None if at < 0 else (at, at + len(hit.value))
