"""What one turn hands to the next turn of its session, kept on the turn's record until then.

- `artifact`: the answer's procedure or snippet (`answers.answer_artifact`), saved only when a later message
  confirms the answer worked (it waits through a few follow-up questions, not through a new answer's own);
- `claims`: the answer's sentences that state numbers, so "I measured 1.046" next turn has the prediction
  it differs from;
- `question`: the message the answer replied to, so "No, I meant last month" knows what was misread;
- `confirmed`: learnings this turn saved from the previous answer (a retraction next turn deprecates them);
- `corrections`: the session's corrections in force (seed 001 §2 layer 1, "in-flight corrections"), shown with
  every later retrieval of the session.

Every text is kept only in the form the write gate's redact policy allows, and only until the next turn reads
it: the record of the turn after drops it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..models import LearningType
from .answers import AnswerArtifact
from .phrasing import sentences

__all__ = ["Carried", "numbered_sentences"]

_QUESTION_CHARS = 300
_CLAIM_CHARS = 800
_NUMBER = re.compile(r"\d")


@dataclass(frozen=True)
class Carried:
    question: str = ""
    claims: str = ""
    artifact: AnswerArtifact | None = None
    waited: int = 0  # later turns the artifact has waited through (a follow-up question before "that worked")
    confirmed: tuple[int, ...] = ()
    corrections: tuple[int, ...] = ()

    def data(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.question:
            data["question"] = self.question
        if self.claims:
            data["claims"] = self.claims
        if self.artifact is not None:
            a = self.artifact
            data["artifact"] = {"text": a.text, "type": a.type.value, "topic": a.topic, "rule": a.rule, "q": a.question}
            if self.waited:
                data["waited"] = self.waited
        if self.confirmed:
            data["confirmed"] = list(self.confirmed)
        if self.corrections:
            data["corrections"] = list(self.corrections)
        return data

    @classmethod
    def of(cls, data: Mapping[str, Any] | None) -> Carried:
        """Read back what `data` wrote; anything malformed (an older or hand-edited row) reads as nothing."""
        if not data:
            return cls()
        artifact = None
        raw = data.get("artifact")
        if isinstance(raw, Mapping) and isinstance(raw.get("text"), str):
            try:
                kind = LearningType(raw.get("type", "procedure"))
            except ValueError:
                kind = LearningType.PROCEDURE
            artifact = AnswerArtifact(
                raw["text"], kind, str(raw.get("topic", "")), str(raw.get("rule", "answer")), str(raw.get("q", ""))
            )
        return cls(
            question=_text(data.get("question"), _QUESTION_CHARS),
            claims=_text(data.get("claims"), _CLAIM_CHARS),
            artifact=artifact,
            waited=data["waited"] if isinstance(data.get("waited"), int) else 0,
            confirmed=_ids(data.get("confirmed")),
            corrections=_ids(data.get("corrections")),
        )


def numbered_sentences(answer: str) -> str:
    """The answer's sentences that carry a number (its predictions), clipped."""
    kept: list[str] = []
    size = 0
    for sentence in sentences(answer[:4000]):
        if _NUMBER.search(sentence):
            if size + len(sentence) > _CLAIM_CHARS:
                break
            kept.append(sentence)
            size += len(sentence) + 1
    return " ".join(kept)


def _text(value: object, limit: int) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _ids(value: object) -> tuple[int, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(v for v in value if isinstance(v, int) and not isinstance(v, bool))
