"""The optional LLM adjudicator for dedupe's grey zone.

With a chat model configured, a pair the rules could neither call one fact nor two (they kept both and linked
them for review) goes to one structured call: action, merged text and reason, as JSON. The answer is validated
— a known action, a merged text within the limit that keeps every number of both texts — and any failure,
malformed answer or timeout leaves the rules' decision (create, linked) in place. The model never sees more
than the two texts and the rules' reason.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import re
from dataclasses import dataclass
from importlib import resources
from string import Template

from ..llms.base import ChatModel, Message
from ..models import Learning
from .dedupe import DedupeAction, DedupeDecision, DedupePolicy
from .quantities import quantities

__all__ = ["Adjudicator"]

logger = logging.getLogger("learnloop.dedupe")
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)
_ACTIONS = {a.value: a for a in DedupeAction}


@functools.cache
def _template() -> Template:
    return Template(resources.files(__package__).joinpath("prompts", "adjudicate.md").read_text("utf-8"))


@dataclass
class Adjudicator:
    """Asks `chat` about one grey-zone pair; `timeout` seconds at most, else the rules stand."""

    chat: ChatModel
    timeout: float = 10.0
    max_tokens: int = 400

    async def settle(self, text: str, old: Learning, decision: DedupeDecision, policy: DedupePolicy) -> DedupeDecision:
        """The model's decision for (text, old) if it gives a valid one, else `decision` unchanged."""
        system = _template().substitute(max_chars=policy.max_merged_chars)
        pair = (
            f"EXISTING (saved {old.created_at:%Y-%m-%d}, tags {old.tags or 'none'}):\n<<<\n{old.text}\n>>>\n\n"
            f"NEW:\n<<<\n{text}\n>>>\n\nWhat the rules saw: {decision.reason}"
        )
        messages = [Message(role="system", content=system), Message(role="user", content=pair)]
        try:
            response = await asyncio.wait_for(
                self.chat.chat(messages, json_output=True, temperature=0.0, max_tokens=self.max_tokens), self.timeout
            )
        except Exception as exc:  # a timeout, LLMError, or any provider's failure: the rules' decision stands
            logger.warning("dedupe adjudication failed (%s): %s", type(exc).__name__, exc)
            return decision
        verdict = self._validated(response.message.content or "", text, old, policy)
        if verdict is None:
            return decision
        action, merged, reason = verdict
        why = f"{reason} (adjudicated by {self.chat.model_id}; the rules saw: {decision.reason})"
        if action is DedupeAction.CREATE:
            return DedupeDecision(DedupeAction.CREATE, why, old, decision.similarity, link=decision.link)
        return DedupeDecision(action, why, old, decision.similarity, text=merged)

    def _validated(
        self, content: str, text: str, old: Learning, policy: DedupePolicy
    ) -> tuple[DedupeAction, str | None, str] | None:
        fenced = _FENCE.match(content)
        try:
            reply = json.loads(fenced.group(1) if fenced else content)
        except ValueError:
            logger.warning("dedupe adjudication answered with invalid JSON")
            return None
        if not isinstance(reply, dict) or reply.get("action") not in _ACTIONS:
            logger.warning("dedupe adjudication answered without a known action")
            return None
        action = _ACTIONS[reply["action"]]
        reason = reply.get("reason")
        reason = " ".join(reason.split())[:300] if isinstance(reason, str) and reason.strip() else "adjudicated"
        merged = reply.get("merged_text")
        if action is not DedupeAction.MERGE:
            return action, None, reason
        if not isinstance(merged, str) or not merged.strip() or len(merged) > policy.max_merged_chars:
            logger.warning("dedupe adjudication merged text is missing or too long")
            return None
        merged = " ".join(merged.split())
        # A merge must keep every value of both texts: a model that drops one loses knowledge.
        kept = quantities(merged)
        for source in (text, old.text):
            for value in quantities(source):
                if not value.retracted and not any(value.meets(k) for k in kept):
                    logger.warning("dedupe adjudication merged text drops a value; keeping both learnings")
                    return None
        return action, merged, reason
