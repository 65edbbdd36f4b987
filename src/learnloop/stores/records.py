"""The records of the storage contract (`learnloop.stores.base`): the write operations `Store.apply` applies
in one transaction, and the queries and results of its reads."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ..models import (
    Event,
    EventAction,
    Filters,
    Learning,
    LearningType,
    LinkKind,
    Origin,
    Panel,
    Resolution,
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
    "Counted",
    "Delete",
    "EventDraft",
    "FollowUp",
    "Insert",
    "ListQuery",
    "NewId",
    "NewLearning",
    "Operation",
    "Plan",
    "PutVocabulary",
    "ResolveLink",
    "SearchRequest",
    "Select",
    "Touch",
    "TurnRecord",
    "Update",
    "Vector",
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
    # The rule version of the write gate that accepted `text` (`capture.gate_version`); None: not known.
    gate_version: str | None = None


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
    """Record that learnings were retrieved: hits + 1, streak + 1, last_retrieved_at = at.

    `follow_from` (streak, hits): a follow-up of the write (`Store.submit`'s `then`) is given only the touched
    candidates that reached either count, and their whole rows are read only then (evidence promotion's
    thresholds: below both, it cannot act on them)."""

    ids: tuple[int, ...]
    at: datetime
    follow_from: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class Counted:
    """A learning's retrieval counters after a `Touch` (kept apart from its row: `learning_counters`)."""

    id: int
    user: str | None
    hits: int
    streak: int
    last_retrieved_at: float


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
# Given the touched learnings that are still candidates (the only ones retrieval evidence can promote, see
# `lifecycle.evidence_promotion`), as they are after the operations.
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
    # The write gate version that accepted the text (see `NewLearning.gate_version`); filled for the selected.
    gate_version: str | None = field(default=None, repr=False, compare=False)

    def learning(self) -> Learning:
        if self._learning is None:
            if self.build is None:
                raise LookupError(f"candidate {self.id} carries no learning")
            self._learning = self.build()
        return self._learning


Select = Callable[[Sequence[Candidate]], Sequence[Candidate]]


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
    # What this turn hands to the next one of its session (`capture.carried.Carried`, as JSON data).
    carried: Mapping[str, Any] = field(default_factory=dict)
    channel: str = ""  # where the message came from (seed 001 §3.2's channel_type); "" when not said
