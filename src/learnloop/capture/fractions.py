"""Fractions written in words, read as values: "a quarter of an hour", "three-quarter-hour", "a quarter-acre
lot", "ein Zehntel seines Gehalts", "un quart d'heure", "media hora", "een kwartier".

`quantities` reads them beside its numbers, so that "45 minutes" and "a three-quarter-hour lesson", or "10 %"
and "ein Zehntel", are one value. A fraction of a unit is that much of the unit; a fraction of anything else
is a proportion, in percent. A bare "quarter" (not "a quarter") counts only before a unit: "the French
Quarter" and "next quarter" measure nothing.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .units import resolve

__all__ = ["Fraction", "fractions"]

_PARTS = {
    # English
    "a quarter": 0.25, "one quarter": 0.25, "three quarters": 0.75, "three quarter": 0.75,
    "a third": 1 / 3, "one third": 1 / 3, "two thirds": 2 / 3, "a tenth": 0.1, "one tenth": 0.1,
    # German, French, Spanish, Italian, Portuguese, Dutch
    "ein viertel": 0.25, "eine viertel": 0.25, "dreiviertel": 0.75, "drei viertel": 0.75,
    "ein drittel": 1 / 3, "zwei drittel": 2 / 3, "ein zehntel": 0.1,
    "un quart": 0.25, "trois quarts": 0.75, "un tiers": 1 / 3, "deux tiers": 2 / 3, "un dixième": 0.1,
    "un cuarto": 0.25, "tres cuartos": 0.75, "un tercio": 1 / 3, "dos tercios": 2 / 3,
    "un quarto": 0.25, "tre quarti": 0.75, "un terzo": 1 / 3, "due terzi": 2 / 3,
    "um quarto": 0.25, "três quartos": 0.75, "um terço": 1 / 3, "dois terços": 2 / 3,
    "een kwart": 0.25, "driekwart": 0.75, "drie kwart": 0.75, "een derde": 1 / 3, "twee derde": 2 / 3,
}  # fmt: skip
# Words that are a fraction of an hour by themselves.
_OF_AN_HOUR = {
    "viertelstunde": 0.25, "dreiviertelstunde": 0.75, "halbe stunde": 0.5, "kwartier": 0.25, "driekwartier": 0.75,
    "half uur": 0.5, "demi-heure": 0.5, "media hora": 0.5, "meia hora": 0.5, "mezz'ora": 0.5, "mezza ora": 0.5,
}  # fmt: skip
# A bare "quarter" before its unit: "a quarter-acre lot", "three-quarter-hour lesson" (with its article).
_BARE = {"quarter": 0.25, "viertel": 0.25, "kwart": 0.25}


def _alternatives(words: dict[str, float]) -> str:
    spelled = sorted(words, key=len, reverse=True)
    return "|".join(re.escape(w).replace(r"\ ", r"[\s-]") for w in spelled)


_FRACTION = re.compile(
    rf"(?<![\w-])(?:(?P<hour>{_alternatives(_OF_AN_HOUR)})|(?P<part>{_alternatives(_PARTS)})|(?P<bare>"
    rf"{_alternatives(_BARE)}))(?![\w])",
    re.IGNORECASE,
)
# What joins a fraction to what it is of: "of an", "of the", "d'", "de", "di", "da", "-", a space.
_OF = re.compile(r"(?:\s+of(?:\s+(?:an|a|the)\b)?|\s+d[e'’]\s?|\s+d[ia]\s|\s+du\s|-|\s)\s*", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def _key(words: str) -> str:
    return re.sub(r"[\s-]+", " ", words.casefold())


_HOURS = {_key(words): value for words, value in _OF_AN_HOUR.items()}
_VALUES = {_key(words): value for words, value in (_PARTS | _BARE).items()}


class Fraction(NamedTuple):
    value: float
    unit: str  # "" with "%": a proportion of something that is not a unit
    start: int
    stop: int


def fractions(text: str) -> list[Fraction]:
    """Every fraction written in words in `text`, in order."""
    found: list[Fraction] = []
    for match in _FRACTION.finditer(text):
        if match.group("hour"):
            found.append(Fraction(_HOURS[_key(match.group("hour"))], "hour", match.start(), match.end()))
            continue
        value = _VALUES[_key(match.group("part") or match.group("bare"))]
        joined = _OF.match(text, match.end())
        word = _WORD.match(text, joined.end()) if joined else None
        if word is not None and (_key(word.group(0)) in ("heure", "hora", "ora", "uur", "stunde", "hour")):
            found.append(Fraction(value, "hour", match.start(), word.end()))
        elif word is not None and resolve(word.group(0)) is not None:
            found.append(Fraction(value, word.group(0), match.start(), word.end()))
        elif match.group("part"):
            found.append(Fraction(value * 100, "%", match.start(), match.end()))
    return found
