"""What the turn observer produces: `Artifact`, the context it works in, and the recalled-context guard.

An artifact is a *candidate* learning: one concise, reusable, third-person statement ("User's kettle boils
off 3.5 L/hr"), never a transcript. Nothing here touches a store; the caller passes artifacts through the
write gate and dedupe.

The recalled-context guard exists because the commonest junk in memory products is the agent's own memory
extracted again: learnloop put a text into the prompt, the model or the user echoed it, and the observer
stored it a second time. `strip_recalled_block` removes learnloop's `<learning_memories>` element from a
message and `is_recalled` recognises a near-copy of any text learnloop injected this turn.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..models import LearningType
from ..prompting import BLOCK_CLOSE, BLOCK_OPEN
from ..simhash import hamming, simhash64
from ..terms import query_terms, stem

__all__ = [
    "MAX_ARTIFACT_CHARS",
    "MAX_EVIDENCE_CHARS",
    "RECALL_HAMMING",
    "RECALL_OVERLAP",
    "Artifact",
    "ObserveContext",
    "RecallGuard",
    "clip",
    "is_recalled",
    "strip_recalled_block",
]

MAX_EVIDENCE_CHARS = 200
#: Longest artifact text: a learning is one concise statement, and a 1,000-character "sentence" is a pasted
#: token (a URL, a query string, a blob), not something to remember.
MAX_ARTIFACT_CHARS = 1000
#: SimHash distance at or below which two texts count as the same statement (the store's dedupe uses the
#: same scale; 6 of 64 bits tolerates punctuation, case and a changed word or two).
RECALL_HAMMING = 6
#: Share of an artifact's content stems found in one recalled text above which it is a restatement of it.
RECALL_OVERLAP = 0.8

# Both the exact element and an unterminated one (a prompt cut off by a token limit) are removed.
_BLOCK = re.compile(re.escape(BLOCK_OPEN) + r".*?(?:" + re.escape(BLOCK_CLOSE) + r"|\Z)", re.DOTALL)


def clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


class Artifact(BaseModel):
    """One candidate learning built from a turn.

    `category` is only a hint (the caller validates it against the namespace vocabulary); `rule` names what
    produced the artifact (a rule id, or ``"llm"``); `evidence` is the user-message span it came from.
    """

    model_config = ConfigDict(frozen=True)

    text: str = Field(min_length=1, max_length=MAX_ARTIFACT_CHARS)
    type: LearningType
    category: str | None = None
    topic: str = ""
    tags: list[str] = Field(default_factory=list)
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    rule: str
    evidence: str = ""

    @field_validator("evidence", mode="before")
    @classmethod
    def _clip_evidence(cls, value: Any) -> Any:
        # Evidence is for a reviewer to see where a learning came from, not a second copy of the message.
        return clip(value, MAX_EVIDENCE_CHARS) if isinstance(value, str) else value


@dataclass(frozen=True)
class ObserveContext:
    """What the caller knows about the turn besides the two messages.

    `recalled`: the texts learnloop itself put into this turn's prompt (never extracted again).
    `vocabulary_categories`: the namespace's category names, for category hints and the LLM prompt;
    `category_descriptions` optionally describes them for the LLM. `meta`: the turn's free-form metadata.
    """

    recalled: Sequence[str] = ()
    vocabulary_categories: Sequence[str] = ()
    category_descriptions: Mapping[str, str] = field(default_factory=dict)
    meta: Mapping[str, Any] = field(default_factory=dict)


def strip_recalled_block(text: str) -> str:
    """`text` without any `<learning_memories>` element learnloop rendered into it."""
    return _BLOCK.sub(" ", text) if BLOCK_OPEN in text else text


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_NEGATION = re.compile(r"\b(?:not|no|never|none|nothing|without)\b|n't\b", re.IGNORECASE)


def _stems(text: str) -> frozenset[str]:
    return frozenset(stem(word) for word in query_terms(text, limit=64))


def _shape(text: str) -> tuple[frozenset[str], bool]:
    """Numbers and polarity: a restatement keeps both, a correction ("68 C, not 66 C") changes one."""
    return frozenset(_NUMBER.findall(text)), bool(_NEGATION.search(text))


class RecallGuard:
    """Recognises restatements of the recalled texts; built once per turn, asked once per artifact."""

    def __init__(self, recalled: Sequence[str]) -> None:
        texts = [t for t in recalled if t and t.strip()]
        self._hashes = [simhash64(t) for t in texts]
        self._stems = [_stems(t) for t in texts]
        self._shapes = [_shape(t) for t in texts]

    def __bool__(self) -> bool:
        return bool(self._hashes)

    def matches(self, text: str) -> bool:
        if not self._hashes:
            return False
        numbers, negated = _shape(text)
        digest = simhash64(text)
        mine = _stems(text)
        needed = 1.0 if len(mine) < 4 else RECALL_OVERLAP
        for recalled_hash, theirs, (their_numbers, their_negated) in zip(
            self._hashes, self._stems, self._shapes, strict=True
        ):
            # A new number or a flipped polarity is new information (usually a correction of the recalled
            # text), which dedupe must see as a conflict rather than this guard dropping it as an echo.
            if not numbers <= their_numbers or negated != their_negated:
                continue
            if hamming(digest, recalled_hash) <= RECALL_HAMMING:
                return True
            # SimHash misses a recalled fact put in a new frame ("User's kettle is …" from "Kettle is …");
            # content-stem containment catches it. Short texts need every stem to match.
            if mine and theirs and len(mine & theirs) / len(mine) >= needed:
                return True
        return False


def is_recalled(text: str, recalled: Sequence[str]) -> bool:
    """Is `text` a near-copy of one of the texts learnloop injected (SimHash ≤ 6 bits or ≥ 80% stems)?"""
    return RecallGuard(recalled).matches(text)
