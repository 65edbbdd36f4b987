"""What the learning agent keeps: sessions, queued packages, experience files, knowledge pages and pointers,
and the write operations the store applies for it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..errors import LearnloopError, ValidationError
from ..llms.base import Message
from ..models import _NAME, Scope, check_identifier
from ..stores.base import EventDraft

__all__ = [
    "AgentSession",
    "EditExperience",
    "ExperienceChange",
    "ExperienceFile",
    "ExperienceFileInfo",
    "ExperienceOp",
    "Job",
    "KnowledgeEdit",
    "KnowledgePage",
    "KnowledgePointer",
    "QueueCounts",
    "QueuedInteraction",
    "SessionGone",
    "SessionStatus",
    "StepCommit",
    "StepRecord",
    "StoredMessage",
    "Workspace",
    "WriteExperience",
    "check_path",
    "check_project",
]

SessionStatus = Literal["open", "closed"]
JobStatus = Literal["pending", "claimed", "done", "failed"]

_PATH = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$")
_PROJECT = _NAME  # project names follow the same rule as namespaces; one definition, in models
MAX_PATH_CHARS = 200


class SessionGone(LearnloopError):
    """The session a worker is working for no longer exists (its user was forgotten): nothing more may be
    written for it, and its worker stops."""

    code = "session_gone"


def check_path(path: object) -> str:
    """Experience paths are relative, slash-separated names ("routing_rules.md", "extended/schedule.md")."""
    if not isinstance(path, str):
        raise ValidationError("path must be a string", field="path")
    cleaned = path.strip().lstrip("/")
    if not cleaned or len(cleaned) > MAX_PATH_CHARS or not _PATH.match(cleaned) or ".." in cleaned.split("/"):
        raise ValidationError(
            f"path must be a relative name of letters, digits and _.- parts separated by '/' (got {path!r})",
            field="path",
        )
    return cleaned


def check_project(project: object) -> str:
    if not isinstance(project, str) or not _PROJECT.match(project):
        raise ValidationError(
            f"project names are lowercase letters, digits and _.- (at most 64), got {project!r}", field="project"
        )
    return project


@dataclass(frozen=True)
class Workspace:
    """Where a learning agent works: the experience files and knowledge of one project, owned by one user
    (`owner`) or by the whole tenant (`owner` None). Knowledge reads also see the tenant's shared rows."""

    tenant: str
    owner: str | None
    project: str

    @property
    def scope(self) -> Scope:
        return Scope(tenant=self.tenant, user=self.owner)

    @classmethod
    def of(cls, tenant: str, owner: str | None, project: str) -> Workspace:
        check_identifier(tenant, "tenant")
        if owner is not None:
            check_identifier(owner, "user")
        return cls(tenant, owner, check_project(project))


class AgentSession(BaseModel):
    tenant: str
    session: str
    user: str | None
    project: str
    shared: bool = False
    status: SessionStatus = "open"
    created_at: datetime
    closed_at: datetime | None = None

    @property
    def is_open(self) -> bool:
        return self.status == "open"

    @property
    def workspace(self) -> Workspace:
        return Workspace(self.tenant, None if self.shared else self.user, self.project)


class QueuedInteraction(BaseModel):
    """The receipt of `submit_interaction`: the package is durable when this is returned."""

    id: int
    package_id: str
    session: str
    turn: int
    duplicate: bool = False
    status: JobStatus = "pending"


class QueueCounts(BaseModel):
    pending: int = 0
    claimed: int = 0
    done: int = 0
    failed: int = 0

    @property
    def unfinished(self) -> int:
        return self.pending + self.claimed


@dataclass(frozen=True)
class Job:
    """A claimed package."""

    id: int
    tenant: str
    user: str | None
    session: str
    package_id: str
    turn: int
    body: str
    attempts: int
    claimed_by: str


@dataclass(frozen=True)
class StoredMessage:
    id: int
    package_id: str
    message: Message
    tokens: int


@dataclass(frozen=True)
class StepRecord:
    step: int
    tool: str
    call_digest: str
    result: dict[str, Any]


class ExperienceFileInfo(BaseModel):
    path: str
    chars: int
    updated_by_session: str | None = None
    updated_at: datetime


class ExperienceFile(ExperienceFileInfo):
    project: str
    user: str | None
    content: str
    created_at: datetime


@dataclass(frozen=True)
class WriteExperience:
    """Create or replace a file (last write wins)."""

    workspace: Workspace
    path: str
    content: str
    session: str | None


@dataclass(frozen=True)
class EditExperience:
    """Replace the first occurrence of `old_text`; NotFound if the file or the text is missing."""

    workspace: Workspace
    path: str
    old_text: str
    new_text: str
    session: str | None


ExperienceOp = WriteExperience | EditExperience


@dataclass(frozen=True)
class ExperienceChange:
    path: str
    created: bool
    chars_before: int
    chars_after: int

    def facts(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "change": "created" if self.created else "updated",
            "chars_before": self.chars_before,
            "chars_after": self.chars_after,
        }


@dataclass(frozen=True)
class StepCommit:
    """One applied tool step: its effect (experience files only; other effects were applied before), the
    ledger entry, the tool message for the agent's conversation and the events, in one transaction.
    The facts of the experience change are merged into `result` and every event's data."""

    tenant: str
    user: str | None
    session: str
    package_id: str
    step: int
    tool: str
    call_digest: str
    result: dict[str, Any]
    events: list[EventDraft] = field(default_factory=list)
    effect: ExperienceOp | None = None


class KnowledgePage(BaseModel):
    """A document (or page of one): what it is about (`content`), its kind and what it refers to."""

    id: str
    title: str
    content: str = ""
    kind: str = ""
    cross_references: list[Any] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    project: str = "default"
    user: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


class KnowledgePointer(BaseModel):
    """A findable part of a page: a region, section or entry, with the description search embeds."""

    id: str
    page_id: str | None = None
    title: str
    description: str = ""
    cross_references: list[Any] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    project: str = "default"
    user: str | None = None
    embedding_model: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


class KnowledgeEdit(BaseModel):
    """One surgical change to the knowledge base, as the knowledge_update panel shows it."""

    target: Literal["pointer", "page"]
    id: str
    field: str
    before: Any = None
    after: Any = None
    reembedded: bool = False
