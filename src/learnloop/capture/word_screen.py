"""A quick screen for pattern searches that need one of a known set of words, or a short shape of digits.

The time patterns (`timing`) are a dozen case-insensitive regular expressions, each searched over the whole text:
on a retrieval's question that is a few hundred microseconds, as much as the hybrid search itself, and most
questions name no time at all. Each of those patterns needs, somewhere in its match, one of its own words standing
alone (bounded by `\\b` on both sides) or a short shape of digits ("2023", "3/5"). The text's words are read once
(`TextWords`), and `WordScreen.may_match` tells in a set lookup (or one tiny search) that a pattern cannot match,
so it need not run; when it cannot tell, it says yes, and the pattern runs as before. So no answer changes: only
searches that could not match are skipped.

The screen is exact for ASCII text only (lowercasing is then what the patterns' IGNORECASE does, and `\\w` and
`\\d` are ASCII): any other text goes to every pattern.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["TextWords", "WordScreen", "any_may_match"]

_WORD = re.compile(r"\w+")
_DIGIT = re.compile(r"[0-9]")
# Under IGNORECASE four letters that are not ASCII match ASCII ones (see `re`); no other does.
_ASCII_CASE_MATES = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


@dataclass(frozen=True)
class TextWords:
    """What the screens read of a text: whether it is ASCII and holds a digit, its words (lowercased `\\w` runs),
    and the text itself."""

    ascii: bool
    digit: bool
    words: frozenset[str]
    text: str

    @classmethod
    def of(cls, text: str) -> TextWords:
        if not text.isascii():
            return cls(False, True, frozenset(), text)
        return cls(True, _DIGIT.search(text) is not None, frozenset(_WORD.findall(text.lower())), text)


class WordScreen:
    """Of `words` (each of one or more `\\w` runs, as a pattern holds them), those an ASCII text needs one of for the
    pattern to match, unless it holds `shape` (a regular expression of digits and punctuation, searched only in
    text with a digit)."""

    def __init__(self, words: Iterable[str] = (), *, shape: str | None = None) -> None:
        self.shape = None if shape is None else re.compile(shape)
        needed: set[str] = set()
        for word in words:
            word = word.lower().translate(_ASCII_CASE_MATES)
            if not word.isascii():
                continue  # no ASCII text holds it
            # A word bounded by \b on both sides holds each of its runs as a whole run of the text: one is enough
            # to require, the longest (the rarest, as a rule: "morning" of "this morning").
            runs = _WORD.findall(word)
            if runs:
                needed.add(max(runs, key=len))
        self._needed = frozenset(needed)

    @property
    def needed(self) -> frozenset[str]:
        return self._needed

    def may_match(self, text: TextWords) -> bool:
        """False only when `text` is ASCII and holds none of the words and not the shape."""
        if not text.ascii or not self._needed.isdisjoint(text.words):
            return True
        return self.shape is not None and text.digit and self.shape.search(text.text) is not None


def any_may_match(screens: Iterable[WordScreen]) -> Callable[[TextWords], bool]:
    """Whether any of `screens` may match a text, in one set lookup for a text of no digit (most questions)."""
    listed = tuple(screens)
    every = frozenset().union(*(screen.needed for screen in listed))

    def may_match(text: TextWords) -> bool:
        if text.ascii and not text.digit:
            return not every.isdisjoint(text.words)
        return any(screen.may_match(text) for screen in listed)

    return may_match
