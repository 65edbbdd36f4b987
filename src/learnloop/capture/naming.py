"""Whose value it is and which: names that are the value a change gives, relations that only describe a name.

`evidence.compare` asks here when two texts name different things: "User's piano teacher is Mrs. Halvorsen" /
"User studies piano with Daniel Cho these days" name a new value of one attribute (a word of change, names
past the subject); "Mochi the cat" is Mochi, while "Tom's cat" is not Tom.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from ..terms import stem
from .lexicon import CORRECTION, WEAK_CORRECTION

__all__ = ["change_names", "digits", "named", "topic_swap"]


class _Token(Protocol):
    """A word as `evidence.profile` reads it."""

    @property
    def surface(self) -> str: ...
    @property
    def folded(self) -> str: ...
    @property
    def kind(self) -> str: ...


class TextProfile(Protocol):
    """What this module reads of `evidence.TextProfile`."""

    @property
    def text(self) -> str: ...
    @property
    def names(self) -> frozenset[str]: ...
    @property
    def tokens(self) -> Sequence[_Token]: ...


_APPOSITION_GAP = frozenset("the a an my our his her their le la l' el der die das il lo o , -".split())


def digits(text: TextProfile) -> set[str]:
    """The text's numbers as labels ("#4421"): the same digits in the other text are the same label, whether
    they were read there as a label or a value ("account ending 4421 earns" / "… 4421 now pays")."""
    return {f"#{t.folded}" for t in text.tokens if t.folded.isdigit()}


def _possessive(token: _Token) -> bool:
    return token.surface.endswith(("'s", "’s"))


def named(text: TextProfile, relations: frozenset[str], names: frozenset[str]) -> frozenset[str]:
    """The relations of a text without those that only describe a name both texts give ("Mochi the *cat*",
    "le *chat* Filou", "the user's *cat* Luna"): those are the named one, not a relative ("Tom's *cat*")."""
    if not names or not relations:
        return relations
    tokens = text.tokens
    described: set[str] = set()
    for index, token in enumerate(tokens):
        if token.kind != "marker" or token.folded not in relations:
            continue
        for step in (-1, 1):
            at = index + step
            # "Biscuit, the user's dog": an owner between a name and its relation is part of the gap, unless
            # the owner is itself a name ("Kenji Mori's spouse": Mori's).
            while 0 <= at < len(tokens) and (
                tokens[at].folded in _APPOSITION_GAP
                or (_possessive(tokens[at]) and tokens[at].kind != "marker" and tokens[at].folded not in names)
            ):
                at += step
            if 0 <= at < len(tokens) and tokens[at].folded in names and not _possessive(tokens[at]):
                described.add(token.folded)
    return relations - frozenset(described)


def change_names(new: TextProfile, old: TextProfile, added: set[str], gone: set[str]) -> bool:
    """Are the names the new text brings the value a change word gives ("moved to *Bilbao*", "upgraded to an
    iPhone *15*", "se mudó a *Bilbao*") in place of names the old text gives as its value, not as its subject
    ("*Tom*'s phone is …" / "The user upgraded to …" stays two subjects)?

    A weaker word of change ("now", "these days", "as of", "since", "new") counts too when the names of both
    texts stand past their first two words, where a value stands ("User's piano teacher is Mrs. Halvorsen" /
    "User studies piano with Daniel Cho these days"), not a subject ("Anna now lives in Berlin")."""
    if not _past_first_words(old, gone):
        return False
    changes = [m for m in CORRECTION.finditer(new.text) if m.group(0).casefold() not in WEAK_CORRECTION]
    if changes:
        after = changes[0].end()
        folded_new = new.text.casefold()
        if all(folded_new.find(n.lstrip("#").casefold()) >= after for n in new.names if stem(n) in added):
            return True
    weak = CORRECTION.search(new.text) is not None or _NEW_HOLDER.search(new.text) is not None
    return weak and _past_first_words(new, added)


# "The user's *new* manager is …": a new holder of the same role.
_NEW_HOLDER = re.compile(
    r"\b(?:new|nieuwe?|neue[rsnm]?|nouvel(?:le)?|nouveau|nuev[oa]|nov[oa]|nuov[oa]|ny[ae]?|yeni|baru)\b", re.I
)


def _past_first_words(text: TextProfile, names: set[str]) -> bool:
    folded = text.text.casefold()
    first_words = len(" ".join(folded.split()[:2]))
    return all(folded.find(n.lstrip("#").casefold()) > first_words for n in text.names if stem(n) in names)


# The topic a Korean or Japanese sentence opens with ("아반떼 엔진오일*은*", "大阪支店*は*"): what it is about.
_KOREAN_TOPIC = re.compile(r"([가-힣A-Za-z0-9]{2,}?)(?:은|는)(?=\s)")
_JAPANESE_TOPIC = re.compile(r"([\u30a0-\u30ff\u4e00-\u9fffA-Za-z0-9]+)は")
# The user said in the first or third person, and times ("今は": now), are no topic of their own.
_NO_TOPIC = frozenset("사용자 유저 나 저 우리 ユーザー 私 僕 俺 わたし 今 現在 最近 毎日 毎朝 いつも".split())


def topic_swap(new: str, old: str) -> str | None:
    """Two Korean or Japanese texts about two topics ("엔진오일은" / "타이어는"), neither of which the other
    text names at all, or None."""
    first, second = _topic(new), _topic(old)
    if first is None or second is None or first == second:
        return None
    if first in old or second in new:
        return None
    return f"{second} vs {first}"


def _topic(text: str) -> str | None:
    match = _KOREAN_TOPIC.search(text) or _JAPANESE_TOPIC.search(text)
    if match is None or match.group(1) in _NO_TOPIC or match.group(1).endswith(("ユーザー", "사용자")):
        return None
    return match.group(1)
