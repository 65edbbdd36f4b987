"""Data types shared by every part of learnloop.

`Learning` is the unit of memory. A `Vocabulary` lists the categories one namespace allows; apps configure
it, nothing here knows about brewing or analytics. `Scope` is the (tenant, user) pair every store call is
bound to.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .errors import InvalidCategory, ValidationError

__all__ = [
    "DEFAULT_NAMESPACE",
    "Category",
    "Event",
    "EventAction",
    "Filters",
    "Learning",
    "LearningLink",
    "LearningType",
    "Limits",
    "LinkKind",
    "Origin",
    "Page",
    "Panel",
    "Provenance",
    "Resolution",
    "RetrievalResult",
    "RetrievedItem",
    "Scope",
    "Source",
    "Status",
    "Vocabulary",
    "choice",
    "utcnow",
]

DEFAULT_NAMESPACE = "learning"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
_IDENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@+-]{0,127}$")
T = TypeVar("T")
E = TypeVar("E", bound="StrEnum")
M = TypeVar("M", bound=BaseModel)


def utcnow() -> datetime:
    return datetime.now(UTC)


class Status(StrEnum):
    CANDIDATE = "candidate"
    VERIFIED = "verified"
    DEPRECATED = "deprecated"


class LearningType(StrEnum):
    FACT = "fact"
    PREFERENCE = "preference"
    PROCEDURE = "procedure"
    SNIPPET = "snippet"
    PATTERN = "pattern"
    DECISION = "decision"
    FAQ = "faq"
    CORRECTION = "correction"


class Origin(StrEnum):
    """Which capture path produced a learning."""

    TOOL = "tool"
    OBSERVER = "observer"
    AGENT = "agent"
    FEEDBACK = "feedback"
    IMPORT = "import"
    PERSON = "person"


class Panel(StrEnum):
    """Where a live client shows an event (seed 003's panels)."""

    LEARNING = "learning"
    KNOWLEDGE_UPDATE = "knowledge_update"


class EventAction(StrEnum):
    CREATED = "created"
    MERGED = "merged"
    SUPERSEDED = "superseded"
    PROMOTED = "promoted"
    # A verified learning confirmed again: its confidence rises, its status stays.
    CONFIRMED = "confirmed"
    DEMOTED = "demoted"
    DEPRECATED = "deprecated"
    RESTORED = "restored"
    EDITED = "edited"
    DELETED = "deleted"
    RETRIEVED = "retrieved"
    # Dedupe kept two learnings apart but linked them for review; a person resolved the link or undid a merge.
    LINKED = "linked"
    RESOLVED = "resolved"
    UNDONE = "undone"
    IMPORTED = "imported"
    PURGED = "purged"
    USER_FORGOTTEN = "user_forgotten"
    VOCABULARY_CHANGED = "vocabulary_changed"
    # The background learning agent (learnloop.agent): one event per tool step, then one per package.
    EXPERIENCE_WRITTEN = "experience_written"
    KNOWLEDGE_EDITED = "knowledge_edited"
    REANALYSIS_REQUESTED = "reanalysis_requested"
    AGENT_TOOL = "agent_tool"
    LEARNING_DONE = "learning_done"


def choice(kind: type[E], value: object, field: str) -> E:
    """`value` as a member of the enum `kind`, or a `ValidationError` naming the field and the allowed values
    (the enum's own ValueError is no error a caller of learnloop should have to know)."""
    if isinstance(value, kind):
        return value
    try:
        return kind(str(value))
    except ValueError as exc:
        allowed = ", ".join(member.value for member in kind)
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "…"
        raise ValidationError(f"{field} must be one of: {allowed} (got {shown})", field=field) from exc


def check_identifier(value: str, what: str) -> str:
    if not isinstance(value, str) or not _IDENT.match(value):
        raise ValidationError(
            f"{what} must be 1-128 characters of letters, digits and _.:@+- (got {value!r})", field=what
        )
    return value


class Scope(BaseModel):
    """The tenant and user every store operation is bound to.

    `user=None` is a tenant-wide scope (admin and app keys); a user scope sees that user's learnings plus
    the tenant's global ones (those stored with no user) and can change only its own.
    """

    model_config = ConfigDict(frozen=True)

    tenant: str = "default"
    user: str | None = None

    @model_validator(mode="after")
    def _check(self) -> Scope:
        check_identifier(self.tenant, "tenant")
        if self.user is not None:
            check_identifier(self.user, "user")
        return self

    def covers(self, tenant: str, user: str | None) -> bool:
        """May this scope read an object owned by (tenant, user)?"""
        return tenant == self.tenant and (self.user is None or user is None or user == self.user)

    def owns(self, tenant: str, user: str | None) -> bool:
        """May this scope change an object owned by (tenant, user)?"""
        return tenant == self.tenant and (self.user is None or user == self.user)


class Source(BaseModel):
    """Where a learning came from: ids of the session, message and interaction, and free-text context."""

    session: str | None = None
    message: str | None = None
    interaction: str | None = None
    context: str | None = None
    author: str | None = None


class Learning(BaseModel):
    """One reusable, concise statement an agent learned, with its governance metadata."""

    id: int
    tenant: str
    user: str | None
    namespace: str = DEFAULT_NAMESPACE
    category: str | None = None
    type: LearningType = LearningType.FACT
    text: str
    topic: str = ""
    tags: list[str] = Field(default_factory=list)
    status: Status = Status.CANDIDATE
    confidence: float = 0.5
    hits: int = 0
    streak: int = 0
    failures: int = 0
    version: int = 1
    revision: int = 1
    supersedes: int | None = None
    simhash64: str = Field(pattern=r"^[0-9a-f]{16}$")
    origin: Origin = Origin.PERSON
    source: Source = Field(default_factory=Source)
    created_at: datetime
    updated_at: datetime
    last_retrieved_at: datetime | None = None
    embedding_model: str | None = None
    superseded_by: int | None = None  # for a deprecated learning: the one that replaced or absorbed it
    status_reason: str | None = None  # why its status last changed ("merged into #12: adds detail …")
    # When it was said (the anchor of "yesterday"), and the date or range its time expression resolves to.
    said_at: datetime | None = None
    event_at: datetime | None = None
    event_until: datetime | None = None

    @property
    def label(self) -> str:
        return self.category or self.type.value


class LinkKind(StrEnum):
    """Why dedupe kept two live learnings apart but tied them together for a person to review."""

    POSSIBLE_DUPLICATE = "possible_duplicate"
    POSSIBLE_CONFLICT = "possible_conflict"


class Resolution(StrEnum):
    """How a person settled a link: both stay, one replaces the other, or one merged text replaces both."""

    KEEP_BOTH = "keep_both"
    KEEP_NEW = "keep_new"
    KEEP_OLD = "keep_old"
    MERGE = "merge"


class LearningLink(BaseModel):
    """A pair of learnings dedupe could not call one fact or two: `learning_id` is the newer, `other_id` the
    one it resembles. Open until a person resolves it."""

    id: int
    tenant: str
    user: str | None
    learning_id: int
    other_id: int
    kind: LinkKind
    reason: str = ""
    similarity: float | None = None
    resolution: Resolution | None = None
    created_at: datetime
    resolved_at: datetime | None = None
    resolved_by: str | None = None

    @property
    def open(self) -> bool:
        return self.resolution is None


class Provenance(BaseModel):
    """One source a learning came from. A merged learning has the records of everything merged into it; a
    text that was skipped as already known is recorded on the learning that knew it."""

    learning_id: int
    action: str  # "created", "merged", "skipped", "imported"
    origin: Origin
    source: Source = Field(default_factory=Source)
    text: str | None = None
    at: datetime


class Category(BaseModel):
    name: str
    description: str
    examples: list[str] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError("category names are lowercase letters, digits and _.- (at most 64)")
        return value


class Vocabulary(BaseModel):
    """The categories one namespace allows, each with a description the model sees in tool schemas."""

    namespace: str = DEFAULT_NAMESPACE
    categories: list[Category]

    @model_validator(mode="after")
    def _check(self) -> Vocabulary:
        if not _NAME.match(self.namespace):
            raise ValueError("namespace names are lowercase letters, digits and _.- (at most 64)")
        if not self.categories:
            raise ValueError("a vocabulary needs at least one category")
        names = [c.name for c in self.categories]
        if len(set(names)) != len(names):
            raise ValueError("category names must be unique")
        return self

    @classmethod
    def from_mapping(cls, categories: dict[str, str], namespace: str = DEFAULT_NAMESPACE) -> Vocabulary:
        """`Vocabulary.from_mapping({"equipment": "Boil-off rates, dead space", ...})`."""
        return cls(
            namespace=namespace,
            categories=[Category(name=k, description=v) for k, v in categories.items()],
        )

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.categories]

    def check(self, category: str | None) -> str | None:
        if category is None:
            return None
        if category not in self.names:
            raise InvalidCategory(category, self.names, self.namespace)
        return category


