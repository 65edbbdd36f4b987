"""`Loop`: the one object an application talks to. Async methods; `loop.sync` for blocking callers.

A loop is bound to one tenant; `loop.for_tenant("acme")` gives another tenant's view over the same parts.
Methods that act for an end user take `user=`; admin methods accept `user=None` for the whole tenant.
"""

from __future__ import annotations

import asyncio
import builtins
import functools
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from . import governance
from .agent import AgentService, ExperienceContext, QueuedInteraction
from .agent.runtime import runtime_of
from .capture.observe import ObserveResult, observe
from .capture.tool import (
    DEFAULT_TOOL_NAME,
    ToolCallResult,
    ToolFormat,
    handle_tool_call,
    proactive_learning_section,
    tool_schema,
)
from .capture.write import SaveRequest, SaveResult, save
from .engine import Engine
from .errors import ValidationError
from .models import (
    DEFAULT_NAMESPACE,
    Event,
    EventAction,
    Filters,
    Learning,
    LearningType,
    Limits,
    Origin,
    Page,
    RetrievalResult,
    Scope,
    Source,
    Status,
    Vocabulary,
)
from .portability import ImportReport, export_lines, import_lines
from .recall import retrieve
from .stores.base import EventDraft, ListQuery, Vector
from .sync import SyncProxy
from .tools import ToolIntelligence
from .tools.intelligence import close_tools, tools_of

__all__ = ["Loop"]

Order = Literal["newest", "oldest", "updated"]


