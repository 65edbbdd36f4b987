"""Output that is safe on a terminal: stored text is shown, never executed.

A learning, a reason or a tool's error text can hold escape sequences (ESC [ 2 J clears the screen, OSC 8
makes links, C1 controls do the same in one byte) or a carriage return that overwrites what was printed. Text
written before `learnloop.textcheck` refused them, or by another program on the same file, is shown with
those characters spelled out (`\\x1b`, `\\u009b`); tab and newline stay as they are.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["printable", "safe_json", "safe_json_line"]

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
# JSON escapes C0 controls itself; DEL, the C1 block and lone surrogates it would write raw.
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\ud800-\udfff]")


def _spelled(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` with every control character but tab and newline written as an escape."""
    return _UNSAFE.sub(_spelled, text)


def safe_json_line(text: str) -> str:
    """A line of JSON with DEL, C1 controls and lone surrogates written as `\\u` escapes (the same JSON)."""
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def safe_json(value: Any) -> str:
    """One line of JSON (non-ASCII kept readable) in which no character reaches the terminal as a control."""
    return safe_json_line(json.dumps(value, ensure_ascii=False, default=str))
