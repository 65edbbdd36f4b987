"""The `Store` contract on a SQL database, written once for every SQL backend.

Every call is a job on one thread that owns a connection and the in-memory search partitions
(`stores.worker.ConnectionWorker`), so the event loop never blocks on the database or numpy and the caches need
no locks. A backend subclasses `SqlStore` with how it connects (its connection class names its `Dialect`),
which of its driver's errors mean what, and the partition cache over its change log; the statements are the
shared ones of `stores.sql`.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Callable, Hashable, Sequence
from concurrent.futures import Future
from datetime import datetime
from typing import Any, Generic, TypeVar, cast

from ...models import Event, Learning, LearningLink, Page, Provenance, Scope, Vocabulary
from ..base import (
    ApplyResult,
    Candidate,
    EventDraft,
    FollowUp,
    ListQuery,
    Operation,
    Plan,
    SearchRequest,
    Select,
    TurnRecord,
    Vector,
)
from ..parts import StoreParts
from ..records import Counted
from ..search.partition_cache import PartitionCache
from ..worker import ConnectionWorker
from . import event_log, maintenance, review, turns, vocabularies
from .agent import AGENT_USER_TABLES, SqlAgentStore
from .archive import SqlTenantArchive
from .bookkeeping import Bookkeeping, Deferred, apply_bookkeeping
from .candidates import candidates
from .conversations import SqlConversationStore
from .dialect import Connection
from .holdback import SqlHoldbackStore
from .identities import IDENTITY_USER_TABLES, SqlIdentityStore
from .learning_metrics import SqlLearningMetricsStore
from .listing import list_learnings
from .profiles import PROFILE_USER_TABLES, SqlProfileStore
from .quarantine import SqlQuarantineStore
from .row_cache import RowCache
from .rows import vector_from_blob
from .service import SqlServiceStore
from .tools import TOOL_USER_TABLES, SqlToolStore, ToolJobs
from .transactions import write_transaction
from .writes import apply_operations, visible_by_id, visible_clause

__all__ = ["SqlStore"]

T = TypeVar("T")
C = TypeVar("C", bound=Connection)


class SqlStore(Generic[C]):
    """The backend-neutral body of a SQL `Store`. Subclasses give `_connect` and `_guarded` (the driver's errors
    as learnloop's), and build the partition cache they pass here."""

    # Every table besides learnings, events and vector_changes that carries (tenant, user_id): forgetting a user
    # deletes their rows there too. Tables added by later features register here.
    user_tables: tuple[str, ...] = (
        "turns",
        *TOOL_USER_TABLES,
        "api_keys",
        *AGENT_USER_TABLES,
        "retrieval_counts",
        "learning_links",
        "learning_sources",
        "conversations",
        "holdback_pins",
        *PROFILE_USER_TABLES,
        *IDENTITY_USER_TABLES,
    )
    # Whether a search on current partitions may run on the caller's thread: only where telling "current" costs
    # no round trip to a server (the check runs on the caller's thread too).
    inline_search = False

    def __init__(
        self,
        *,
        embedding_model: str,
        dimension: int,
        clock: Callable[[], datetime],
        partitions: PartitionCache[C],
        thread_name: str,
    ) -> None:
        self.embedding_model = embedding_model
        self.dimension = dimension
        self.clock = clock
        self._partitions = partitions
        # Decoded rows kept between retrievals, where the stamp moves with every commit (see `row_cache`).
        self._rows: RowCache | None = None
        self._worker: ConnectionWorker[C] = ConnectionWorker(
            self._connect, self._apply_deferred, name=thread_name, idle=self._partitions.housekeeping
        )

    # -- the optional parts, on the same database, connection and thread (each built once) ---------------

    @property
    def _jobs(self) -> ToolJobs:
        """This store as its parts use it: the subclass gives `path` and the commit stamp."""
        return cast("ToolJobs", self)

    @functools.cached_property
    def tools(self) -> SqlToolStore:
        """Tool intelligence (jobs go through `_run`)."""
        return SqlToolStore(self._jobs)

    @functools.cached_property
    def agent(self) -> SqlAgentStore:
        """The learning agent's sessions, queue, experience files and knowledge base."""
        return SqlAgentStore(self._jobs)

    @functools.cached_property
    def quarantine(self) -> SqlQuarantineStore:
        """The write gate's quarantine list and rule version."""
        return SqlQuarantineStore(self._jobs)

    @functools.cached_property
    def service(self) -> SqlServiceStore:
        """The HTTP service's API keys, counters and metric aggregates."""
        return SqlServiceStore(self._jobs)

    @functools.cached_property
    def archive(self) -> SqlTenantArchive:
        """Whole-tenant export and import."""
        return SqlTenantArchive(self._jobs, imported=lambda tenant: self.tools.note_outside_write())

    @functools.cached_property
    def conversations(self) -> SqlConversationStore:
        """The conversation record and turn state of `loop.turn()`."""
        return SqlConversationStore(self._jobs)

    @functools.cached_property
    def holdback(self) -> SqlHoldbackStore:
        """The holdback experiment's settings and pins, and the turns its report reads."""
        return SqlHoldbackStore(self._jobs)

    @functools.cached_property
    def profiles(self) -> SqlProfileStore:
        """User profiles: pattern frequencies and what a person set by hand."""
        return SqlProfileStore(self._jobs)

    @functools.cached_property
    def identities(self) -> SqlIdentityStore:
        """Canonical users, channel identities and link codes (a merge moves tool rows: the tool store reloads)."""
        return SqlIdentityStore(self._jobs, moved=lambda tenant: self.tools.note_outside_write())

    @functools.cached_property
    def learning_metrics(self) -> SqlLearningMetricsStore:
        """Reads for seed 001 §11's metrics and the feedback records."""
        return SqlLearningMetricsStore(self._jobs)

    def parts(self) -> StoreParts:
        """Every optional part this backend offers, for the engine's constructor."""
        return StoreParts(
            tools=self.tools,
            agent=self.agent,
            quarantine=self.quarantine,
            service=self.service,
            archive=self.archive,
            conversations=self.conversations,
            holdback=self.holdback,
            profiles=self.profiles,
            learning_metrics=self.learning_metrics,
            identities=self.identities,
        )

    # -- plumbing ------------------------------------------------------------------------------------

    def _connect(self) -> C:
        raise NotImplementedError

    @staticmethod
    def _guarded(fn: Callable[..., T], args: tuple[Any, ...]) -> Callable[[C], T]:
        """`fn(connection, *args)` with the driver's errors raised as learnloop's."""
        raise NotImplementedError

    async def _run(self, fn: Callable[..., T], *args: Any, stale_ok: bool = False) -> T:
        """Run `fn(connection, *args)` on the store's thread. `stale_ok` jobs may run before deferred
        bookkeeping writes that are still gathering (see `worker`)."""
        return await self._worker.run(self._guarded(fn, args), stale_ok=stale_ok)

    def _submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Queue `fn(connection, *args)` after the jobs already queued, without waiting for it."""
        return self._worker.submit(self._guarded(fn, args))

    async def start(self) -> None:
        await self._run(lambda conn: None)

    async def aclose(self) -> None:
        if self._worker.closing:
            return
        await asyncio.to_thread(self._worker.close, self._close)

    def _close(self, conn: C) -> None:
        self._partitions.close()
        conn.close()

    # -- writes --------------------------------------------------------------------------------------

    async def apply(self, scope: Scope, operations: Sequence[Operation]) -> ApplyResult:
        return await self._run(self._apply, scope, list(operations))

    def _apply(self, conn: C, scope: Scope, operations: list[Operation]) -> ApplyResult:
        touched: list[Counted] = []
        with write_transaction(conn):
            learnings, events = apply_operations(conn, scope, operations, self.clock(), touched=touched)
        self._partitions.touch(scope, touched)
        return ApplyResult(learnings=learnings, events=events)

    def submit(
        self, scope: Scope, operations: Sequence[Operation], *, then: FollowUp | None = None
    ) -> Future[ApplyResult]:
        return self._worker.defer(Bookkeeping(scope, list(operations), then))

    def _apply_deferred(self, conn: C, batch: Deferred) -> Deferred:
        later: Deferred = []
        rows = self._rows
        if rows is None:
            self._partitions.keep_current(
                conn, lambda: later.extend(apply_bookkeeping(conn, batch, self.clock(), self._partitions.touch))
            )
            return later
        watched, written = rows.watch(batch)

        def touched(scope: Scope, counted: list[Counted]) -> None:
            self._partitions.touch(scope, counted)
            rows.refresh(counted)

        try:
            stamps = self._partitions.keep_current(
                conn, lambda: later.extend(apply_bookkeeping(conn, watched, self.clock(), touched)), also=rows.stamp
            )
        except BaseException:
            rows.clear()
            raise
        rows.carry(stamps, written)
        return later

    # -- simple reads --------------------------------------------------------------------------------

    async def get(self, scope: Scope, learning_id: int) -> Learning | None:
        found = await self.get_many(scope, [learning_id])
        return found[0] if found else None

    async def get_many(self, scope: Scope, ids: Sequence[int]) -> list[Learning]:
        return await self._run(self._get_many, scope, list(ids))

    def _get_many(self, conn: C, scope: Scope, ids: list[int]) -> list[Learning]:
        by_id = visible_by_id(conn, scope, ids)
        return [by_id[i] for i in ids if i in by_id]

    async def get_vectors(self, scope: Scope, ids: Sequence[int]) -> dict[int, Vector]:
        return await self._run(self._get_vectors, scope, list(ids))

    def _get_vectors(self, conn: C, scope: Scope, ids: list[int]) -> dict[int, Vector]:
        if not ids:
            return {}
        clause, params = visible_clause(scope, by_id=True)
        marks = ", ".join("?" for _ in ids)
        rows = conn.execute(
            f"SELECT id, embedding FROM learnings WHERE id IN ({marks}) AND {clause} "
            "AND embedding IS NOT NULL AND embedding_model = ?",
            [*ids, *params, self.embedding_model],
        )
        return {row[0]: vector_from_blob(row[1]) for row in rows}

    async def list_learnings(self, scope: Scope, query: ListQuery) -> Page[Learning]:
        return await self._run(list_learnings, scope, query)

    # -- search --------------------------------------------------------------------------------------

    async def search(self, scope: Scope, request: SearchRequest, *, select: Select | None = None) -> list[Candidate]:
        # Ranking may trail the gathering hit counts by a few milliseconds; not waiting for them is the point.
        include_global = request.filters.include_global
        # The stamp the inline check read, if it passed: the search runs right after it, on the same thread.
        seen: list[Hashable] = []
        return await self._worker.run(
            self._guarded(self._search, (scope, request, select, seen)),
            stale_ok=True,
            # On the caller's thread when the partitions are loaded and current (see `ConnectionWorker.run`).
            inline=(
                (lambda conn: self._partitions.current(conn, scope, include_global, seen))
                if self.inline_search
                else None
            ),
        )

    def _search(
        self, conn: C, scope: Scope, request: SearchRequest, select: Select | None, seen: list[Hashable]
    ) -> list[Candidate]:
        stamp = seen[0] if seen else self._partitions.source.stamp(conn)
        pool = self._partitions.search(conn, scope, request, stamp)
        rows = self._rows
        if rows is not None:
            rows.at(stamp)
        return candidates(conn, scope, pool, select, rows)

    async def near_duplicates(
        self, scope: Scope, simhash64: str, max_distance: int, namespace: str | None, *, include_global: bool = True
    ) -> list[tuple[int, int]]:
        return await self._run(
            self._partitions.near_simhash, scope, int(simhash64, 16), max_distance, namespace, include_global
        )

    async def similar(
        self, owner: Scope, vector: Vector, namespace: str | None, k: int, *, min_similarity: float = -1.0
    ) -> list[tuple[Learning, float]]:
        return await self._run(self._similar, owner, vector, namespace, k, min_similarity)

    def _similar(
        self,
        conn: C,
        owner: Scope,
        vector: Vector,
        namespace: str | None,
        k: int,
        min_similarity: float,
    ) -> list[tuple[Learning, float]]:
        hits = [hit for hit in self._partitions.nearest(conn, owner, vector, namespace, k) if hit[1] >= min_similarity]
        learnings = {learning.id: learning for learning in self._get_many(conn, owner, [i for i, _ in hits])}
        return [(learnings[i], similarity) for i, similarity in hits if i in learnings]

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
        return await self._run(self._plan_and_apply, scope, owner, vector, namespace, k, plan, min_similarity)

    def _plan_and_apply(
        self,
        conn: C,
        scope: Scope,
        owner: Scope,
        vector: Vector,
        namespace: str | None,
        k: int,
        plan: Plan,
        min_similarity: float,
    ) -> ApplyResult:
        with write_transaction(conn):
            operations = list(plan(self._similar(conn, owner, vector, namespace, k, min_similarity)))
            learnings, events = apply_operations(conn, scope, operations, self.clock())
        return ApplyResult(learnings=learnings, events=events)

    async def existing_texts(self, owner: Scope, namespace: str, texts: Sequence[str]) -> set[str]:
        return await self._run(self._existing_texts, owner, namespace, list(texts))

    def _existing_texts(self, conn: C, owner: Scope, namespace: str, texts: list[str]) -> set[str]:
        if not texts:
            return set()
        marks = ", ".join("?" for _ in texts)
        rows = conn.execute(
            f"SELECT text FROM learnings WHERE tenant = ? AND user_id = ? AND namespace = ? AND text IN ({marks})",
            [owner.tenant, owner.user or "", namespace, *texts],
        )
        return {row[0] for row in rows}

    # -- observer turns ------------------------------------------------------------------------------

    async def claim_turn(
        self, owner: Scope, turn: TurnRecord, duplicate_window_seconds: float
    ) -> tuple[TurnRecord | None, int | None]:
        return await self._run(turns.claim_turn, owner, turn, duplicate_window_seconds)

    async def put_turn(self, owner: Scope, turn: TurnRecord) -> None:
        await self._run(turns.put_turn, owner, turn)

    async def last_turn(self, owner: Scope, session: str) -> TurnRecord | None:
        return await self._run(turns.last_turn, owner, session)

    # -- events --------------------------------------------------------------------------------------

    async def history(self, scope: Scope, learning_id: int) -> list[Event]:
        return await self.events(scope, learning_id=learning_id, limit=10_000)

    async def events(
        self, scope: Scope, *, after: int = 0, limit: int = 100, learning_id: int | None = None
    ) -> list[Event]:
        return await self._run(event_log.read_events, scope, after, limit, learning_id)

    # -- vocabularies --------------------------------------------------------------------------------

    async def get_vocabulary(self, tenant: str, namespace: str) -> Vocabulary | None:
        return await self._run(vocabularies.get_vocabulary, tenant, namespace)

    async def list_vocabularies(self, tenant: str) -> list[Vocabulary]:
        return await self._run(vocabularies.list_vocabularies, tenant)

    async def put_vocabulary(self, tenant: str, vocabulary: Vocabulary, event: EventDraft) -> Event:
        return await self._run(vocabularies.put_vocabulary, tenant, vocabulary, event, self.clock())

    # -- maintenance ---------------------------------------------------------------------------------

    async def purge_deprecated(self, scope: Scope, older_than: datetime, actor: str) -> list[int]:
        return await self._run(maintenance.purge_deprecated, scope, older_than, actor, self.clock())

    async def forget_user(self, tenant: str, user: str) -> dict[str, int]:
        return await self._run(self._forget_user, tenant, user)

    def _forget_user(self, conn: C, tenant: str, user: str) -> dict[str, int]:
        removed = maintenance.forget_user(conn, tenant, user, self.user_tables, self.clock())
        self._partitions.forget((tenant, user))
        return removed

    # -- review ---------------------------------------------------------------------------------------

    async def links(
        self,
        scope: Scope,
        *,
        open_only: bool = True,
        learning_id: int | None = None,
        offset: int = 0,
        limit: int = 50,
    ) -> Page[LearningLink]:
        return await self._run(review.list_links, scope, open_only, learning_id, offset, limit)

    async def get_link(self, scope: Scope, link_id: int) -> LearningLink | None:
        return await self._run(review.get_link, scope, link_id)

    async def provenance(self, scope: Scope, learning_id: int) -> list[Provenance]:
        return await self._run(review.provenance, scope, learning_id)

    async def conflict_partners(self, scope: Scope, ids: Sequence[int]) -> dict[int, list[int]]:
        return await self._run(review.conflict_partners, scope, list(ids), stale_ok=True)

    async def export(self, scope: Scope) -> AsyncIterator[tuple[Learning, Vector | None]]:
        last_id = 0
        while True:
            batch = await self._run(maintenance.export_batch, scope, last_id)
            if not batch:
                return
            for learning, vector in batch:
                yield learning, vector
            last_id = batch[-1][0].id