class Loop:
    """Capture, govern and recall learnings for one tenant."""

    __learnloop_async__ = True

    def __init__(self, engine: Engine, tenant: str = "default") -> None:
        self._engine = engine
        self.tenant = Scope(tenant=tenant).tenant

    def __repr__(self) -> str:
        return f"Loop(tenant={self.tenant!r}, store={self._engine.store!r})"

    @property
    def engine(self) -> Engine:
        return self._engine

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

    def scope(self, user: str | None) -> Scope:
        return Scope(tenant=self.tenant, user=user)

    async def __aenter__(self) -> Loop:
        await self._engine.ensure_started()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        runtime = runtime_of(self._engine, create=False)
        if runtime is not None:  # learning-agent workers first: they write to the store closed next
            await runtime.workers.stop()
        await close_tools(self._engine)  # tool-layer background passes, for the same reason
        await self._engine.aclose()

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
    ) -> RetrievalResult:
        """The learnings to show the model before its next call: `.block` for the prompt, `.items` with
        scores and reasons. Records hits and streaks of what was returned unless `record=False`."""
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
    ) -> SaveResult:
        """Store one learning through the governed write (validation, gate, dedupe)."""
        origin = Origin(origin)
        try:
            learning_type = LearningType(type)
        except ValueError as exc:
            raise ValidationError(f"unknown learning type {type!r}", field="type") from exc
        request = SaveRequest(
            text=text,
            user=user,
            namespace=namespace,
            category=category,
            type=learning_type,
            topic=topic,
            tags=tags,
            status=Status(status),
            confidence=self._engine.policy.tool_confidence if confidence is None else confidence,
            origin=origin,
            source=source or Source(),
            actor=actor or _actor_for(origin),
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
    ) -> ObserveResult:
        """After a turn: judge the previous answer from this message, and keep what this turn taught.

        Pass `retrieved` (the `retrieve_context` result used for this turn) so that feedback reaches the
        learnings that were used and recalled text is never learned again.
        """
        return await observe(
            self._engine,
            self.scope(user),
            user_message,
            assistant_message,
            session=session,
            retrieved=retrieved,
            meta=meta,
            namespace=namespace,
            at=at,
        )

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
        )

    # -- admin ---------------------------------------------------------------------------------------

    async def get(self, learning_id: int, *, user: str | None = None) -> Learning:
        return await governance.get(self._engine, self.scope(user), learning_id)

    async def list(
        self,
        *,
        user: str | None = None,
        owner: str | None = None,
        global_only: bool = False,
        category: str | None = None,
        status: Status | str | None = None,
        namespace: str | None = None,
        origin: Origin | str | None = None,
        text: str | None = None,
        order: Order = "newest",
        offset: int = 0,
        limit: int = 50,
    ) -> Page[Learning]:
        """Learnings visible to `user` (all of the tenant's when None), newest first, paginated.
        `owner` narrows a tenant-wide listing to one user's learnings."""
        if not 1 <= limit <= 1000 or offset < 0:
            raise ValidationError("limit must be within 1..1000 and offset at least 0", field="limit")
        await self._engine.ensure_started()
        query = ListQuery(
            user=owner,
            global_only=global_only,
            namespace=namespace,
            category=category,
            status=None if status is None else Status(status),
            origin=None if origin is None else Origin(origin),
            text=text,
            order=order,
            offset=offset,
            limit=limit,
        )
        return await self._engine.store.list_learnings(self.scope(user), query)

    async def list_recent(self, user: str, limit: int = 10) -> builtins.list[Learning]:
        page = await self.list(user=user, owner=user, limit=limit, order="updated")
        return page.items

    async def update(
        self,
        learning_id: int,
        *,
        user: str | None = None,
        text: str | None = None,
        category: str | None = None,
        topic: str | None = None,
        tags: Sequence[str] | None = None,
        type: LearningType | str | None = None,
        actor: str = "person",
        reason: str | None = None,
    ) -> Learning:
        return await governance.update(
            self._engine,
            self.scope(user),
            learning_id,
            actor=actor,
            text=text,
            category=category,
            topic=topic,
            tags=tags,
            type=type,
            reason=reason,
        )

    async def delete(
        self, learning_id: int, *, user: str | None = None, actor: str = "person", reason: str | None = None
    ) -> Learning:
        """Remove a learning, its full-text and vector index entries; its history stays in the log."""
        return await governance.delete(self._engine, self.scope(user), learning_id, actor, reason)

    async def promote(
        self, learning_id: int, *, user: str | None = None, actor: str = "person", reason: str | None = None
    ) -> Learning:
        return await governance.promote(self._engine, self.scope(user), learning_id, actor, reason)

    async def promote_last_candidate(
        self, user: str, *, actor: str = "feedback", reason: str | None = None
    ) -> Learning | None:
        return await governance.promote_last_candidate(self._engine, self.scope(user), actor, reason)

    async def deprecate(
        self, learning_id: int, reason: str, *, user: str | None = None, actor: str = "person"
    ) -> Learning:
        return await governance.change_status(
            self._engine, self.scope(user), learning_id, Status.DEPRECATED, actor, reason
        )

    async def restore(
        self,
        learning_id: int,
        *,
        user: str | None = None,
        status: Status | str = Status.CANDIDATE,
        actor: str = "person",
        reason: str | None = None,
    ) -> Learning:
        """Bring a deprecated learning back. Only a person may."""
        return await governance.change_status(
            self._engine, self.scope(user), learning_id, Status(status), actor, reason or "restored"
        )

    async def report_failure(
        self, learning_ids: Sequence[int], *, user: str | None, reason: str, actor: str = "feedback"
    ) -> builtins.list[Learning]:
        """Negative feedback on learnings that were used: demote verified ones, deprecate candidates."""
        return await governance.report_failure(self._engine, self.scope(user), learning_ids, actor, reason)

    async def purge_deprecated(
        self, older_than: timedelta | datetime, *, user: str | None = None, actor: str = "person"
    ) -> builtins.list[int]:
        cutoff = older_than if isinstance(older_than, datetime) else self._engine.clock() - older_than
        return await governance.purge_deprecated(self._engine, self.scope(user), cutoff, actor)

    async def forget(self, user: str) -> dict[str, int]:
        """Remove every trace of a user (rows, index entries, events); shared knowledge they contributed
        stays, anonymised."""
        await self._engine.ensure_started()
        removed = await self._engine.store.forget_user(self.tenant, self.scope(user).user or user)
        await self.agent.reap_workers()  # a worker still busy for them must not write anything back
        return removed

    async def history(self, learning_id: int, *, user: str | None = None) -> builtins.list[Event]:
        await governance.get(self._engine, self.scope(user), learning_id)
        return await self._engine.store.history(self.scope(user), learning_id)

    async def events(self, *, after: int = 0, limit: int = 100, user: str | None = None) -> builtins.list[Event]:
        await self._engine.ensure_started()
        return await self._engine.store.events(self.scope(user), after=after, limit=limit)

    # -- vocabulary ----------------------------------------------------------------------------------

    async def vocabulary(self, namespace: str = DEFAULT_NAMESPACE) -> Vocabulary:
        return await self._engine.vocabulary(self.tenant, namespace)

    async def set_vocabulary(self, vocabulary: Vocabulary | dict[str, str], *, actor: str = "person") -> Vocabulary:
        if isinstance(vocabulary, dict):
            vocabulary = Vocabulary.from_mapping(vocabulary)
        await self._engine.ensure_started()
        draft = EventDraft(
            actor=actor,
            action=EventAction.VOCABULARY_CHANGED,
            data={"namespace": vocabulary.namespace, "categories": vocabulary.names},
        )
        event = await self._engine.store.put_vocabulary(self.tenant, vocabulary, draft)
        self._engine.forget_vocabulary(self.tenant, vocabulary.namespace)
        self._engine.bus.publish([event])
        return vocabulary

    async def vocabularies(self) -> builtins.list[Vocabulary]:
        await self._engine.ensure_started()
        return await self._engine.store.list_vocabularies(self.tenant)

    # -- portability ---------------------------------------------------------------------------------

    async def export_jsonl(self, *, user: str | None = None) -> AsyncIterator[str]:
        """One JSON line per learning (embedding included), in id order."""
        async for line in export_lines(self._engine, self.scope(user)):
            yield line

    async def export_to(self, path: str | Path, *, user: str | None = None) -> int:
        """Write `export_jsonl` to a file; returns the number of learnings written."""
        lines = [line async for line in self.export_jsonl(user=user)]
        text = "".join(line + "\n" for line in lines)
        await asyncio.to_thread(Path(path).write_text, text, encoding="utf-8")
        return sum(not line.startswith('{"vocabulary"') for line in lines)

    async def import_jsonl(
        self, lines: Iterable[str] | str | Path, *, user: str | None = None, actor: str = "import"
    ) -> ImportReport:
        """Import learnings exported by `export_jsonl` (all or nothing per file; re-runs are no-ops)."""
        if isinstance(lines, str | Path):
            content = await asyncio.to_thread(Path(lines).read_text, encoding="utf-8")
            lines = content.splitlines()
        return await import_lines(self._engine, self.scope(user), lines, actor)


def _actor_for(origin: Origin) -> str:
    return {
        Origin.TOOL: "tool",
        Origin.OBSERVER: "observer",
        Origin.AGENT: "agent",
        Origin.FEEDBACK: "feedback",
        Origin.IMPORT: "import",
        Origin.PERSON: "person",
    }[origin]
