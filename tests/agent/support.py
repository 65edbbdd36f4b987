"""Building loops for the learning-agent tests, and scripting the learning agent's model by round.

Everything is real: the store (a SQLite file, or a PostgreSQL database), learnloop's OpenAI-compatible chat and
embedding clients, and the scripted chat-completions server on loopback standing in for the hosted model.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from learnloop.config import Settings
from learnloop.embedders import resolve_embedder
from learnloop.factory import build_engine
from learnloop.llms import resolve_llm
from learnloop.loop import Loop
from learnloop.stores import open_store
from tests.support.scripted_openai import Reply, Request

DIMENSION = 64
EMBEDDER = f"openai:scripted-embed?dimension={DIMENSION}"
AGENT_MARK = "You are the Learning agent"


def build_loop(
    db: Path | str, settings: Settings, *, tenant: str = "acme", with_llm: bool = True, **options: Any
) -> Loop:
    """A loop on `db` (a file or a database URL) whose embedder and chat model are the scripted server's
    (`settings` point at it)."""
    embedder = resolve_embedder(EMBEDDER, settings)
    llm = resolve_llm("openai:scripted-model", settings) if with_llm else None
    store = open_store(str(db), settings, embedding_model=embedder.model_id, dimension=DIMENSION)
    loop = Loop(build_engine(store, embedder, llm=llm), tenant)
    # Workers retire after `idle_polls` empty polls; at 0.05 s a poll the production default (30) would retire
    # them between two steps of a test, so tests that want retirement ask for it.
    defaults = {"poll_seconds": 0.05, "lease_seconds": 10.0, "retry_backoff": 0.05, "idle_polls": 100_000}
    loop.agent.configure(**(defaults | options))
    return loop


def is_learning_agent(request: Request) -> bool:
    messages = request.get("messages") or []
    return bool(messages) and AGENT_MARK in str(messages[0].get("content"))


def package_round(request: Request) -> int:
    """How many times the model already answered for the package being worked on (0 = first call)."""
    messages = request.get("messages") or []
    last_user = max(i for i, m in enumerate(messages) if m.get("role") == "user")
    return sum(1 for m in messages[last_user:] if m.get("role") == "assistant")


def package_text(request: Request) -> str:
    messages = request.get("messages") or []
    return next(str(m.get("content")) for m in reversed(messages) if m.get("role") == "user")


class LearningScript:
    """The learning agent's model: the reply for round n of every package is `rounds[n]` (a Reply, or a
    callable of the request). Keyed by round, not by arrival, so a retried package gets the same answers.
    `hold` delays round n once (the first time it is asked), to kill a worker in the middle."""

    def __init__(self, rounds: Sequence[Reply | Callable[[Request], Reply]], *, hold: Mapping[int, float] = {}) -> None:
        self.rounds = list(rounds)
        self._hold = dict(hold)
        self._lock = threading.Lock()
        self.asked: list[int] = []

    def __call__(self, request: Request) -> Reply | None:
        if not is_learning_agent(request):
            return None
        n = package_round(request)
        with self._lock:
            self.asked.append(n)
            delay = self._hold.pop(n, 0.0)
        reply = self.rounds[min(n, len(self.rounds) - 1)]
        reply = reply(request) if callable(reply) else reply
        return reply.after(delay) if delay else reply


def calls(*pairs: tuple[str, Mapping[str, Any]]) -> Reply:
    return Reply.tool_calls(*pairs)


def tool_results(request: Request) -> list[dict[str, Any]]:
    """The tool results the model was sent, parsed."""
    return [
        json.loads(m["content"].split(" …(cut)")[0]) for m in request.get("messages") or [] if m.get("role") == "tool"
    ]
