"""The background learning agent over HTTP: queue interactions, open and close sessions, read experience
files, manage the default knowledge base.

`POST /api/interactions` queues a package durably and answers 202 at once; the session's worker processes it
later and its events appear on `/api/events` (panels `learning` and `knowledge_update`, then
`learning_done`). Without a learning model the agent's endpoints answer 409 `not_configured`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field, StringConstraints

from ...agent import (
    AgentSession,
    AgentStatus,
    ExperienceContext,
    ExperienceFile,
    ExperienceFileInfo,
    KnowledgePage,
    KnowledgePointer,
    PackageToolCall,
    QueueCounts,
    QueuedInteraction,
)
from ...agent.package import MAX_TURN
from ...agent.records import SessionStatus
from ..auth import ApiDep
from ..errors import ERROR_RESPONSES
from ..schemas import IDENT, MAX_INT, NAME, Ident, Strict

__all__ = ["router"]

router = APIRouter(prefix="/api", tags=["learning agent"], responses=ERROR_RESPONSES)

# Projects are named like namespaces (`learnloop.agent.records.check_project`).
Project = Annotated[str, StringConstraints(pattern=NAME, max_length=64)]
UserQuery = Annotated[str | None, Query(pattern=IDENT, max_length=128, description="The end user (app keys)")]
ProjectQuery = Annotated[str | None, Query(pattern=NAME, max_length=64)]


class InteractionIn(Strict):
    """One finished turn of the main agent (seed 003's interaction package)."""

    session: Ident
    user: Ident | None = None
    user_query: Annotated[str, StringConstraints(max_length=32_000)]
    assistant_response: Annotated[str, StringConstraints(max_length=64_000)] = ""
    items_retrieved: list[dict[str, Any]] = Field(default_factory=list, max_length=200)
    experience_read: list[Annotated[str, StringConstraints(max_length=200)]] = Field(
        default_factory=list, max_length=100
    )
    actions: list[dict[str, Any]] = Field(default_factory=list, max_length=200)
    tool_calls: list[PackageToolCall] = Field(default_factory=list, max_length=200)
    turn: int | None = Field(default=None, ge=0, le=MAX_TURN)
    id: Ident | None = None
    at: datetime | None = None
    meta: dict[str, Any] = Field(default_factory=dict)


class SessionIn(Strict):
    session: Ident | None = None
    user: Ident | None = None
    project: Project | None = None
    shared: bool | None = None


class SessionOut(BaseModel):
    session: AgentSession
    queue: QueueCounts


class FileIn(Strict):
    content: Annotated[str, StringConstraints(max_length=200_000)]
    user: Ident | None = None
    project: Project | None = None


class DeletedOut(BaseModel):
    deleted: bool


class PageIn(Strict):
    id: Ident
    title: Annotated[str, StringConstraints(min_length=1, max_length=500)]
    content: Annotated[str, StringConstraints(max_length=100_000)] = ""
    kind: Annotated[str, StringConstraints(max_length=100)] = ""
    cross_references: list[Any] = Field(default_factory=list, max_length=500)
    metadata: dict[str, Any] = Field(default_factory=dict)
    project: Project = "default"


class PointerIn(Strict):
    id: Ident
    page_id: Ident | None = None
    title: Annotated[str, StringConstraints(min_length=1, max_length=500)]
    description: Annotated[str, StringConstraints(max_length=20_000)] = ""
    cross_references: list[Any] = Field(default_factory=list, max_length=500)
    metadata: dict[str, Any] = Field(default_factory=dict)
    project: Project = "default"


@router.post("/interactions", status_code=202, summary="Queue an interaction for the learning agent")
async def submit_interaction(api: ApiDep, body: InteractionIn) -> QueuedInteraction:
    """Durable when answered; the learning agent works on it in the background. The same `id` twice is
    queued once (`duplicate: true`). An unknown session is opened."""
    fields = body.model_dump(exclude={"session", "user", "user_query", "assistant_response"}, exclude_none=True)
    return await api.loop.submit_interaction(
        body.session, body.user_query, body.assistant_response, user=api.acting_for(body.user), **fields
    )


@router.get("/agent", summary="Whether the learning agent is configured and running here")
async def agent_status(api: ApiDep) -> AgentStatus:
    """A user-bound key sees its own user's workers and queue only; admin and app keys the tenant's."""
    return await api.loop.agent.status(user=api.scope_user)


@router.post("/agent/sessions", status_code=201, summary="Open a session and start its worker")
async def open_session(api: ApiDep, body: SessionIn) -> AgentSession:
    """`shared: true` (admin and app keys only) lets the session's learning agent curate the tenant's
    experience and knowledge of the project instead of the user's own."""
    if body.shared:
        api.principal.require_tenant_key("a session on the tenant's shared experience")
    return await api.loop.agent.open_session(
        body.session, user=api.acting_for(body.user), project=body.project, shared=body.shared
    )


@router.get("/agent/sessions", summary="Sessions of the tenant or of one user")
async def list_sessions(api: ApiDep, user: UserQuery = None, status: SessionStatus | None = None) -> list[AgentSession]:
    return await api.loop.agent.list_sessions(user=api.acting_for(user), status=status)


@router.get("/agent/sessions/{session}", summary="A session and its queue")
async def get_session(api: ApiDep, session: str, user: UserQuery = None) -> SessionOut:
    found = await api.loop.agent.get_session(session, user=api.acting_for(user))
    return SessionOut(session=found, queue=await api.loop.agent.queue(session, user=api.acting_for(user)))


@router.post("/agent/sessions/{session}/close", summary="Close a session and cancel its worker")
async def close_session(api: ApiDep, session: str, user: UserQuery = None) -> AgentSession:
    return await api.loop.agent.close_session(session, user=api.acting_for(user))


@router.get("/agent/sessions/{session}/context", summary="What the main agent should read this turn")
async def session_context(
    api: ApiDep,
    session: str,
    user: UserQuery = None,
    query: Annotated[str | None, Query(max_length=4000)] = None,
    max_tokens: Annotated[int | None, Query(ge=50, le=100_000)] = None,
) -> ExperienceContext:
    return await api.loop.experience_context(session, user=api.acting_for(user), query=query, max_tokens=max_tokens)


@router.get("/experience/files", summary="Experience files of a project")
async def list_files(api: ApiDep, user: UserQuery = None, project: ProjectQuery = None) -> list[ExperienceFileInfo]:
    return await api.loop.agent.list_files(user=api.acting_for(user), project=project)


@router.get("/experience/files/{path:path}", summary="One experience file")
async def read_file(api: ApiDep, path: str, user: UserQuery = None, project: ProjectQuery = None) -> ExperienceFile:
    return await api.loop.agent.read_file(path, user=api.acting_for(user), project=project)


@router.put("/experience/files/{path:path}", summary="Create or replace an experience file")
async def write_file(api: ApiDep, path: str, body: FileIn) -> ExperienceFile:
    actor = f"person:{api.principal.key_id}"
    user = api.acting_for(body.user)
    return await api.loop.agent.write_file(path, body.content, user=user, project=body.project, actor=actor)


@router.delete("/experience/files/{path:path}", summary="Delete an experience file")
async def delete_file(api: ApiDep, path: str, user: UserQuery = None, project: ProjectQuery = None) -> DeletedOut:
    return DeletedOut(deleted=await api.loop.agent.delete_file(path, user=api.acting_for(user), project=project))


@router.post("/knowledge/pages", summary="Add or replace a page of the default knowledge base")
async def add_page(api: ApiDep, body: PageIn, user: UserQuery = None) -> KnowledgePage:
    return await api.loop.agent.add_page(body.model_dump(), user=api.acting_for(user))


@router.get("/knowledge/pages", summary="Pages of a project")
async def list_pages(
    api: ApiDep,
    user: UserQuery = None,
    project: ProjectQuery = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=MAX_INT)] = 0,
) -> list[KnowledgePage]:
    return await api.loop.agent.list_pages(user=api.acting_for(user), project=project, limit=limit, offset=offset)


