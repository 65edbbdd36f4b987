"""Which of the gate rules' key strings a text holds, found in one pass.

Most gate rules only run when one of their `needles` (a substring of the lowered text) is there. Asking each
rule in turn meant ~1,400 substring searches per check, most of a benign text's gate time; an Aho-Corasick
automaton (`pyahocorasick`) over all of them finds every needle present in one pass over the text.

A rule that declares no needles gets them from its pattern (`literal_needles`): strings one of which every
match must contain. Python's `re` tries each branch of a long alternation at every position of the text
(150 condition words: ~200 µs on a 200-character text); the automaton rules such texts out in a few.
"""

from __future__ import annotations

import functools
import importlib
import re
import sys
from collections.abc import Iterable, Iterator
from typing import Any

import ahocorasick

__all__ = ["Folded", "NeedleIndex", "literal_needles", "needle_groups"]

_WORD = re.compile(r"\w+")
_NON_WORD = re.compile(r"\W+")

# The standard library's own regular-expression parser: the only reader of exactly the syntax `re` accepts.
_parser: Any = importlib.import_module("re._parser")
_constants: Any = importlib.import_module("re._constants")
_LITERAL = _constants.LITERAL
_AT = _constants.AT
_AT_BOUNDARY = _constants.AT_BOUNDARY
_BRANCH = _constants.BRANCH
_SUBPATTERN = _constants.SUBPATTERN
_ATOMIC = getattr(_constants, "ATOMIC_GROUP", None)
_REPEATS = tuple(
    op for op in (getattr(_constants, n, None) for n in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")) if op
)


class NeedleIndex:
    """All needles of a set of rules; `present(text)` is the set of them `text` contains."""

    def __init__(self, needles: Iterable[str]) -> None:
        self._automaton = ahocorasick.Automaton()
        for needle in set(needles):
            if needle:  # "" is in every text: the gate never skips a rule holding it
                self._automaton.add_word(needle, needle)
        self._empty = len(self._automaton) == 0
        if not self._empty:
            self._automaton.make_automaton()

    def holds_any(self, text: str) -> bool:
        """Whether `text` (lowered) holds one of the needles (see `present`)."""
        return not self._empty and next(self._automaton.iter(_hay(text)), None) is not None

    def present(self, text: str) -> frozenset[str]:
        """The needles in `text`, a lowered text, or in its word view (every run of non-word characters one
        space, a space at each end), where a needle " word " stands for the whole word."""
        if self._empty:
            return frozenset()
        return frozenset(needle for _, needle in self._automaton.iter(_hay(text)))


@functools.lru_cache(maxsize=16)  # a check reads one lowered text through many indexes: build its view once
def _hay(text: str) -> str:
    """The lowered text, then its word view: each run of non-word characters one space, a space at each end."""
    return f"{text}\n {_NON_WORD.sub(' ', text)} "


class Folded:
    """A case-insensitive pattern, matched in the lowered text without `re.IGNORECASE` (Python's `re` folds case
    at every step: 3-4x slower on a long alternation), after a one-pass check that one of its needles is there.

    Match positions are the text's (lowering kept its length; if it did not, the case-folding pattern runs on the
    text itself), but a match's groups are lowered: read values from the text by span. The pattern must not
    tell case apart inside it (no lone ``[A-Z]``): a test compares both ways on the gate's corpora.
    """

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self._lowered = re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE)
        needles = literal_needles(pattern)
        self._index = NeedleIndex(needles) if needles else None

    def search(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return next(self.finditer(text, pos, endpos), None)

    def finditer(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        lowered = text.lower()
        if len(lowered) != len(text):
            return self.pattern.finditer(text, pos, endpos)
        if self._index is not None and not self._index.holds_any(lowered):
            return iter(())
        return self._lowered.finditer(lowered, pos, endpos)


def literal_needles(pattern: re.Pattern[str] | str) -> tuple[str, ...]:
    """Lower-case strings at least one of which is in the lowered text of every match of `pattern`; () when
    no useful set exists (a branch with no literal, a pattern the parser does not read)."""
    groups = needle_groups(pattern)
    return groups[0] if groups else ()


def needle_groups(pattern: re.Pattern[str] | str) -> tuple[tuple[str, ...], ...]:
    """Every set of lower-case strings the lowered text of every match of `pattern` holds one of, best filter
    first: one per required part of the pattern ("(?:tell|inform) the user … (?:fine|safe)" gives the verbs'
    set and the adjectives' set). () when none is useful."""
    source = pattern.pattern if isinstance(pattern, re.Pattern) else pattern
    flags = pattern.flags if isinstance(pattern, re.Pattern) else 0
    try:
        parsed = _parser.parse(source, flags)
    except (re.error, RecursionError, TypeError):
        return ()
    return tuple(
        tuple(sorted(found))
        for found in sorted(_candidates(list(parsed)), key=_filtering, reverse=True)
        # a one-letter needle is in every text: no filter at all
        if not any(len(n) < 2 and n.isascii() for n in found) and not any(n.isspace() for n in found)
    )


def _required(items: list[tuple[Any, Any]], left: bool = False, right: bool = False) -> frozenset[str] | None:
    """The best set of needles for a sequence of parsed items: every match of the sequence holds one."""
    candidates = _candidates(items, left, right)
    return max(candidates, key=_filtering) if candidates else None


def _filtering(needles: frozenset[str]) -> tuple[int, int, int]:
    """How well a set filters: the set whose shortest needle is longest filters best (a two-letter needle is in
    many texts); a needle that is a word most texts hold (" from ", " the ") filters nothing, whatever its
    length."""
    return min(_strength(n) for n in needles), min(len(n) for n in needles), -len(needles)


def _candidates(items: list[tuple[Any, Any]], left: bool = False, right: bool = False) -> list[frozenset[str]]:
    """The sets of needles of a sequence of parsed items, one per part that has any: every match of the
    sequence holds one needle of each. `left` / `right`: a word boundary stands right before / after the
    sequence. A word between two boundaries is the needle " word ", looked up in the text's word view (see
    `NeedleIndex.present`)."""
    candidates: list[frozenset[str]] = []
    run: list[str] = []
    bounded = left

    def flush(boundary_after: bool) -> None:
        nonlocal bounded
        if run:
            text = "".join(run)
            if _WORD.fullmatch(text):
                text = (" " if bounded else "") + text + (" " if boundary_after else "")
            candidates.append(frozenset({text}))
            run.clear()
        bounded = False

    for index, (op, av) in enumerate(items):
        if op is _LITERAL:
            lowered = chr(av).lower()
            if len(lowered) == 1:
                run.append(lowered)
                continue
        if op is _AT and av is _AT_BOUNDARY:
            if run:
                flush(True)
            bounded = True
            continue
        before = bounded and not run
        flush(False)
        after = (index + 1 < len(items) and items[index + 1] == (_AT, _AT_BOUNDARY)) or (
            index + 1 == len(items) and right
        )
        found = None
        if op is _BRANCH:
            alternatives = [_required(list(alternative), before, after) for alternative in av[1]]
            if all(a is not None for a in alternatives):
                found = frozenset().union(*alternatives)  # type: ignore[arg-type]
        elif op is _SUBPATTERN:
            found = _required(list(av[-1]), before, after)
        elif op is _ATOMIC and _ATOMIC is not None:
            found = _required(list(av), before, after)
        elif op in _REPEATS and av[0] >= 1:
            found = _required(list(av[2]))
        if found:
            candidates.append(found)
    flush(right)
    return candidates


def _strength(needle: str) -> int:
    return 0 if all(word in _COMMON_WORDS for word in needle.split()) else len(needle)


# Words in most texts of the languages the rules read: as a needle they would let every text through.
_COMMON_WORDS = frozenset(
    """
    the a an of to in on at for from with by and or not no is are was be it this that these those as if
    never only always all any every real actual true just also than then so user users user's them him her me my
    you your we our they their before after about ask add include when whenever
    de la le les el los las der die das den dem und et y e o i il di da do du des del que en un une una um uma
    """.split()
)
