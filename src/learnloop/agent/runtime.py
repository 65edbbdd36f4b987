"""The learning agent's parts for one engine: settings, model, knowledge port, re-analysis hook, workers.

Every tenant view of a loop (`loop.for_tenant(...)`) shares one engine, so the runtime is kept per engine:
one set of workers serves all tenants of a process.
"""

from __future__ import annotations

import dataclasses
import functools
import weakref
from dataclasses import dataclass
from typing import Any

from ..capture.gate import WriteGate
from ..config import Settings
from ..engine import Engine
from ..errors import NotConfigured, ValidationError
from ..llms.base import ChatModel
from ..models import DEFAULT_NAMESPACE
from .gating import content_gate
from .knowledge import DocumentKnowledgeBase, KnowledgePort, ReanalysisHandler
from .records import check_path, check_project
from .store import AgentStore, agent_store_of

__all__ = ["AgentConfig", "AgentRuntime"]


@dataclass(frozen=True)
class AgentConfig:
    """How the learning agent works. App vocabulary goes in `assistant_name`, `user_label`, `instructions`."""

    assistant_name: str = "the assistant"
    user_label: str = "the user"
    instructions: str = ""  # the app's own guidance, appended to the system prompt
    routing_file: str = "routing_rules.md"
    default_project: str = "default"
    max_rounds: int = 8  # model calls per package
    max_tool_calls: int = 24  # tool steps per package
    conversation_tokens: int = 12_000  # the stored conversation is trimmed to this, by whole packages
    tool_result_chars: int = 6_000  # a tool result is cut to this before the model sees it
    max_file_chars: int = 32_000
    context_tokens: int = 2_000  # default budget of experience_context
    lease_seconds: float = 60.0  # a claim not renewed for this long is taken over
    poll_seconds: float = 2.0  # an idle worker looks for packages queued by other processes this often
    idle_polls: int = 30  # a worker that found nothing this many polls in a row retires (a package respawns it)
    max_attempts: int = 3
    retry_backoff: float = 2.0  # seconds before the second attempt, doubled for each later one
    run_workers: bool = True  # False: this process only queues; workers run in another process
    learning_namespace: str = DEFAULT_NAMESPACE
    learning_confidence: float = 0.6
    search_k: int = 8
    temperature: float | None = None

    def __post_init__(self) -> None:
        check_path(self.routing_file)
        check_project(self.default_project)
        for name in (
            "max_rounds",
            "max_tool_calls",
            "conversation_tokens",
            "tool_result_chars",
            "max_attempts",
            "idle_polls",
        ):
            if getattr(self, name) < 1:
                raise ValidationError(f"{name} must be at least 1", field=name)
        if self.lease_seconds <= 0 or self.poll_seconds <= 0:
            raise ValidationError("lease_seconds and poll_seconds must be positive", field="lease_seconds")


class AgentRuntime:
    def __init__(self, engine: Engine) -> None:
        # Weak: the registry below must not keep a closed loop's engine (and its store) alive.
        self._engine = weakref.ref(engine)
        self.config = AgentConfig()
        self._model: ChatModel | None = None
        self._knowledge: KnowledgePort | None = None
        self.reanalysis: ReanalysisHandler | None = None

    @property
    def engine(self) -> Engine:
        engine = self._engine()
        if engine is None:
            raise NotConfigured("the loop this learning agent belonged to is gone")
        return engine

    @property
    def store(self) -> AgentStore:
        return agent_store_of(self.engine)

    @property
    def model(self) -> ChatModel | None:
        """The learning model: the one configured for the agent, else the loop's main model."""
        return self._model or self.engine.llm

    def require_model(self) -> ChatModel:
        model = self.model
        if model is None:
            raise NotConfigured(
                "the learning agent needs a chat model: set LEARNLOOP_LLM (or LEARNLOOP_LEARNING_MODEL) to an "
                "OpenAI-compatible model such as 'openai:gpt-4o-mini', or pass model= to loop.agent.configure()"
            )
        return model

    @functools.cached_property
    def documents(self) -> DocumentKnowledgeBase:
        return DocumentKnowledgeBase(self.engine, self.store, self.content_gate)

    @property
    def knowledge(self) -> KnowledgePort:
        return self._knowledge or self.documents

    @property
    def owns_knowledge(self) -> bool:
        """Whether the knowledge tools work on learnloop's own knowledge base (no app port configured)."""
        return self._knowledge is None

    @functools.cached_property
    def content_gate(self) -> WriteGate:
        """The write gate for files and knowledge text: secrets, personal data and injection are refused;
        length and time-bound wording are not, since schedules and long notes are what files are for."""
        return content_gate(self.engine)

    def configure(
        self,
        *,
        model: ChatModel | str | None = None,
        settings: Settings | None = None,
        knowledge: KnowledgePort | None = None,
        reanalysis: ReanalysisHandler | None = None,
        **options: Any,
    ) -> AgentConfig:
        if isinstance(model, str):
            from ..llms import resolve_llm

            model = resolve_llm(model, settings or Settings.from_env())  # the endpoint and key, as open() reads them
        elif model is None and settings is not None and settings.learning_model:
            from ..llms import resolve_llm

            model = resolve_llm(settings.learning_model, settings)
        if model is not None:
            self._model = model
        if knowledge is not None:
            self._knowledge = knowledge
        if reanalysis is not None:
            self.reanalysis = reanalysis
        if options:
            try:
                self.config = dataclasses.replace(self.config, **options)
            except TypeError as exc:
                raise ValidationError(f"unknown agent option: {exc}") from exc
        return self.config
