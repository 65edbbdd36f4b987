"""Seed 001 §8.7: "No, I meant last month" — what the user meant, and what the assistant misread.

The message says only what was meant; what was misread is in the previous turn. It is found by shape: a time
range for a time range ("last week" → "last month"), a phrase with the same head noun ("the staging server" →
"the production server"), a name for a name. When nothing of that shape is there, the correction is kept with
what was meant alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Meant", "meant"]

_LEADS = (
    r"(?:(?:no|nope|nah|sorry|oops|oh|ah|actually|wait|hmm|not that|that's not it|that's wrong|nein|non|não|nee|nie)"
    r"[\s,.!:;-]+)*"
)
_SAYS = (
    r"(?:i|we)\s+(?:meant|mean|was asking about|was talking about|wanted|asked for|asked about)"
    r"|ich meinte|ich meine|me refer[ií]a a|quise decir|quería decir|je voulais dire|je parlais de|intendevo|"
    r"volevo dire|eu quis dizer|quis dizer|queria dizer|ik bedoelde|ik bedoel|miałem na myśli|miałam na myśli|"
    r"chodziło mi o"
)
_MEANT = re.compile(
    rf"^{_LEADS}(?:{_SAYS})\s+(?P<new>[^,;.!?]{{2,80}}?)"
    r"(?:\s*[,;]?\s*(?:not|instead of|rather than|nicht|no|pas|non|não|niet|nie)\s+(?P<old>[^,;.!?]{2,80}?))?"
    r"\s*[.!]*$",
    re.IGNORECASE,
)
# "not the staging server, production" / "not the whole network — just the two tablets"
_NOT_THEN = re.compile(
    r"^(?:(?:no|nope|sorry|oh|ah|wait)[\s,.!:;-]+)?not\s+(?P<old>[^,;.!?—–]{2,60}?)\s*(?:[,;—–]|\s-)\s*"
    r"(?:but\s+|just\s+|only\s+|rather\s+|i mean\s+|i meant\s+)*(?P<new>[^,;.!?—–]{2,60}?)\s*(?:[.!,;]|$)",
    re.IGNORECASE,
)
_NOT_A_THING = frozenset(
    "sure really quite yet now bad great much exactly that this it so too very right today me you at all".split()
)
_PERIOD = (
    r"(?:(?:last|this|next|past|previous|prior|coming|current)\s+(?:\d+\s+)?(?:business\s+|fiscal\s+|calendar\s+)?"
    r"(?:day|week|weekend|month|quarter|year|fy|sprint|season)s?"
    r"|yesterday|today|tomorrow|(?:year|month|quarter|week)[- ]to[- ]date|ytd|mtd|qtd|q[1-4](?:\s+\d{4})?|h[12]"
    r"|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*(?:\s+\d{4})?|(?:19|20)\d\d)"
)
_PERIOD_FULL = re.compile(rf"^(?:the\s+|for\s+|in\s+|over\s+)?{_PERIOD}$", re.IGNORECASE)
_PERIOD_ANY = re.compile(rf"\b{_PERIOD}\b", re.IGNORECASE)
_ARTICLE = re.compile(r"^(?:the|a|an|my|our|for|in|on|at)\s+", re.IGNORECASE)
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w-]+(?:\s+[A-Z][\w-]+)?")


@dataclass(frozen=True)
class Meant:
    new: str
    old: str  # "" when the previous turn holds nothing of the same shape

    @property
    def text(self) -> str:
        return f"User meant {self.new}, not {self.old}" if self.old else f"User meant {self.new}"


def meant(message: str, previous_question: str, previous_answer: str = "") -> Meant | None:
    """The correction in `message`, with the misread phrase from the previous question (else its answer)."""
    text = " ".join(message.split()).strip()
    match = _MEANT.match(text)
    if match is None:
        contrast = _NOT_THEN.match(text)
        if contrast is None:
            return None
        old, new = contrast.group("old").strip(), contrast.group("new").strip()
        if {w.casefold() for w in old.split()} <= _NOT_A_THING or {w.casefold() for w in new.split()} <= _NOT_A_THING:
            return None
        return Meant(new, old)
    new = match.group("new").strip()
    old = (match.group("old") or "").strip()
    if not old:
        for said in (previous_question, previous_answer):
            old = _same_shape(new, said)
            if old:
                break
    if old.casefold() == new.casefold():
        old = ""
    return Meant(new, old)


def _same_shape(new: str, said: str) -> str:
    if not said:
        return ""
    core = _ARTICLE.sub("", new)
    if _PERIOD_FULL.match(core):
        for found in _PERIOD_ANY.finditer(said):
            if found.group(0).casefold() != core.casefold():
                return found.group(0)
        return ""
    words = core.split()
    if len(words) >= 2 and len(words[-1]) >= 3:
        head = re.escape(words[-1])
        pattern = re.compile(rf"\b((?:[\w-]+\s+){{1,2}}){head}\b", re.IGNORECASE)
        for found in pattern.finditer(said):
            phrase = _ARTICLE.sub("", found.group(0))
            if phrase.casefold() != core.casefold():
                return phrase
        return ""
    if words and words[0][:1].isupper():
        for found in _NAME.finditer(said):
            if found.group(0).casefold() not in core.casefold() and found.group(0) not in ("I", "I'm"):
                return found.group(0)
    return ""