@router.get("/knowledge/pages/{page_id}", summary="One page")
async def get_page(api: ApiDep, page_id: str, user: UserQuery = None, project: ProjectQuery = None) -> KnowledgePage:
    return await api.loop.agent.get_page(page_id, user=api.acting_for(user), project=project)


@router.post("/knowledge/pointers", summary="Add or replace a pointer (embedded from title and description)")
async def add_pointer(api: ApiDep, body: PointerIn, user: UserQuery = None) -> KnowledgePointer:
    return await api.loop.agent.add_pointer(body.model_dump(), user=api.acting_for(user))


@router.get("/knowledge/pointers/{pointer_id}", summary="One pointer")
async def get_pointer(
    api: ApiDep, pointer_id: str, user: UserQuery = None, project: ProjectQuery = None
) -> KnowledgePointer:
    return await api.loop.agent.get_pointer(pointer_id, user=api.acting_for(user), project=project)


@router.get("/knowledge/search", summary="Search the knowledge base by meaning")
async def search_knowledge(
    api: ApiDep,
    q: Annotated[str, Query(min_length=1, max_length=4000)],
    k: Annotated[int, Query(ge=1, le=50)] = 8,
    user: UserQuery = None,
    project: ProjectQuery = None,
) -> list[dict[str, Any]]:
    return await api.loop.agent.search_knowledge(q, k=k, user=api.acting_for(user), project=project)
