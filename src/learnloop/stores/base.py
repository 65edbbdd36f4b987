"""The storage contract every backend implements, and the write operations it applies atomically.

Writes are described as a list of operations and applied by `Store.apply` in one transaction: the row, its
full-text and vector index entries and its events commit together or not at all. Reads and writes take a
`Scope` first; backends enforce it in every query, so no caller can see across tenants or users.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ..models import (
    Event,
    EventAction,
    Filters,
    Learning,
    LearningLink,
    LearningType,
    LinkKind,
    Origin,
    Page,
    Panel,
    Provenance,
    Resolution,
    Scope,
    Source,
    Status,
    Vocabulary,
)

__all__ = [
    "NEW_ID",
    "AddLink",
    "AddSource",
    "AppendEvent",
    "ApplyResult",
    "Candidate",
    "CarryLinks",
    "Delete",
    "EventDraft",
    "FollowUp",
    "Insert",
    "ListQuery",
    "NewLearning",
    "Operation",
    "Plan",
    "PutVocabulary",
    "ResolveLink",
    "SearchRequest",
    "Select",
    "Store",
    "Touch",
    "TurnRecord",
    "Update",
]

Vector = npt.NDArray[np.float32]


@dataclass(frozen=True)
class EventDraft:
    """An event before the store gives it a sequence number and time."""

    actor: str
    action: EventAction
    panel: Panel = Panel.LEARNING
    reason: str | None = None
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class NewLearning:
    tenant: str
    user: str | None
    text: str
    vector: Vector
    embedding_model: str
    simhash64: str
    namespace: str
    category: str | None = None
    type: LearningType = LearningType.FACT
    topic: str = ""
    tags: tuple[str, ...] = ()
    status: Status = Status.CANDIDATE
    confidence: float = 0.5
    origin: Origin = Origin.PERSON
    source: Source = field(default_factory=Source)
    supersedes: int | None = None
    version: int = 1
    hits: int = 0
    streak: int = 0
    failures: int = 0
    created_at: datetime | None = None
    updated_at: datetime | None = None
    last_retrieved_at: datetime | None = None
    status_reason: str | None = None
    said_at: datetime | None = None
    event_at: datetime | None = None
    event_until: datetime | None = None


@dataclass(frozen=True)
class Insert:
    record: NewLearning
    event: EventDraft


@dataclass(frozen=True)
class Update:
    """Change fields of one learning. `changes` keys are `Learning` field names (`source` as a `Source`).

    With `expect_revision`, the update fails with `ConflictError` if anyone changed the row since it was
    read, so read-decide-write sequences never lose a concurrent change.
    """

    id: int
    changes: dict[str, Any]
    event: EventDraft | None
    vector: Vector | None = None
    embedding_model: str | None = None
    expect_revision: int | None = None
    # Counters added to in SQL (`hits = hits + 1`): hits recorded in the background between the caller's
    # read and this write (which do not bump the revision) are then never lost.
    increments: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Delete:
    id: int
    event: EventDraft


@dataclass(frozen=True)
class Touch:
    """Record that learnings were retrieved: hits + 1, streak + 1, last_retrieved_at = at."""

    ids: tuple[int, ...]
    at: datetime


@dataclass(frozen=True)
class AppendEvent:
    """An event not tied to one row write (a retrieval, a vocabulary change)."""

    event: EventDraft
    learning_id: int | None = None
    user: str | None = None


@dataclass(frozen=True)
class PutVocabulary:
    """Set (insert or replace) a namespace's vocabulary for the scope's tenant."""

    vocabulary: Vocabulary
    event: EventDraft


class NewId:
    """Stands for the id of the learning the latest `Insert` of the same batch created: the operations that
    record a merge or a link name a row that does not exist until the batch runs."""

    def __repr__(self) -> str:
        return "NEW_ID"


NEW_ID = NewId()


@dataclass(frozen=True)
class AddLink:
    """Tie two live learnings together for review (a possible duplicate or conflict), with its event."""

    other_id: int
    kind: LinkKind
    reason: str
    event: EventDraft
    similarity: float | None = None
    learning_id: int | NewId = NEW_ID


@dataclass(frozen=True)
class AddSource:
    """Record where a learning came from; with `copy_from`, first copy every record of that learning (a
    merged learning keeps the sources of what it absorbed). `source=None` only copies."""

    action: str
    origin: Origin
    source: Source | None
    text: str | None = None
    learning_id: int | NewId = NEW_ID
    copy_from: int | None = None


@dataclass(frozen=True)
class CarryLinks:
    """Open links of a learning that was replaced move to its successor, so nothing awaiting review is lost."""

    from_id: int
    to_id: int | NewId = NEW_ID


@dataclass(frozen=True)
class ResolveLink:
    """Close a link with a person's decision (the learnings it changes are separate `Update`s and `Insert`s)."""

    link_id: int
    resolution: Resolution
    event: EventDraft


