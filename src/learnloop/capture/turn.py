"""What a rule sees and returns: the turn (`TurnView`), a statement draft (`Draft`), the `Rule` record, and the
shared checks that keep vague or conversation-bound text out ("I love that!", "I have a question").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..models import LearningType
from ..terms import query_terms, stem
from .phrasing import PRONOUN_HEADS, Claim, Value, find_claims

__all__ = [
    "EVENT_NOUNS",
    "PERSONAL_NOUNS",
    "Draft",
    "Render",
    "Rule",
    "TurnView",
    "clean_object",
    "content_terms",
    "hedged",
    "one_off",
]


@dataclass(frozen=True)
class Draft:
    text: str
    topic: str = ""


class TurnView:
    """The turn as rules see it: the assistant's message is read lazily, for claims and mentions only."""

    def __init__(self, user: str, assistant: str) -> None:
        self.user = user
        self.assistant = assistant
        self._claims: list[Claim] | None = None
        self._stems: frozenset[str] | None = None

    def claims(self) -> list[Claim]:
        if self._claims is None:
            self._claims = find_claims(self.assistant[:4000])
        return self._claims

    def mentions(self, text: str) -> bool:
        """Does `text` share a content word with the assistant's message (is it about what was said)?"""
        if self._stems is None:
            self._stems = frozenset(stem(w) for w in query_terms(self.assistant[:4000], limit=400))
        return any(stem(w) in self._stems for w in query_terms(text))

    def claim_for(self, value: Value, hint: str = "") -> Claim | None:
        """The assistant's claim this value answers: same kind of unit, a different number, best subject match."""
        hint_stems = {stem(w) for w in query_terms(hint)}
        best: tuple[int, Claim] | None = None
        for claim in self.claims():
            if not value.compatible(claim.value) or claim.value.number == value.number:
                continue
            score = len(hint_stems & {stem(w) for w in query_terms(claim.subject)})
            if best is None or score > best[0]:
                best = (score, claim)
        return best[1] if best else None


Render = Callable[[re.Match[str], TurnView], Draft | None]


@dataclass(frozen=True)
class Rule:
    """One teaching-moment pattern. `correctable` rules also run on the rest of a sentence after "No, …"."""

    id: str
    type: LearningType
    pattern: re.Pattern[str]
    render: Render
    triggers: tuple[str, ...]
    confidence: float = 0.6
    correctable: bool = field(default=False)


#: People and pets: "my kids are too young" is about a life, not about a setup the assistant works with.
PERSONAL_NOUNS = frozenset(
    "kid kids son sons daughter daughters child children wife husband partner mom mum dad mother father parents "
    "friend friends family sister brother boss girlfriend boyfriend dog cat dogs cats baby grandma grandpa "
    "weather name email phone number address password birthday age".split()
)
_GENERIC = frozenset("thing things stuff lot lots bit time times way kind sort question idea".split())
#: Appointments and happenings: "we have a meeting at 3" is true once.
EVENT_NOUNS = frozenset(
    "meeting call appointment date deadline party trip interview flight exam class game event plan plans".split()
)
_VAGUE_START = frozenset("to-hear to-see the-idea the-way hearing seeing".split())
_ROLES = frozenset({"user", "user's", "assistant", "assistant's"})
_ANAPHORA = re.compile(
    r"\b(?:it|it's|its|them|they|they're|their|he|she|him|his|her|this|these|those)\b|"
    r"\b(?:to|in|at|on|with|of|for|about|from|into|like|love|enjoy|prefer|\w+ing)\s+that\b|that$",
    re.IGNORECASE,
)
#: One-off moments: "the weather was too hot yesterday" is not a standing fact or taste.
_ONE_OFF = re.compile(
    r"\b(?:today|tonight|yesterday|tomorrow|this (?:morning|afternoon|evening)|last night|right now|at the moment)\b",
    re.IGNORECASE,
)
_IFFY = frozenset("if whether wonder maybe might perhaps hope wish guess unless suppose imagine".split())


def content_terms(text: str) -> list[str]:
    return [t for t in query_terms(text) if t not in _GENERIC and t not in _ROLES]


def clean_object(obj: str, *, max_words: int = 16) -> str | None:
    """The object of a statement, or None when it only points back into the conversation or says nothing."""
    obj = obj.strip(" ,.;:!-\"'")
    words = obj.split()
    if not words or len(words) > max_words:
        return None
    first = words[0].casefold()
    if first in PRONOUN_HEADS or "-".join(w.casefold() for w in words[:2]) in _VAGUE_START:
        return None
    # "having them around", "escaping to that world": the object leans on something only the chat knows.
    if _ANAPHORA.search(obj):
        return None
    return obj if content_terms(obj) else None


def one_off(match: re.Match[str]) -> bool:
    return bool(_ONE_OFF.search(match.string))


def hedged(match: re.Match[str]) -> bool:
    """A hypothetical or a doubt just before the match: "if I prefer…", "I wonder whether we use…"."""
    before = match.string[: match.start()].casefold().split()[-3:]
    return any(w.strip(",") in _IFFY for w in before)
