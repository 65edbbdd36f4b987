"""`Loop`: the one object an application talks to. Async methods; `loop.sync` for blocking callers.

A loop is bound to one tenant; `loop.for_tenant("acme")` gives another tenant's view over the same parts.
Methods that act for an end user take `user=`; admin methods accept `user=None` for the whole tenant.
The admin methods (listing, governing, vocabularies, export/import) come from `TenantAdmin` in `admin.py`.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Literal

from .admin import TenantAdmin
from .agent import AgentService, ExperienceContext, QueuedInteraction
from .agent.registry import workers_of
from .capture.observe import ObserveResult, observe
from .capture.tool import (
    DEFAULT_TOOL_NAME,
    ToolCallResult,
    ToolFormat,
    handle_tool_call,
    proactive_learning_section,
    tool_schema,
)
from .capture.write import SaveRequest, SaveResult, normalise_tags, save
from .channels.identities import IdentityService
from .errors import ValidationError
from .holdback import HoldbackService
from .learning_metrics import LearningMetrics, compute_learning_metrics, feedback_records
from .models import (
    DEFAULT_NAMESPACE,
    Filters,
    LearningType,
    Limits,
    Origin,
    RetrievalResult,
    Source,
    Status,
    choice,
)
from .profile import ProfileService
from .recall import retrieve
from .sdk_edge import sdk_edge
from .stores.base import Vector
from .stores.learning_metrics import FeedbackRecord
from .sync import SyncProxy
from .tools import ToolIntelligence
from .tools.intelligence import close_tools, tools_of
from .turns import Turn, TurnService
from .turns.runner import close_turn_runner

__all__ = ["Loop"]

_log = logging.getLogger("learnloop.capture")


@sdk_edge
class Loop(TenantAdmin):
    """Capture, govern and recall learnings for one tenant."""

    __learnloop_async__ = True

    def __repr__(self) -> str:
        return f"Loop(tenant={self.tenant!r}, store={self._engine.store!r})"

    @property
    def sync(self) -> Any:
        """The same loop with blocking methods: `loop.sync.retrieve_context("alice", "...")`."""
        return SyncProxy(self)

    # -- tool intelligence (learnloop.tools) --------------------------------------------------------

    @functools.cached_property
    def tools(self) -> ToolIntelligence:
        """Tool catalog, routing, usage signals, templates and recovery for this tenant:
        `await loop.tools.route("will it rain?", k=5)`. One per engine and tenant, shared by every view of the
        loop (`for_tenant`), so session windows carry over between them."""
        return tools_of(self._engine, self.tenant)

    def for_tenant(self, tenant: str) -> Loop:
        return Loop(self._engine, tenant)

    async def __aenter__(self) -> Loop:
        await self._engine.ensure_started()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        workers = workers_of(self._engine, create=False)
        if workers is not None:  # learning-agent workers first: they write to the store closed next
            await workers.stop()
        await close_turn_runner(self._engine)  # turns' work writes to every part below
        await close_tools(self._engine)  # tool-layer background passes, for the same reason
        await self._engine.aclose()

    # -- turns (learnloop.turns) ---------------------------------------------------------------------

    @functools.cached_property
    def turns(self) -> TurnService:
        """Turns begun by any process: `await loop.turns.finish(turn_id, answer)`; housekeeping; settings."""
        return TurnService(self._engine, self.tenant)

    @functools.cached_property
    def profiles(self) -> ProfileService:
        """User profiles (seed 001's user memory): `await loop.profiles.get("alice")`; edit, forget, configure."""
        return ProfileService(self._engine, self.tenant)

    @functools.cached_property
    def identities(self) -> IdentityService:
        """One person across channels: `await loop.identities.resolve("telegram", "123")` gives the canonical user;
        link codes, unlinking, listing."""
        return IdentityService(self._engine, self.tenant)

    def turn(
        self,
        user: str | None,
        message: str,
        *,
        session: str = "default",
        channel: str = "",
        namespace: str | None = None,
        filters: Filters | None = None,
        limits: Limits | None = None,
        tags: Sequence[str] = (),
        at: datetime | None = None,
        id: str | None = None,
    ) -> Turn:
        """One turn of the agent in one block: `async with loop.turn("alice", msg, session="s1") as turn:` gives
        `turn.context` for the prompt, takes `await turn.tool_call(...)` as tools run, and `await
        turn.finish(answer)` queues the rest — feedback on the previous turn, learning, tool signals, the learning
        agent's package, the conversation record — durably, once. `with loop.sync.turn(...)` blocks instead."""
        begin = {
            "user": user,
            "message": message,
            "session": session,
            "channel": channel,
            "namespace": namespace,
            "filters": filters,
            "limits": limits,
            "tags": tags,
            "at": at,
            "id": id,
        }
        return Turn(self.turns, begin=begin)

    # -- the holdback experiment (learnloop.holdback) ------------------------------------------------

    @functools.cached_property
    def holdback(self) -> HoldbackService:
        """Does memory help? `await loop.holdback.configure(share=0.1)` holds a tenth of the users back (no memory
        in their context); `await loop.holdback.report()` compares the arms."""
        return HoldbackService(self._engine, self.tenant)

    # -- the background learning agent (learnloop.agent) -------------------------------------------

    @functools.cached_property
    def agent(self) -> AgentService:
        """Sessions, interaction queue, workers, experience files and knowledge base of the learning agent:
        `await loop.agent.open_session("s1", user="alice")`. Shared workers for every tenant view."""
        return AgentService(self._engine, self.tenant)

    async def submit_interaction(
        self, session: str, user_query: str, assistant_response: str = "", *, user: str | None = None, **fields: Any
    ) -> QueuedInteraction:
        """Queue one finished turn for the learning agent and return at once (see `AgentService.submit_interaction`
        for the other fields: items_retrieved, experience_read, actions, tool_calls, turn, id, at, meta)."""
        return await self.agent.submit_interaction(session, user_query, assistant_response, user=user, **fields)

    async def experience_context(
        self,
        session: str | None = None,
        *,
        user: str | None = None,
        project: str | None = None,
        query: str | None = None,
        max_tokens: int | None = None,
    ) -> ExperienceContext:
        """What the main agent reads before its next turn: the routing file and the files it routes to."""
        return await self.agent.experience_context(
            session, user=user, project=project, query=query, max_tokens=max_tokens
        )

    # -- recall --------------------------------------------------------------------------------------

    async def retrieve_context(
        self,
        user: str | None,
        query: str,
        *,
        filters: Filters | None = None,
        limits: Limits | None = None,
        namespace: str | None = None,
        categories: Sequence[str] | None = None,
        query_vector: Vector | None = None,
        record: bool = True,
        at: datetime | None = None,
        session: str | None = None,
    ) -> RetrievalResult:
        """The learnings to show the model before its next call: `.block` for the prompt, `.items` with
        scores and reasons. Records hits and streaks of what was returned unless `record=False`. A time
        expression in the query ("last May") is resolved against `at` (when it is asked; default now).
        `session` (as given to `observe`): corrections the user made earlier in it come first."""
        filters = filters or Filters()
        if namespace is not None or categories is not None:
            filters = filters.model_copy(
                update={
                    "namespace": namespace if namespace is not None else filters.namespace,
                    "categories": list(categories) if categories is not None else filters.categories,
                }
            )
        return await retrieve(
            self._engine,
            self.scope(user),
            query,
            filters=filters,
            limits=limits or Limits(),
            query_vector=query_vector,
            record=record,
            at=at,
            session=session,
        )

    # -- writing -------------------------------------------------------------------------------------

    async def save(
        self,
        text: str,
        *,
        user: str | None,
        category: str | None = None,
        type: LearningType | str = LearningType.FACT,
        topic: str = "",
        tags: Sequence[str] = (),
        namespace: str = DEFAULT_NAMESPACE,
        status: Status | str = Status.CANDIDATE,
        confidence: float | None = None,
        origin: Origin | str = Origin.PERSON,
        source: Source | None = None,
        actor: str | None = None,
        at: datetime | None = None,
    ) -> SaveResult:
        """Store one learning through the governed write (validation, gate, dedupe). `at` is when it was said
        (default now): "yesterday" in the text is resolved against it and stored beside the words."""
        origin = choice(Origin, origin, "origin")
        learning_type = choice(LearningType, type, "type")
        request = SaveRequest(
            text=text,
            user=user,
            namespace=namespace,
            category=category,
            type=learning_type,
            topic=topic,
            tags=tags,
            status=choice(Status, status, "status"),
            confidence=self._engine.policy.tool_confidence if confidence is None else confidence,
            origin=origin,
            source=source or Source(),
            actor=actor or _actor_for(origin),
            at=at,
        )
        return await save(self._engine, self.scope(user), request)

    async def observe(
        self,
        user_message: str,
        assistant_message: str = "",
        *,
        user: str | None,
        session: str = "default",
        retrieved: RetrievalResult | Sequence[str] | None = None,
        meta: Mapping[str, Any] | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        at: datetime | None = None,
        tags: Sequence[str] = (),
        channel: str = "",
    ) -> ObserveResult:
        """After a turn: judge the previous answer from this message, and keep what this turn taught.

        Pass `retrieved` (the `retrieve_context` result used for this turn) so that feedback reaches the
        learnings that were used and recalled text is never learned again. `tags` are the run's scope (the
        filters it retrieved with): every learning the turn produces carries them. The user's latest message
        repeated within 30 s, on any channel or session, is a duplicate (`result.duplicate`): nothing is learned.
        """
        result = await observe(
            self._engine,
            self.scope(user),
            user_message,
            assistant_message,
            session=session,
            retrieved=retrieved,
            meta=meta,
            namespace=namespace,
            at=at,
            tags=normalise_tags(tags),
            channel=channel,
        )
        if result.feedback is not None:  # seed 001 §11's event; a turn (`loop.turn()`) logs its own once
            where = {"tenant": self.tenant, "session": result.session, "turn": result.turn, "channel": channel}
            verdict = {"type": result.feedback.type, "score": result.feedback.score}
            _log.info("feedback_recorded", extra={"event": "feedback_recorded", **where, **verdict})
        return result

    # -- the save_learning tool ----------------------------------------------------------------------

    async def tool_schema(
        self, format: ToolFormat = "openai", *, namespace: str = DEFAULT_NAMESPACE, name: str = DEFAULT_TOOL_NAME
    ) -> dict[str, Any]:
        """The `save_learning` tool definition for OpenAI, Anthropic or MCP, from the namespace's vocabulary."""
        return tool_schema(await self.vocabulary(namespace), format, name)

    async def proactive_learning_prompt(
        self, *, namespace: str = DEFAULT_NAMESPACE, tool: str = DEFAULT_TOOL_NAME
    ) -> str:
        """The "Proactive Learning" system-prompt section telling the model when and how to save."""
        return proactive_learning_section(await self.vocabulary(namespace), tool)

    async def handle_tool_call(
        self,
        arguments: Mapping[str, Any] | str,
        *,
        user: str | None,
        session: str | None = None,
        message: str | None = None,
        interaction: str | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        errors: Literal["return", "raise"] = "return",
        at: datetime | None = None,
    ) -> ToolCallResult:
        """Route the model's `save_learning` call; `.content` is what to send back as the tool result."""
        return await handle_tool_call(
            self._engine,
            self.scope(user),
            arguments,
            user=user,
            session=session,
            message=message,
            interaction=interaction,
            namespace=namespace,
            errors=errors,
            at=at,
        )

    # -- erasure -------------------------------------------------------------------------------------

    # On the facade rather than `TenantAdmin`: forgetting a user also stops the learning agent's work for them.
    async def forget(self, user: str) -> dict[str, int]:
        """Remove every trace of a user (rows, index entries, events); shared knowledge they contributed
        stays, anonymised."""
        await self._engine.ensure_started()
        owner = self.scope(user).user or user
        # Users merged into this one by linking channels are the same person: their leftovers go too.
        aliases = await self.identities.merged_users(owner) if self._engine.identities is not None else []
        removed = await self._engine.store.forget_user(self.tenant, owner)
        for alias in aliases:
            for table, count in (await self._engine.store.forget_user(self.tenant, alias)).items():
                removed[table] = removed.get(table, 0) + count
        await self.agent.reap_workers()  # a worker still busy for them must not write anything back
        return removed

    # -- seed 001 §11: is the agent getting better? ---------------------------------------------------

    async def feedback(
        self, *, user: str | None = None, days: float = 7.0, types: Sequence[str] = (), limit: int = 100
    ) -> list[FeedbackRecord]:
        """The verdicts on answers (from the next message, or silence), newest first."""
        if not 0 < days <= 3660 or not 1 <= limit <= 10_000:
            raise ValidationError("days must be in (0, 3660] and limit in [1, 10000]", field="days")
        await self._engine.ensure_started()
        since = self._engine.clock() - timedelta(days=days)
        return await feedback_records(self._engine, self.scope(user), since=since, types=tuple(types), limit=limit)

    async def learning_metrics(
        self,
        *,
        user: str | None = None,
        days: float = 7.0,
        bucket: Literal["hour", "day"] = "day",
        channel: str | None = None,
    ) -> LearningMetrics:
        """Template hit rate and confidence, error-recovery rate, first-try success, response quality, tool
        selection accuracy, cold start and correction rate, in total and per bucket (`learnloop.learning_metrics`);
        `channel=` cuts them to the turns that came on that channel."""
        if not 0 < days <= 3660:
            raise ValidationError("days must be in (0, 3660]", field="days")
        await self._engine.ensure_started()
        step = 3600 if bucket == "hour" else 86_400
        return await compute_learning_metrics(
            self._engine, self.scope(user), now=self._engine.clock(), days=days, bucket_seconds=step, channel=channel
        )


def _actor_for(origin: Origin) -> str:
    return {
        Origin.TOOL: "tool",
        Origin.OBSERVER: "observer",
        Origin.AGENT: "agent",
        Origin.FEEDBACK: "feedback",
        Origin.IMPORT: "import",
        Origin.PERSON: "person",
    }[origin]