Operation = (
    Insert | Update | Delete | Touch | AppendEvent | PutVocabulary | AddLink | AddSource | CarryLinks | ResolveLink
)
FollowUp = Callable[[list[Learning]], Sequence[Operation]]
# Nearest learnings with their cosine similarity → the operations to apply (see `Store.plan_and_apply`).
Plan = Callable[[list[tuple[Learning, float]]], Sequence[Operation]]


@dataclass(frozen=True)
class ApplyResult:
    """`learnings[i]` is the row after operation i (None for Touch/AppendEvent, the old row for Delete)."""

    learnings: list[Learning | None]
    events: list[Event]


@dataclass(frozen=True)
class ListQuery:
    user: str | None = None
    global_only: bool = False
    namespace: str | None = None
    category: str | None = None
    status: Status | None = None
    origin: Origin | None = None
    text: str | None = None
    order: Literal["newest", "oldest", "updated"] = "newest"
    offset: int = 0
    limit: int = 50
    updated_before: datetime | None = None


@dataclass(frozen=True)
class SearchRequest:
    """`terms` are the query's content words (see `learnloop.terms.query_terms`), unstemmed."""

    vector: Vector | None
    terms: Sequence[str]
    filters: Filters
    vector_k: int = 50
    text_k: int = 50


@dataclass
class Candidate:
    """A search hit with what ranking needs. The full `Learning` is built on first use of `learning()`: a
    search returns dozens of candidates and the prompt keeps a handful, so the rest are never built."""

    id: int
    status: Status
    hits: int
    updated_at: float  # epoch seconds: ranking only needs ages, and this is the hot path
    tags: list[str]
    vector_similarity: float | None = None
    vector_rank: int | None = None
    text_score: float | None = None
    text_rank: int | None = None
    # The share of the query's keyword weight (IDF) this learning holds, 0..1 (None: the query had no keywords).
    text_coverage: float | None = None
    build: Callable[[], Learning] | None = field(default=None, repr=False, compare=False)
    _learning: Learning | None = field(default=None, repr=False, compare=False)
    # Live learnings this one has an open possible-conflict link with (filled for the selected few only).
    conflicts: tuple[Learning, ...] = field(default=(), repr=False, compare=False)
    # Epoch seconds of when it was said and of the span its words name (NaN: none), for time-aware ranking.
    said_at: float = field(default=float("nan"), repr=False, compare=False)
    event_at: float = field(default=float("nan"), repr=False, compare=False)
    event_until: float = field(default=float("nan"), repr=False, compare=False)

    def learning(self) -> Learning:
        if self._learning is None:
            if self.build is None:
                raise LookupError(f"candidate {self.id} carries no learning")
            self._learning = self.build()
        return self._learning


Select = Callable[[list[Candidate]], Sequence[Candidate]]


@dataclass(frozen=True)
class TurnRecord:
    """What the observer remembers of one turn of a session (no message text, only its hash and terms)."""

    session: str
    turn: int
    message_hash: str
    topic_terms: tuple[str, ...]
    retrieved_ids: tuple[int, ...]
    saved_ids: tuple[int, ...]
    at: datetime
    feedback_type: str | None = None
    feedback_score: float | None = None


