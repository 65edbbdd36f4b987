"""A quick screen for pattern searches that need a digit or one of a known set of words.

The time patterns (`timing`) are a dozen case-insensitive regular expressions, each searched over the whole text:
on a retrieval's question that is a few hundred microseconds, as much as the hybrid search itself, and most
questions name no time at all. Every one of those patterns needs, somewhere in its match, a digit or one of its
words standing alone (bounded by `\\b` on both sides). `WordScreen.may_match` tells in a few microseconds that a
text holds neither, so the patterns need not run; when it cannot tell, it says yes, and they run as before. So
the patterns' answer never changes: only the texts they could not match skip them.

The screen is exact for ASCII text only (lowercasing is then what the patterns' IGNORECASE does, and `\\w` and
`\\d` are ASCII): any other text passes to the patterns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["WordScreen"]

_WORD = re.compile(r"\w+")
_DIGIT = re.compile(r"[0-9]")
_ASCII_CASE_MATES = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


class WordScreen:
    """Of `words` (each of one or more `\\w` runs, as the patterns hold them), those an ASCII text can hold."""

    def __init__(self, words: Iterable[str]) -> None:
        needed: set[str] = set()
        for word in words:
            # Under IGNORECASE four letters that are not ASCII match ASCII ones (see `re`); no other does.
            word = word.lower().translate(_ASCII_CASE_MATES)
            if not word.isascii():
                continue
            runs = _WORD.findall(word)
            # A word bounded by \b on both sides holds each of its runs as a whole run of the text: one is enough
            # to require, the longest (the rarest, as a rule: "morning" of "this morning").
            if runs:
                needed.add(max(runs, key=len))
        self._needed = frozenset(needed)

    def may_match(self, text: str) -> bool:
        """False only when `text` is ASCII and holds no digit and none of the words as a whole `\\w` run."""
        if not text.isascii():
            return True
        lowered = text.lower()
        return _DIGIT.search(lowered) is not None or not self._needed.isdisjoint(_WORD.findall(lowered))
