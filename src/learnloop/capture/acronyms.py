"""An acronym in one text and its words spelled out in the other are one term ("EU" / "European Union", "PTA" /
"Parent-Teacher Association"): dedupe compares the texts with the spelled-out run written as the acronym."""

from __future__ import annotations

import re

__all__ = ["acronyms_aligned"]

_ACRONYM = re.compile(r"\b([A-Z]{2,6})s?\b")
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?", re.UNICODE)
# Words an acronym skips: "Chicago Manual *of* Style" is CMOS, "Department *of* Motor Vehicles" DMV.
_SKIPPED = frozenset("of the and for & de del la le des du di der von van".split())


def acronyms_aligned(first: str, second: str) -> tuple[str, str]:
    """Both texts, each with any run of words that spells out an acronym of the other replaced by that acronym."""
    return _written_as_acronyms(first, second), _written_as_acronyms(second, first)


def _written_as_acronyms(text: str, other: str) -> str:
    for acronym in {m.group(1) for m in _ACRONYM.finditer(other)}:
        if re.search(rf"\b{acronym}s?\b", text):
            continue  # the text says the acronym itself
        span = _spelled_out(text, acronym)
        if span is not None:
            text = f"{text[: span[0]]}{acronym}{text[span[1] :]}"
    return text


def _spelled_out(text: str, acronym: str) -> tuple[int, int] | None:
    """Where a run of words whose initials, function words aside, are `acronym`'s letters starts and ends."""
    words = [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(text)]
    letters = acronym.casefold()
    for first in range(len(words)):
        at, index = 0, first
        while index < len(words) and at < len(letters):
            surface = words[index][0]
            word = surface.casefold()
            if len(surface) > 1 and surface.isupper():
                break  # another acronym ("UK" does not spell out "US")
            if word[0] == letters[at]:
                at += 1
            elif word not in _SKIPPED or at == 0:
                break
            index += 1
        # Two lower-case words ("in the team" for IT) spell too many acronyms by chance.
        capitalised = words[first][0][0] == acronym[0]
        if at == len(letters) and (capitalised or at >= 3):
            return words[first][1], words[index - 1][2]
    return None