DEFAULT_VOCABULARY = Vocabulary(
    categories=[
        Category(name="preference", description="How the user likes things done: style, formats, choices"),
        Category(name="fact", description="Stable facts about the user's setup, data, equipment or domain"),
        Category(name="procedure", description="Steps or approaches that worked and should be reused"),
        Category(name="correction", description="Something the assistant got wrong, with the right answer"),
    ]
)


class Filters(BaseModel):
    """Restrictions applied before ranking. `None` means no restriction on that field."""

    namespace: str | None = DEFAULT_NAMESPACE
    categories: list[str] | None = None
    types: list[LearningType] | None = None
    statuses: list[Status] = Field(default_factory=lambda: [Status.VERIFIED, Status.CANDIDATE])
    tags: list[str] | None = None
    include_global: bool = True
    # The channel the question comes from: learnings scoped to other channels (tag `channel:<name>`, what a person
    # said about one channel, such as a format for WhatsApp) are not served. None: every channel's.
    channel: str | None = None

    @field_validator("statuses")
    @classmethod
    def _never_deprecated(cls, value: list[Status]) -> list[Status]:
        # Retrieval feeds prompts; deprecated learnings are wrong or replaced and must never reach one.
        kept: list[Status] = [s for s in value if s is not Status.DEPRECATED]
        if not kept:
            raise ValueError("retrieval needs at least one of: candidate, verified")
        return kept


