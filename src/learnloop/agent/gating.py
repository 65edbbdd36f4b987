"""The content gate on every text the learning agent's model will later read: experience files, knowledge
pages and pointers (titles, contents, descriptions, cross references), whoever writes them.

What the model reads back is as good as an instruction to it, so a page or file is a way into its prompt:
secrets, personal data and injection are refused on every write path (the agent's own tools, the SDK, the
HTTP routes), not only on the agent's. Length and time-bound wording are allowed: schedules and long notes
are what files and pages are for. The learned poisoning classifier stays off too: it was trained on single
learnings, and a routing file or a procedure page is a list of instructions by design ("Always answer in
metric units", "read equipment.md"); the injection rules, which name what they found, still apply.
"""

from __future__ import annotations

from typing import Any

from ..capture.gate import LEARNED_ID, WriteGate
from ..engine import Engine
from ..errors import ValidationError, WriteRefused

__all__ = ["check_strings", "check_text", "content_gate"]

_MAX_DEPTH = 64


def content_gate(engine: Engine) -> WriteGate:
    return engine.gate.without("unstable", "size", "empty", LEARNED_ID)


def check_text(gate: WriteGate, text: str, field: str, *, hint: str = "") -> None:
    """WriteRefused (a ValidationError naming the rule, never the text) when the gate refuses `text`."""
    verdict = gate.check(text)
    if not verdict.allowed:
        raise WriteRefused((verdict.reason or "refused") + hint, verdict.rule, verdict.kind, field)


def check_strings(gate: WriteGate, value: Any, field: str, *, hint: str = "") -> None:
    """Every string inside a JSON-like value (a cross reference may be an id, a title or a whole note; keys
    are read back too). Checked one by one, so a verdict is about one string as it will be shown."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > _MAX_DEPTH:
            # Deeper strings would go unchecked; nothing legitimate nests this deep.
            raise ValidationError(f"{field} is nested deeper than {_MAX_DEPTH} levels", field=field)
        if isinstance(node, str):
            check_text(gate, node, field, hint=hint)
        elif isinstance(node, dict):
            stack.extend((key, depth + 1) for key in node)
            stack.extend((child, depth + 1) for child in node.values())
        elif isinstance(node, list | tuple):
            stack.extend((child, depth + 1) for child in node)