@runtime_checkable
class Store(Protocol):
    """A place learnings live. All methods are scoped; ids outside the scope behave as missing."""

    async def start(self) -> None: ...

    async def aclose(self) -> None: ...

    async def apply(self, scope: Scope, operations: Sequence[Operation]) -> ApplyResult: ...

    def submit(
        self, scope: Scope, operations: Sequence[Operation], *, then: FollowUp | None = None
    ) -> Future[ApplyResult]:
        """Apply in the background without waiting; applied before any call this process makes later that
        could observe it (searches may run ahead).

        `then` receives the rows the operations touched, as they are after them, and returns operations
        applied in the same transaction: decisions on fresh values (evidence promotion after a retrieval's
        hit counts) without a read-decide-write race. Used for bookkeeping the caller should not wait for.
        """
        ...

    async def get(self, scope: Scope, learning_id: int) -> Learning | None: ...

    async def get_many(self, scope: Scope, ids: Sequence[int]) -> list[Learning]: ...

    async def get_vectors(self, scope: Scope, ids: Sequence[int]) -> dict[int, Vector]: ...

    async def list_learnings(self, scope: Scope, query: ListQuery) -> Page[Learning]: ...

    async def search(self, scope: Scope, request: SearchRequest, *, select: Select | None = None) -> list[Candidate]:
        """Vector and keyword candidates, filtered before top-k, each carrying what ranking needs.

        With `select`, the store calls it with those candidates (on its own thread: it must be quick and do no
        I/O) and returns only the ones it picked, in its order, with their learnings ready: a retrieval then
        reads whole rows for the few it shows rather than for the whole candidate pool.
        """
        ...

    async def near_duplicates(
        self, scope: Scope, simhash64: str, max_distance: int, namespace: str | None, *, include_global: bool = True
    ) -> list[tuple[int, int]]:
        """Live learnings whose SimHash is within `max_distance` bits: (id, distance), closest first."""
        ...

    async def similar(
        self, owner: Scope, vector: Vector, namespace: str | None, k: int, *, min_similarity: float = -1.0
    ) -> list[tuple[Learning, float]]:
        """The owner's own live learnings (exactly that user, or the global ones for user None) nearest to
        `vector`, with cosine similarity, closest first; of the `k` nearest, those below `min_similarity` are
        left out (and their rows never read). Used to deduplicate writes."""
        ...

    async def plan_and_apply(
        self,
        scope: Scope,
        owner: Scope,
        vector: Vector,
        namespace: str | None,
        k: int,
        plan: Plan,
        *,
        min_similarity: float = -1.0,
    ) -> ApplyResult:
        """In one transaction: the owner's learnings nearest to `vector` (as `similar` finds them), the
        operations `plan` makes of them (it runs on the store's thread: quick, no I/O), applied like `apply`.
        A deduplicated write then decides on neighbours nobody can change before it commits."""
        ...

    async def existing_texts(self, owner: Scope, namespace: str, texts: Sequence[str]) -> set[str]:
        """Which of `texts` the owner (exactly that user, or global for user None) already has."""
        ...

    async def claim_turn(
        self, owner: Scope, turn: TurnRecord, duplicate_window_seconds: float
    ) -> tuple[TurnRecord | None, int | None]:
        """Atomically: the session's last turn, and the number under which `turn` was recorded — or None when
        the last turn is the same message (`message_hash`) within the window (then nothing is recorded)."""
        ...

    async def put_turn(self, owner: Scope, turn: TurnRecord) -> None:
        """Insert or replace the record of (owner, session, turn)."""
        ...

    async def history(self, scope: Scope, learning_id: int) -> list[Event]: ...

    async def events(
        self, scope: Scope, *, after: int = 0, limit: int = 100, learning_id: int | None = None
    ) -> list[Event]: ...

    async def get_vocabulary(self, tenant: str, namespace: str) -> Vocabulary | None: ...

    async def put_vocabulary(self, tenant: str, vocabulary: Vocabulary, event: EventDraft) -> Event: ...

    async def list_vocabularies(self, tenant: str) -> list[Vocabulary]: ...

    async def purge_deprecated(self, scope: Scope, older_than: datetime, actor: str) -> list[int]: ...

    async def forget_user(self, tenant: str, user: str) -> dict[str, int]:
        """Remove every trace of `user`; anonymise tenant-global learnings they contributed."""
        ...

    def export(self, scope: Scope) -> AsyncIterator[tuple[Learning, Vector | None]]: ...

    # -- review: links dedupe left for a person, and provenance -------------------------------------------

    async def links(
        self,
        scope: Scope,
        *,
        open_only: bool = True,
        learning_id: int | None = None,
        offset: int = 0,
        limit: int = 50,
    ) -> Page[LearningLink]:
        """Links in the scope, newest first; with `learning_id`, those naming that learning on either side."""
        ...

    async def get_link(self, scope: Scope, link_id: int) -> LearningLink | None: ...

    async def provenance(self, scope: Scope, learning_id: int) -> list[Provenance]:
        """Every source record of a learning, oldest first."""
        ...

    async def conflict_partners(self, scope: Scope, ids: Sequence[int]) -> dict[int, list[int]]:
        """For each of `ids`, the learnings it has an open possible-conflict link with."""
        ...
