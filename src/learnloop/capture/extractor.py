"""The LLM extractor: candidate learnings from one turn through any `ChatModel`, one call per turn at most.

`LLMExtractor(chat).extract(user_message, assistant_message, context=…)` sends the prompt in
`prompts/extract.md` (the namespace's categories, the learning types, the texts learnloop recalled into the
turn as "already known") with the turn, asks for a JSON object, and validates it with pydantic.

It never raises into the caller's turn: an `LLMError`, a timeout, malformed JSON or the wrong shape is logged
as a warning and yields `[]`. Items are validated one by one; an invalid item is dropped, not the reply.
What survives is checked like the rule observer's output: it must be grounded in the *user's* message (its
evidence, or failing that its words — a model summarising the assistant's answer is the commonest junk),
must not restate a recalled text, and its category must be one of the namespace's.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Sequence
from importlib import resources
from string import Template
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..llms.base import ChatModel, Message
from ..models import LearningType
from ..terms import query_terms, stem
from .artifacts import Artifact, ObserveContext, RecallGuard, clip, strip_recalled_block

__all__ = ["TYPE_DESCRIPTIONS", "LLMExtractor", "build_messages"]

logger = logging.getLogger(__name__)

TYPE_DESCRIPTIONS: dict[LearningType, str] = {
    LearningType.FACT: "something true about the user's equipment, data, tools or environment",
    LearningType.PREFERENCE: "how the user likes things done",
    LearningType.PROCEDURE: "steps or a fix that worked",
    LearningType.SNIPPET: "a short reusable piece of code, query or configuration",
    LearningType.PATTERN: "a recurring situation and how to handle it",
    LearningType.DECISION: "a choice the user made, with its reason",
    LearningType.FAQ: "a question the user asks repeatedly, with its answer",
    LearningType.CORRECTION: "the assistant was wrong; what is true instead",
}
_MAX_TURN_CHARS = 6000
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)
#: Share of the evidence's content words that must occur in the user's message.
_GROUNDING = 0.5
#: Share of a condensed artifact's content words that must come from the artifact it condenses.
_CONDENSED_GROUNDING = 0.7


@functools.cache
def _condense_template() -> Template:
    return Template(resources.files("learnloop.capture").joinpath("prompts/condense.md").read_text("utf-8"))


@functools.cache
def _template() -> Template:
    return Template(resources.files("learnloop.capture").joinpath("prompts/extract.md").read_text("utf-8"))


class _Item(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str = Field(min_length=8, max_length=500)
    type: LearningType
    category: str | None = None
    topic: str = Field(default="", max_length=200)
    tags: list[str] = Field(default_factory=list, max_length=16)
    confidence: float = Field(default=0.6, ge=0.0, le=1.0)
    evidence: str = ""

    @field_validator("type", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().casefold() if isinstance(value, str) else value

    @field_validator("tags", mode="before")
    @classmethod
    def _tags(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


def build_messages(user_message: str, assistant_message: str, context: ObserveContext, max_items: int) -> list[Message]:
    """The system prompt (rules, types, categories) and the turn with its already-known texts."""
    names = list(context.vocabulary_categories)
    categories = "\n".join(f"- {n}: {context.category_descriptions.get(n, '')}".rstrip(": ") for n in names)
    types = "\n".join(f"- {t.value}: {d}" for t, d in TYPE_DESCRIPTIONS.items())
    system = _template().substitute(max_items=max_items, types=types, categories=categories or "(none: use null)")
    known = "\n".join(f"- {' '.join(t.split())}" for t in context.recalled if t.strip()) or "(nothing)"
    turn = (
        f"ALREADY KNOWN (recalled from memory into this turn; do not repeat):\n{known}\n\n"
        f"USER MESSAGE:\n<<<\n{user_message[:_MAX_TURN_CHARS]}\n>>>\n\n"
        f"ASSISTANT MESSAGE (context only):\n<<<\n{assistant_message[:_MAX_TURN_CHARS]}\n>>>"
    )
    return [Message(role="system", content=system), Message(role="user", content=turn)]


class LLMExtractor:
    """Extracts at most `max_items` artifacts per turn with one `json_output` chat call."""

    def __init__(self, chat: ChatModel, *, max_items: int = 5, temperature: float = 0.0, max_tokens: int = 800) -> None:
        self.chat = chat
        self.max_items = max_items
        self.temperature = temperature
        self.max_tokens = max_tokens

    async def extract(
        self, user_message: str, assistant_message: str = "", *, context: ObserveContext | None = None
    ) -> list[Artifact]:
        context = context or ObserveContext()
        user = strip_recalled_block(user_message or "").strip()
        assistant = strip_recalled_block(assistant_message or "").strip()
        if not query_terms(user):
            return []  # nothing the user said could be a learning: spare the call
        messages = build_messages(user, assistant, context, self.max_items)
        try:
            response = await self.chat.chat(
                messages, json_output=True, temperature=self.temperature, max_tokens=self.max_tokens
            )
        except Exception as exc:  # LLMError, or any provider's own failure: the turn must go on without it
            logger.warning("learning extraction failed (%s): %s", type(exc).__name__, exc)
            return []
        items = self._parse(response.message.content or "")
        return self._accept(items, user, context)

    async def condense(self, artifact: str, question: str, *, max_chars: int) -> str | None:
        """A confirmed procedure or snippet (as the rules condensed it) rewritten as one reusable learning, or
        None when the model fails or strays from the text (most of its words must be the artifact's)."""
        system = _condense_template().substitute(max_chars=max_chars)
        turn = f"QUESTION IT ANSWERED:\n<<<\n{question[:500]}\n>>>\n\nCONFIRMED TO WORK:\n<<<\n{artifact}\n>>>"
        try:
            response = await self.chat.chat(
                [Message(role="system", content=system), Message(role="user", content=turn)],
                json_output=True,
                temperature=self.temperature,
                max_tokens=self.max_tokens,
            )
        except Exception as exc:  # the rules' text stands
            logger.warning("condensing a confirmed answer failed (%s): %s", type(exc).__name__, exc)
            return None
        content = response.message.content or ""
        fenced = _FENCE.match(content)
        try:
            reply = json.loads(fenced.group(1) if fenced else content)
        except ValueError:
            return None
        text = reply.get("text") if isinstance(reply, dict) else None
        if not isinstance(text, str) or not 12 <= len(" ".join(text.split())) <= max_chars:
            return None
        source = {stem(w) for w in query_terms(f"{artifact} {question}", limit=400)}
        said = {stem(w) for w in query_terms(text, limit=200)} - {"user"}
        return " ".join(text.split()) if said and len(said & source) / len(said) >= _CONDENSED_GROUNDING else None

    def _parse(self, content: str) -> list[_Item]:
        fenced = _FENCE.match(content)
        try:
            reply = json.loads(fenced.group(1) if fenced else content)
        except ValueError:
            logger.warning("learning extraction answered with invalid JSON: %s", clip(content, 200))
            return []
        raw = reply.get("learnings") if isinstance(reply, dict) else None
        if not isinstance(raw, list):
            logger.warning("learning extraction answered without a 'learnings' list: %s", clip(content, 200))
            return []
        items: list[_Item] = []
        for entry in raw[: self.max_items * 2]:
            try:
                items.append(_Item.model_validate(entry))
            except ValidationError as exc:
                logger.warning("learning extraction item dropped: %s", exc.errors(include_url=False)[:2])
        return items

    def _accept(self, items: Sequence[_Item], user: str, context: ObserveContext) -> list[Artifact]:
        guard = RecallGuard(context.recalled)
        user_stems = {stem(w) for w in query_terms(user, limit=400)}
        categories = set(context.vocabulary_categories)
        artifacts: list[Artifact] = []
        seen: set[str] = set()
        for item in items:
            text = " ".join(item.text.split())
            key = text.casefold()
            if key in seen or not _grounded(item, user_stems) or (guard and guard.matches(text)):
                logger.debug("learning extraction item skipped (duplicate, ungrounded or recalled): %s", text)
                continue
            seen.add(key)
            artifacts.append(
                Artifact(
                    text=text,
                    type=item.type,
                    category=item.category if item.category in categories else None,
                    topic=item.topic.strip(),
                    tags=[t.strip() for t in item.tags if isinstance(t, str) and t.strip()][:8],
                    confidence=item.confidence,
                    rule="llm",
                    evidence=item.evidence,
                )
            )
            if len(artifacts) >= self.max_items:
                break
        return artifacts


def _grounded(item: _Item, user_stems: set[str]) -> bool:
    """Did this come from the user's message? Its evidence (or, without one, its text) must share words with it."""
    if item.evidence.strip():
        evidence = {stem(w) for w in query_terms(item.evidence, limit=64)}
        return bool(evidence) and len(evidence & user_stems) / len(evidence) >= _GROUNDING
    text = {stem(w) for w in query_terms(item.text, limit=64)} - {"user", "assist"}
    return bool(text & user_stems)
