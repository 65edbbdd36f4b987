"""The storage contract every backend implements, in parts (its records are in `stores.records`).

Writes are described as a list of operations and applied by `Store.apply` in one transaction: the row, its
full-text and vector index entries and its events commit together or not at all. Reads and writes take a
`Scope` first; backends enforce it in every query, so no caller can see across tenants or users.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from concurrent.futures import Future
from datetime import datetime
from typing import Protocol, runtime_checkable

from ..models import Event, Learning, LearningLink, Page, Provenance, Scope, Vocabulary
from .records import (
    NEW_ID,
    AddLink,
    AddSource,
    AppendEvent,
    ApplyResult,
    Candidate,
    CarryLinks,
    Delete,
    EventDraft,
    FollowUp,
    Insert,
    ListQuery,
    NewId,
    NewLearning,
    Operation,
    Plan,
    PutVocabulary,
    ResolveLink,
    SearchRequest,
    Select,
    Touch,
    TurnRecord,
    Update,
    Vector,
)

# The records are re-exported: callers import the contract and its records from one place.
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
    "EventLog",
    "FollowUp",
    "Insert",
    "LearningStore",
    "ListQuery",
    "NewId",
    "NewLearning",
    "Operation",
    "Plan",
    "PutVocabulary",
    "ResolveLink",
    "ReviewStore",
    "SearchRequest",
    "Select",
    "Store",
    "Touch",
    "TurnLog",
    "TurnRecord",
    "Update",
    "Vector",
    "VocabularyStore",
]


@runtime_checkable
class LearningStore(Protocol):
    """Learnings: governed writes as batches of operations, reads, search and the dedupe lookups. All methods
    are scoped; ids outside the scope behave as missing."""

    async def apply(self, scope: Scope, operations: Sequence[Operation]) -> ApplyResult: ...

    def submit(
        self, scope: Scope, operations: Sequence[Operation], *, then: FollowUp | None = None
    ) -> Future[ApplyResult]:
        """Apply in the background without waiting; applied before any call this process makes later that
        could observe it (searches may run ahead).

        `then` receives the touched rows that are still candidates, as they are after them, and returns operations
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

    async def purge_deprecated(self, scope: Scope, older_than: datetime, actor: str) -> list[int]: ...

    def export(self, scope: Scope) -> AsyncIterator[tuple[Learning, Vector | None]]: ...


@runtime_checkable
class TurnLog(Protocol):
    """What the observer remembers of each session's turns (the duplicate-message window, feedback)."""

    async def claim_turn(
        self, owner: Scope, turn: TurnRecord, duplicate_window_seconds: float
    ) -> tuple[TurnRecord | None, int | None]:
        """Atomically: the session's last turn, and the number under which `turn` was recorded — or, when the
        user's latest turn (any session, any channel; the session's without a user) is the same message
        (`message_hash`) within the window, that turn and None (then nothing is recorded)."""
        ...

    async def put_turn(self, owner: Scope, turn: TurnRecord) -> None:
        """Insert or replace the record of (owner, session, turn)."""
        ...

    async def last_turn(self, owner: Scope, session: str) -> TurnRecord | None:
        """The session's latest turn record, if any."""
        ...


@runtime_checkable
class EventLog(Protocol):
    """The append-only event log every change writes in the transaction that makes it.

    Cursor contract: `events(after=cursor)` returns events in cursor order, and an event becomes visible only
    with a cursor greater than every cursor already visible to any reader. A reader resuming from the last
    cursor it saw (`Last-Event-ID`) therefore never skips an event committed later by a concurrent writer.
    A backend whose ids are handed out before commit (several writers) must not expose an id while a lower
    one may still commit: it hides events above the lowest id still in flight. On SQLite one writer at a
    time makes the sequence number commit-ordered."""

    async def history(self, scope: Scope, learning_id: int) -> list[Event]: ...

    async def events(
        self, scope: Scope, *, after: int = 0, limit: int = 100, learning_id: int | None = None
    ) -> list[Event]: ...


@runtime_checkable
class VocabularyStore(Protocol):
    """Each namespace's category vocabulary, per tenant; changing one appends an event."""

    async def get_vocabulary(self, tenant: str, namespace: str) -> Vocabulary | None: ...

    async def put_vocabulary(self, tenant: str, vocabulary: Vocabulary, event: EventDraft) -> Event: ...

    async def list_vocabularies(self, tenant: str) -> list[Vocabulary]: ...


@runtime_checkable
class ReviewStore(Protocol):
    """Links dedupe left for a person to review, and the provenance of every learning."""

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


@runtime_checkable
class Store(LearningStore, TurnLog, EventLog, VocabularyStore, ReviewStore, Protocol):
    """A place learnings live: every part above, on one database, with one lifecycle."""

    async def start(self) -> None: ...

    async def aclose(self) -> None: ...

    async def forget_user(self, tenant: str, user: str) -> dict[str, int]:
        """Remove every trace of `user`; anonymise tenant-global learnings they contributed."""
        ...
