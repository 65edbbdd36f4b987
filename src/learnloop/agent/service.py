"""`loop.agent`: the background learning agent for one tenant — sessions, the interaction queue, workers,
experience files and the default knowledge base.

    agent = loop.agent
    await agent.open_session("s1", user="alice", project="site-a")        # spawns the session's worker
    await loop.submit_interaction("s1", "where is the pump schedule?", "On page M-101.", user="alice")
    context = await loop.experience_context("s1")                         # what the main agent reads
    await agent.close_session("s1")                                       # cancels the worker

Submitting is one INSERT and returns at once; the worker runs the learning agent at its own pace.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from ..config import Settings
from ..engine import Engine
from ..errors import NotFound, ValidationError
from ..llms.base import ChatModel
from ..models import EventAction, Panel, Scope, check_identifier
from ..sdk_edge import sdk_edge
from ..stores.base import EventDraft
from .experience import ExperienceContext, experience_context
from .gating import check_text
from .knowledge import KnowledgePort, ReanalysisHandler
from .package import InteractionPackage, PackageToolCall, redacted_package
from .records import (
    AgentSession,
    ExperienceFile,
    ExperienceFileInfo,
    KnowledgePage,
    KnowledgePointer,
    QueueCounts,
    QueuedInteraction,
    SessionStatus,
    Workspace,
    WriteExperience,
    check_path,
    check_project,
)
from .registry import runtime_of, workers_of
from .runtime import AgentConfig, AgentRuntime
from .worker import Workers

__all__ = ["AgentService", "AgentStatus"]

MAX_OFFSET = 2**53  # SQLite integers are 64-bit; anything near that is no page anyone asked for


def _check_page_bounds(limit: int, offset: int) -> None:
    if not 1 <= limit <= 1000 or not 0 <= offset <= MAX_OFFSET:
        raise ValidationError(f"limit must be within 1..1000 and offset within 0..{MAX_OFFSET}", field="limit")


class AgentStatus(BaseModel):
    configured: bool
    model: str | None
    running: bool
    run_workers: bool
    workers: list[str]
    queue: QueueCounts


@sdk_edge
class AgentService:
    """The learning agent, seen from one tenant. Async methods; `loop.sync.agent` for blocking callers."""

    __learnloop_async__ = True

    def __init__(self, engine: Engine, tenant: str) -> None:
        self._engine = engine
        self.tenant = Scope(tenant=tenant).tenant

    @property
    def runtime(self) -> AgentRuntime:
        runtime = runtime_of(self._engine)
        assert runtime is not None
        return runtime

    @property
    def _workers(self) -> Workers:
        workers = workers_of(self._engine)
        assert workers is not None
        return workers

    @property
    def config(self) -> AgentConfig:
        return self.runtime.config

    @property
    def configured(self) -> bool:
        """Whether a learning model is configured (without one, no worker starts)."""
        return self.runtime.model is not None

    def configure(
        self,
        *,
        model: ChatModel | str | None = None,
        settings: Settings | None = None,
        knowledge: KnowledgePort | None = None,
        reanalysis: ReanalysisHandler | None = None,
        **options: Any,
    ) -> AgentConfig:
        """Set the learning model (a ChatModel or spec; else `settings.learning_model`; else the loop's main
        model), an app's knowledge port, the re-analysis handler, or `AgentConfig` options. Shared by every
        tenant of the loop."""
        return self.runtime.configure(
            model=model, settings=settings, knowledge=knowledge, reanalysis=reanalysis, **options
        )

    def on_reanalysis(self, handler: ReanalysisHandler) -> ReanalysisHandler:
        """Register the app's re-analysis handler (usable as a decorator)."""
        self.runtime.reanalysis = handler
        return handler

    def _scope(self, user: str | None) -> Scope:
        return Scope(tenant=self.tenant, user=user)

    def _workspace(self, user: str | None, project: str | None) -> Workspace:
        return Workspace.of(self.tenant, user, project or self.config.default_project)

    # -- workers -------------------------------------------------------------------------------------

    async def start(self) -> int:
        """Serve every open session of every tenant from this process; returns how many workers started.
        NotConfigured without a learning model."""
        return await self._workers.start()

    async def rehydrate(self) -> int:
        """After a restart: a worker for every open session (what `start` does; it is idempotent)."""
        return await self.start()

    async def stop(self) -> None:
        """Cancel this process's workers; their packages stay queued for the next start."""
        await self._workers.stop()

    async def reap_workers(self) -> int:
        """Stop this process's workers whose session no longer exists, e.g. right after `loop.forget(user)`
        (a worker busy for that user would otherwise stop only at its next write, which the store refuses).
        Returns how many were stopped."""
        workers = workers_of(self._engine, create=False)
        if workers is None:
            return 0
        return await workers.reap(self.tenant)

    async def status(self, *, user: str | None = None) -> AgentStatus:
        """The agent's state for the tenant, or (`user`) only what concerns that user: their sessions'
        workers and their packages, so one user learns nothing of the others' activity."""
        await self._engine.ensure_started()
        runtime = self.runtime
        workers = [session for tenant, session in self._workers.sessions() if tenant == self.tenant]
        if user is not None:
            own = {s.session for s in await runtime.store.list_sessions(self._scope(user), None)}
            workers = [session for session in workers if session in own]
        return AgentStatus(
            configured=runtime.model is not None,
            model=None if runtime.model is None else runtime.model.model_id,
            running=self._workers.running,
            run_workers=runtime.config.run_workers,
            workers=workers,
            queue=await runtime.store.queue_counts(self._scope(user)),
        )

    async def queue(self, session: str | None = None, *, user: str | None = None) -> QueueCounts:
        await self._engine.ensure_started()
        return await self.runtime.store.queue_counts(self._scope(user), session)

    async def drain(self, session: str | None = None, *, user: str | None = None, within: float = 60.0) -> QueueCounts:
        """Wait until no package of the tenant (or session) is pending or being worked on, at most `within` s."""
        deadline = time.monotonic() + within
        while True:
            counts = await self.queue(session, user=user)
            if counts.unfinished == 0 or time.monotonic() >= deadline:
                return counts
            await asyncio.sleep(0.02)

    async def _serve(self, session: str) -> None:
        workers = self._workers
        if not workers.running:
            await workers.start()
        await workers.spawn(self.tenant, session)

    # -- sessions ------------------------------------------------------------------------------------

    async def open_session(
        self,
        session: str | None = None,
        *,
        user: str | None = None,
        project: str | None = None,
        shared: bool | None = None,
    ) -> AgentSession:
        """Open a session (a new id when None) and spawn its worker. `shared=True` makes its learning agent
        curate the tenant's experience and knowledge of the project rather than the user's own."""
        if self.config.run_workers:
            self.runtime.require_model()
        scope = self._scope(user)
        session_id = "s-" + uuid.uuid4().hex[:16] if session is None else check_identifier(session, "session")
        if project is not None:
            check_project(project)
        await self._engine.ensure_started()
        opened = await self.runtime.store.open_session(
            scope, session_id, project, shared, self.config.default_project, self._engine.clock()
        )
        if self.config.run_workers:
            await self._serve(session_id)
        return opened

    async def close_session(self, session: str, *, user: str | None = None) -> AgentSession:
        """Close a session and cancel its worker; packages still queued stay for a reopened session."""
        await self._engine.ensure_started()
        closed = await self.runtime.store.close_session(self._scope(user), session, self._engine.clock())
        await self._workers.cancel(self.tenant, session)
        return closed

    async def get_session(self, session: str, *, user: str | None = None) -> AgentSession:
        await self._engine.ensure_started()
        found = await self.runtime.store.get_session(self._scope(user), session)
        if found is None:
            raise NotFound(f"session {session!r} not found", session=session)
        return found

    async def list_sessions(
        self, *, user: str | None = None, status: SessionStatus | None = None
    ) -> list[AgentSession]:
        await self._engine.ensure_started()
        return await self.runtime.store.list_sessions(self._scope(user), status)

    # -- the queue -----------------------------------------------------------------------------------

    async def submit(self, package: InteractionPackage) -> QueuedInteraction:
        """Queue a package durably and return at once (the session is opened if it is new). Every text of the
        package follows the write gate's *redact* policy: a harmful span is stored as its kind, never raw."""
        runtime = self.runtime
        config = runtime.config
        if config.run_workers:
            runtime.require_model()
        await self._engine.ensure_started()
        package = redacted_package(self._engine.gate, package)
        receipt = await runtime.store.enqueue(
            self._scope(package.user),
            package.session,
            package.id,
            package.turn,
            package.to_json(),
            config.default_project,
            self._engine.clock(),
        )
        if config.run_workers:
            if not self._workers.serves(self.tenant, package.session):
                await self._serve(package.session)
            self._workers.wake(self.tenant, package.session)
        return receipt

    async def submit_interaction(
        self,
        session: str,
        user_query: str,
        assistant_response: str = "",
        *,
        user: str | None = None,
        items_retrieved: Sequence[Mapping[str, Any]] = (),
        experience_read: Sequence[str] = (),
        actions: Sequence[Mapping[str, Any]] = (),
        tool_calls: Sequence[PackageToolCall | Mapping[str, Any]] = (),
        turn: int | None = None,
        id: str | None = None,
        at: datetime | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> QueuedInteraction:
        """Hand over one finished turn of the main agent (seed 003 R1); see `InteractionPackage`."""
        fields: dict[str, Any] = {
            "session": session,
            "user": user,
            "user_query": user_query,
            "assistant_response": assistant_response,
            "items_retrieved": [dict(i) for i in items_retrieved],
            "experience_read": list(experience_read),
            "actions": [dict(a) for a in actions],
            "tool_calls": [c if isinstance(c, PackageToolCall) else dict(c) for c in tool_calls],
            "turn": turn,
            "meta": dict(meta or {}),
        }
        if id is not None:
            fields["id"] = id
        if at is not None:
            fields["at"] = at
        try:
            package = InteractionPackage(**fields)
        except ValueError as exc:  # pydantic's errors, in learnloop's error tree
            raise ValidationError(f"invalid interaction: {exc}") from exc
        return await self.submit(package)

    # -- experience ----------------------------------------------------------------------------------

    async def experience_context(
        self,
        session: str | None = None,
        *,
        user: str | None = None,
        project: str | None = None,
        query: str | None = None,
        max_tokens: int | None = None,
    ) -> ExperienceContext:
        """The routing file and the experience files it routes to, for the main agent's next turn: of the
        session's workspace, or of (`user`, `project`) without a session."""
        await self._engine.ensure_started()
        if session is not None:
            workspace = (await self.get_session(session, user=user)).workspace
        else:
            workspace = self._workspace(user, project)
        budget = max_tokens or self.config.context_tokens
        if budget < 50:
            raise ValidationError("max_tokens must be at least 50", field="max_tokens")
        return await experience_context(
            self.runtime.store, workspace, self.config.routing_file, max_tokens=budget, query=query
        )

    async def list_files(self, *, user: str | None = None, project: str | None = None) -> list[ExperienceFileInfo]:
        await self._engine.ensure_started()
        return await self.runtime.store.list_files(self._workspace(user, project))

    async def read_file(self, path: str, *, user: str | None = None, project: str | None = None) -> ExperienceFile:
        await self._engine.ensure_started()
        found = await self.runtime.store.read_file(self._workspace(user, project), check_path(path))
        if found is None:
            raise NotFound(f"experience file {path!r} not found", path=path)
        return found

    async def write_file(
        self, path: str, content: str, *, user: str | None = None, project: str | None = None, actor: str = "person"
    ) -> ExperienceFile:
        """Create or replace an experience file (an admin's or the app's write; logged as an event)."""
        path, workspace = check_path(path), self._workspace(user, project)
        if not isinstance(content, str) or len(content) > self.config.max_file_chars:
            raise ValidationError(f"content must be a string of at most {self.config.max_file_chars} characters")
        check_text(self.runtime.content_gate, content, "content")
        await self._engine.ensure_started()
        draft = EventDraft(
            actor=actor,
            action=EventAction.EXPERIENCE_WRITTEN,
            panel=Panel.LEARNING,
            data={"tool": "write_file", "summary": f"wrote {path}"},
        )
        _, events = await self.runtime.store.change_file(
            WriteExperience(workspace, path, content, None), user, draft, self._engine.clock()
        )
        self._engine.bus.publish(events)
        return await self.read_file(path, user=user, project=project)

    async def delete_file(self, path: str, *, user: str | None = None, project: str | None = None) -> bool:
        await self._engine.ensure_started()
        return await self.runtime.store.delete_file(self._workspace(user, project), check_path(path))

    # -- the default knowledge base ------------------------------------------------------------------

    async def add_page(self, page: KnowledgePage | Mapping[str, Any], *, user: str | None = None) -> KnowledgePage:
        """Add or replace a page of the default knowledge base (`project` from the page)."""
        page = page if isinstance(page, KnowledgePage) else KnowledgePage.model_validate(dict(page))
        await self._engine.ensure_started()
        return await self.runtime.documents.add_page(self._workspace(user, page.project), page)

    async def add_pointer(
        self, pointer: KnowledgePointer | Mapping[str, Any], *, user: str | None = None
    ) -> KnowledgePointer:
        """Add or replace a pointer (embedded from its title and description)."""
        pointer = pointer if isinstance(pointer, KnowledgePointer) else KnowledgePointer.model_validate(dict(pointer))
        await self._engine.ensure_started()
        return await self.runtime.documents.add_pointer(self._workspace(user, pointer.project), pointer)

    async def get_page(self, page_id: str, *, user: str | None = None, project: str | None = None) -> KnowledgePage:
        await self._engine.ensure_started()
        found = await self.runtime.store.get_page(self._workspace(user, project), page_id)
        if found is None:
            raise NotFound(f"page {page_id!r} not found", id=page_id)
        return found

    async def get_pointer(
        self, pointer_id: str, *, user: str | None = None, project: str | None = None
    ) -> KnowledgePointer:
        await self._engine.ensure_started()
        found = await self.runtime.store.get_pointer(self._workspace(user, project), pointer_id)
        if found is None:
            raise NotFound(f"pointer {pointer_id!r} not found", id=pointer_id)
        return found

    async def list_pages(
        self, *, user: str | None = None, project: str | None = None, limit: int = 100, offset: int = 0
    ) -> list[KnowledgePage]:
        _check_page_bounds(limit, offset)
        await self._engine.ensure_started()
        return await self.runtime.store.list_pages(self._workspace(user, project), limit=limit, offset=offset)

    async def list_pointers(
        self,
        *,
        page_id: str | None = None,
        user: str | None = None,
        project: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[KnowledgePointer]:
        _check_page_bounds(limit, offset)
        await self._engine.ensure_started()
        workspace = self._workspace(user, project)
        return await self.runtime.store.list_pointers(workspace, page_id=page_id, limit=limit, offset=offset)

    async def search_knowledge(
        self, query: str, *, k: int = 8, user: str | None = None, project: str | None = None
    ) -> list[dict[str, Any]]:
        """Search the knowledge port (the app's, or the default one) as the learning agent does."""
        await self._engine.ensure_started()
        return await self.runtime.knowledge.search(self._workspace(user, project), query, k)

    async def delete_page(self, page_id: str, *, user: str | None = None, project: str | None = None) -> bool:
        await self._engine.ensure_started()
        return await self.runtime.store.delete_knowledge(self._workspace(user, project), "page", page_id)

    async def delete_pointer(self, pointer_id: str, *, user: str | None = None, project: str | None = None) -> bool:
        await self._engine.ensure_started()
        return await self.runtime.store.delete_knowledge(self._workspace(user, project), "pointer", pointer_id)
