"""Text that enters learnloop is checked once, at the edge it enters by (REST, MCP, the SDK's public methods,
the CLI, import): valid Unicode without the characters that corrupt storage, logs or terminals.

Refused, with the field named: lone surrogates (U+D800–U+DFFF, which JSON escapes can carry but UTF-8 cannot
encode: the tokenizer, SQLite and every JSON encoder downstream fail on them), NUL, and the C0 and C1
control characters other than tab, line feed and carriage return (escape sequences rewrite a reviewer's
terminal; DEL and the C1 block are as invisible). Everything a real language needs stays allowed:
zero-width joiners and non-joiners, right-to-left text and the bidirectional marks, combining marks, emoji.

Sizes are the callers' business (each field has its own limit); nesting depth is checked here, because a
structure too deep to walk is as unusable as bad text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from .errors import ValidationError

__all__ = ["MAX_DEPTH", "check_text", "check_value", "first_problem", "scrub", "text_problem"]

#: Deepest nesting of lists and objects accepted anywhere (the JSON of a real request is a few levels deep).
MAX_DEPTH = 64

_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def text_problem(text: str) -> str | None:
    """What is wrong with `text` in a short phrase, or None when it is fine."""
    found = _FORBIDDEN.search(text)
    if found is None:
        return None
    char = found.group()
    code = ord(char)
    where = f"at position {found.start()}"
    if code == 0:
        return f"contains a NUL character {where}"
    if 0xD800 <= code <= 0xDFFF:
        return f"contains a lone surrogate (U+{code:04X}) {where}; it is not valid Unicode"
    return f"contains a control character (U+{code:04X}) {where}"


def scrub(text: str) -> str:
    """`text` with every refused character replaced by U+FFFD: for text learnloop passes on but did not
    receive from its caller (a downstream tool's error message), where refusing would lose the rest."""
    return _FORBIDDEN.sub("\ufffd", text)


def check_text(text: str, field: str, *, max_chars: int | None = None) -> str:
    """`text` unchanged when it is valid, else a `ValidationError` naming `field`."""
    if not isinstance(text, str):
        raise ValidationError(f"{field} must be a string", field=field)
    problem = text_problem(text)
    if problem is not None:
        raise ValidationError(f"{field} {problem}", field=field)
    if max_chars is not None and len(text) > max_chars:
        raise ValidationError(f"{field} is longer than {max_chars} characters", field=field)
    return text


def first_problem(value: Any, path: str) -> tuple[str, str] | None:
    """The first (path, problem) in a value of strings, lists, tuples, sets, mappings and pydantic models,
    walked without recursion so that a hostile depth cannot exhaust the stack; None when all is fine."""
    stack: list[tuple[Any, str, int]] = [(value, path, 0)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, str):
            problem = text_problem(item)
            if problem is not None:
                return where, problem
            continue
        if item is None or isinstance(item, bool | int | float | bytes):
            continue
        if depth >= MAX_DEPTH:
            return where, f"is nested deeper than {MAX_DEPTH} levels"
        if isinstance(item, BaseModel):
            item = {name: getattr(item, name, None) for name in type(item).model_fields}
        if isinstance(item, Mapping):
            for key, sub in item.items():
                key_problem = text_problem(key) if isinstance(key, str) else None
                if key_problem is not None:
                    return f"{where} (a key)", key_problem
                stack.append((sub, f"{where}.{key}" if where else str(key), depth + 1))
        elif isinstance(item, list | tuple | set | frozenset):
            for index, sub in enumerate(item):
                stack.append((sub, f"{where}[{index}]", depth + 1))
    return None


def check_value(value: Any, field: str) -> None:
    """Every string inside `value` checked; a `ValidationError` names the path of the first bad one."""
    if isinstance(value, str):  # most arguments: a text checked without the walk's stack
        problem = text_problem(value)
        if problem is not None:
            raise ValidationError(f"{field} {problem}", field=field)
        return
    found = first_problem(value, field)
    if found is not None:
        where, problem = found
        raise ValidationError(f"{where} {problem}", field=where)
