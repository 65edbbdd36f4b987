"""The storage contract of the learning agent: sessions, the durable queue, the agent's conversation, the
ledger of applied steps, experience files and the default knowledge base.

A backend offers it as `StoreParts.agent` (SQLite: on the learnings' own file and thread; see `stores.parts`);
the engine holds it as `Engine.agent_store`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from ..agent.records import (
    AgentSession,
    ExperienceChange,
    ExperienceFile,
    ExperienceFileInfo,
    ExperienceOp,
    Job,
    KnowledgePage,
    KnowledgePointer,
    QueueCounts,
    QueuedInteraction,
    SessionStatus,
    StepCommit,
    StepRecord,
    StoredMessage,
    Workspace,
)
from ..llms.base import Message
from ..models import Event, Scope
from .base import EventDraft, Vector

__all__ = ["AgentContentStore", "AgentQueueStore", "AgentStore", "ClaimResult"]


class ClaimResult(Protocol):
    @property
    def job(self) -> Job | None: ...

    @property
    def closed(self) -> bool: ...

    @property
    def retry_in(self) -> float | None: ...


@runtime_checkable
class AgentQueueStore(Protocol):
    """Sessions, the durable queue of interaction packages, the agent's conversation and the ledger of the
    steps it applied (so a retried package never applies a step twice)."""

    async def open_session(
        self, scope: Scope, session: str, project: str | None, shared: bool | None, default_project: str, now: datetime
    ) -> AgentSession: ...

    async def close_session(self, scope: Scope, session: str, now: datetime) -> AgentSession: ...

    async def get_session(self, scope: Scope, session: str) -> AgentSession | None: ...

    async def list_sessions(self, scope: Scope | None, status: SessionStatus | None = None) -> list[AgentSession]: ...

    async def enqueue(
        self,
        scope: Scope,
        session: str,
        package_id: str,
        turn: int | None,
        body: str,
        default_project: str,
        now: datetime,
    ) -> QueuedInteraction: ...

    async def claim(self, tenant: str, session: str, claimer: str, now: datetime, lease: float) -> ClaimResult:
        """Claim the session's next package. Must not write (nor take a write lock) when there is none."""
        ...

    async def renew(self, job: Job, now: datetime) -> bool: ...

    async def retry_later(self, job: Job, error: str, not_before: datetime) -> bool: ...

    async def release(self, job: Job) -> bool: ...

    async def queue_counts(self, scope: Scope, session: str | None = None) -> QueueCounts: ...

    async def sessions_with_work(self) -> list[tuple[str, str]]:
        """(tenant, session) of every open session with a package pending or claimed."""
        ...

    async def finish(
        self, job: Job, *, failed: bool, error: str | None, event: EventDraft, budget_tokens: int, now: datetime
    ) -> list[Event]: ...

    async def messages(self, tenant: str, session: str) -> list[StoredMessage]: ...

    async def append_message(self, job: Job, message: Message, tokens: int, now: datetime) -> StoredMessage:
        """Raises `SessionGone` (writing nothing) when the job's session no longer exists; so does
        `commit_step`."""
        ...

    async def steps(self, tenant: str, package_id: str) -> dict[int, StepRecord]: ...

    async def commit_step(
        self, commit: StepCommit, message: Callable[[dict[str, Any]], tuple[Message, int]], now: datetime
    ) -> tuple[dict[str, Any], list[Event], bool]: ...


@runtime_checkable
class AgentContentStore(Protocol):
    """What the agent curates: experience files and the default knowledge base (pages and their pointers)."""

    @property
    def embedding_model(self) -> str:
        """The model pointer vectors were embedded with."""
        ...

    async def read_file(self, workspace: Workspace, path: str) -> ExperienceFile | None: ...

    async def read_files(self, workspace: Workspace, paths: Sequence[str]) -> list[ExperienceFile]: ...

    async def list_files(self, workspace: Workspace) -> list[ExperienceFileInfo]: ...

    async def change_file(
        self, op: ExperienceOp, event_user: str | None, event: EventDraft, now: datetime
    ) -> tuple[ExperienceChange, list[Event]]: ...

    async def delete_file(self, workspace: Workspace, path: str) -> bool: ...

    async def put_page(self, workspace: Workspace, page: KnowledgePage, now: datetime) -> KnowledgePage: ...

    async def put_pointer(
        self, workspace: Workspace, pointer: KnowledgePointer, vector: Vector | None, now: datetime
    ) -> KnowledgePointer: ...

    async def get_page(self, workspace: Workspace, page_id: str, *, visible: bool = True) -> KnowledgePage | None: ...

    async def get_pointer(
        self, workspace: Workspace, pointer_id: str, *, visible: bool = True
    ) -> KnowledgePointer | None: ...

    async def list_pages(self, workspace: Workspace, *, limit: int = 100, offset: int = 0) -> list[KnowledgePage]: ...

    async def list_pointers(
        self, workspace: Workspace, *, page_id: str | None = None, limit: int = 100, offset: int = 0
    ) -> list[KnowledgePointer]: ...

    async def pointer_vectors(self, workspace: Workspace) -> tuple[list[KnowledgePointer], Vector | None]: ...

    async def update_knowledge(
        self,
        workspace: Workspace,
        target: str,
        item_id: str,
        changes: dict[str, Any],
        vector: Vector | None,
        now: datetime,
    ) -> None: ...

    async def delete_knowledge(self, workspace: Workspace, target: str, item_id: str) -> bool: ...


@runtime_checkable
class AgentStore(AgentQueueStore, AgentContentStore, Protocol):
    """Both halves, as a backend offers them (`StoreParts.agent`)."""
