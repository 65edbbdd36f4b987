"""Hypothesis strategies for hostile input, shared by the fuzz suites of the SDK, the REST API and MCP.

Text: lone surrogates, NUL, C0 and C1 controls, right-to-left and zero-width characters, long tokens (up to
1 MB), mixed with ordinary text and the exact reproductions of issue 17. JSON: values nested far deeper than
any request needs.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

__all__ = ["REPRODUCTIONS", "deep_json", "hostile_text", "hostile_value"]

REPRODUCTIONS = [
    "Alice kettle \ud800 hops",
    "Actually we use " + "x=1&" * 260,
    "Kettle\x00holds 30 L",
    "Kettle \x1b[2J\x1b]8;;http://evil.example\x07holds\x9b31m 30 L\rOK",
    "\u202egnp.exe",  # right-to-left override
    "Dana's family \U0001f468\u200d\U0001f469\u200d\U0001f467 and \u05e7\u05d5\u05de\u05e7\u05d5\u05dd",
    "zero\u200bwidth\ufeffspace\u2060joiner",
    "\udfff",
    "",
    " ",
]

_SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, codec=None, categories=["Cs"])
_CONTROLS = st.sampled_from([chr(c) for c in (*range(0, 9), 11, 12, *range(14, 32), 127, *range(128, 160))])
_BIDI_AND_ZERO_WIDTH = st.sampled_from(
    ["\u200b", "\u200c", "\u200d", "\u200e", "\u200f", "\u202a", "\u202e", "\u2066", "\u2069", "\ufeff", "\u2060"]
)
_SCRIPTS = st.sampled_from(["\u05d0", "\u0627", "\u0915", "\u094d", "\u4e2d", "é", "\U0001f37a", "a", " ", "\n", "\t"])
_CHARACTERS = st.one_of(st.characters(codec="utf-8"), _SURROGATES, _CONTROLS, _BIDI_AND_ZERO_WIDTH, _SCRIPTS)


def _long_token(unit: str, length: int) -> str:
    return (unit * (length // len(unit) + 1))[:length]


hostile_text: st.SearchStrategy[str] = st.one_of(
    st.sampled_from(REPRODUCTIONS),
    st.text(alphabet=_CHARACTERS, max_size=40),
    st.builds(
        lambda prefix, hostile: prefix + hostile,
        st.sampled_from(["Kettle holds 30 L ", "rain in Paris "]),
        st.text(alphabet=_CHARACTERS, min_size=1, max_size=8),
    ),
    st.builds(
        _long_token,
        st.sampled_from(["x", "x=1&", "é", "\u05d0", "\U0001f37a"]),
        st.sampled_from([1_000, 20_000, 1_000_000]),
    ),
)


def deep_json(depth: int) -> Any:
    """A list nested `depth` levels deep (built without recursion)."""
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


hostile_value: st.SearchStrategy[Any] = st.one_of(
    hostile_text,
    st.lists(hostile_text, max_size=3),
    st.dictionaries(hostile_text, hostile_text, max_size=2),
    st.sampled_from([100, 1_000, 50_000]).map(deep_json),
)