class Limits(BaseModel):
    """How much retrieval may return (seed 004 defaults: TopK=6, MaxItems=6, MaxChars=1500)."""

    top_k: int = Field(default=6, ge=1, le=1000)
    max_items: int = Field(default=6, ge=1, le=1000)
    max_chars: int = Field(default=1500, ge=50, le=1_000_000)
    max_tokens: int | None = Field(default=None, ge=10, le=1_000_000)
    min_relevance: float = Field(default=0.0, ge=0.0, le=1.0)


class RetrievedItem(BaseModel):
    learning: Learning
    # Live learnings dedupe could not tell apart from this one (a possible conflict): shown with it, newer first.
    conflicts: list[Learning] = Field(default_factory=list)
    score: float
    relevance: float
    vector_similarity: float | None
    text_rank: int | None
    vector_rank: int | None
    recency: float
    why: str
    used: bool = True  # relevant enough to count as used (hits, streaks, feedback); see RetrievalConfig


class RetrievalResult(BaseModel):
    query: str
    items: list[RetrievedItem]
    block: str
    tokens: int
    dropped: int = 0

    def __str__(self) -> str:
        return self.block


class Event(BaseModel):
    """One entry of the append-only event log."""

    seq: int
    tenant: str
    user: str | None
    learning_id: int | None
    actor: str
    action: str
    panel: Panel = Panel.LEARNING
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    reason: str | None = None
    at: datetime
    data: dict[str, Any] = Field(default_factory=dict)


class Page(BaseModel, Generic[T]):
    items: list[T]
    total: int
    offset: int
    limit: int

    @property
    def has_more(self) -> bool:
        return self.offset + len(self.items) < self.total


SortOrder = Literal["newest", "oldest", "updated"]


# BaseModel's own slots, set through their descriptors: `object.__setattr__` looks each name up first.
_SET_FIELDS_SET = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_SET_EXTRA = BaseModel.__dict__["__pydantic_extra__"].__set__
_SET_PRIVATE = BaseModel.__dict__["__pydantic_private__"].__set__


def constructed(model: type[M], values: dict[str, Any]) -> M:
    """`model.model_construct(**values)` for `values` naming every field of `model`, without its per-field
    bookkeeping (about 25 µs for a `Learning`, paid for every row read on the hot paths)."""
    instance = object.__new__(model)
    object.__setattr__(instance, "__dict__", values)
    _SET_FIELDS_SET(instance, set(values))
    _SET_EXTRA(instance, None)
    _SET_PRIVATE(instance, None)
    return instance
