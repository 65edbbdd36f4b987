"""The embedded backend: one SQLite file (WAL), FTS5 full text, in-memory vector partitions.

Every call runs on one dedicated thread that owns the connection and the vector partitions, so the event
loop never blocks on disk or numpy and no lock is needed around the caches.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import sqlite3
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from threadpoolctl import threadpool_limits

from ...errors import ConflictError, StoreError
from ...models import Event, EventAction, Filters, Learning, Page, Scope, Status, Vocabulary, utcnow
from ...terms import index_terms, stem
from ..base import (
    AppendEvent,
    ApplyResult,
    Candidate,
    EventDraft,
    ListQuery,
    Operation,
    SearchRequest,
    TurnRecord,
    Vector,
)
from .agent import AGENT_USER_TABLES, SQLiteAgentStore
from .connection import connect, read_transaction, write_transaction
from .keywords import TermCodebook
from .partition import STATUS_CODES, Codebook, Partition, RowCodes
from .rows import LEARNING_COLUMNS, event_from_row, learning_from_row, vector_from_blob
from .search import match_expression, partition_keys
from .tools import TOOL_USER_TABLES, SQLiteToolStore
from .writes import apply_operations, owner_clause, visible_clause

__all__ = ["SQLiteStore"]

T = TypeVar("T")
PartitionKey = tuple[str, str]

_EVENT_COLUMNS = "seq, tenant, user_id, learning_id, actor, action, panel, before, after, reason, at, data"
_PARTITION_COLUMNS = "id, status, category, namespace, type, simhash64, embedding, text, topic, tags"


class SQLiteStore:
    """`Store` on a SQLite file. `path` may be ":memory:" for throwaway use."""

    def __init__(
        self,
        path: str | Path,
        *,
        embedding_model: str,
        dimension: int,
        synchronous: str = "NORMAL",
        ann_threshold: int = 8_192,
        max_cached_vectors: int = 2_000_000,
        blas_threads: int | None = 1,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.path = str(path)
        self.embedding_model = embedding_model
        self.dimension = dimension
        self.synchronous = synchronous
        self.ann_threshold = ann_threshold
        self.max_cached_vectors = max_cached_vectors
        self.clock = clock
        self.blas_threads = blas_threads
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="learnloop-sqlite")
        self._conn: sqlite3.Connection | None = None
        self._partitions: OrderedDict[PartitionKey, Partition] = OrderedDict()
        self._codebook = Codebook()
        self._terms = TermCodebook()

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"

    @functools.cached_property
    def tools(self) -> SQLiteToolStore:
        """Tool intelligence on this file, connection and executor thread (jobs go through `_run`)."""
        return SQLiteToolStore(self)

    @functools.cached_property
    def agent(self) -> SQLiteAgentStore:
        """The learning agent's sessions, queue, experience files and knowledge base, on this file and thread."""
        return SQLiteAgentStore(self)

    # -- plumbing ------------------------------------------------------------------------------------

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(self._call, fn, *args))

    def _call(self, fn: Callable[..., T], *args: Any) -> T:
        if self._conn is None:
            if self.blas_threads is not None:
                threadpool_limits(limits=self.blas_threads, user_api="blas")
            self._conn = connect(self.path, self.synchronous)
        try:
            return fn(self._conn, *args)
        except sqlite3.Error as exc:
            raise StoreError(f"SQLite error: {exc}") from exc

    async def start(self) -> None:
        await self._run(lambda conn: None)

    async def aclose(self) -> None:
        if self._executor._shutdown:
            return
        await self._run(self._close)
        self._executor.shutdown(wait=True)

    def _close(self, conn: sqlite3.Connection) -> None:
        for partition in self._partitions.values():
            partition.save_ann()
        self._partitions.clear()
        conn.close()
        self._conn = None

    # -- writes --------------------------------------------------------------------------------------

    async def apply(self, scope: Scope, operations: Sequence[Operation]) -> ApplyResult:
        return await self._run(self._apply, scope, list(operations))

    def _apply(self, conn: sqlite3.Connection, scope: Scope, operations: list[Operation]) -> ApplyResult:
        with write_transaction(conn):
            learnings, events = apply_operations(conn, scope, operations, self.clock())
        return ApplyResult(learnings=learnings, events=events)

    def submit(
        self, scope: Scope, operations: Sequence[Operation], *, fallback: Sequence[Operation] | None = None
    ) -> Future[ApplyResult]:
        # One executor thread runs jobs in submission order, which is what makes "applied before any
        # later call" hold without waiting here.
        return self._executor.submit(self._call, self._apply_or_fallback, scope, list(operations), fallback)

    def _apply_or_fallback(
        self,
        conn: sqlite3.Connection,
        scope: Scope,
        operations: list[Operation],
        fallback: Sequence[Operation] | None,
    ) -> ApplyResult:
        try:
            return self._apply(conn, scope, operations)
        except ConflictError:
            if fallback is None:
                raise
            return self._apply(conn, scope, list(fallback))

    # -- simple reads --------------------------------------------------------------------------------

    async def get(self, scope: Scope, learning_id: int) -> Learning | None:
        found = await self.get_many(scope, [learning_id])
        return found[0] if found else None

    async def get_many(self, scope: Scope, ids: Sequence[int]) -> list[Learning]:
        return await self._run(self._get_many, scope, list(ids))

    def _get_many(self, conn: sqlite3.Connection, scope: Scope, ids: list[int]) -> list[Learning]:
        if not ids:
            return []
        clause, params = visible_clause(scope, by_id=True)
        marks = ", ".join("?" for _ in ids)
        rows = conn.execute(
            f"SELECT {LEARNING_COLUMNS} FROM learnings WHERE id IN ({marks}) AND {clause}", [*ids, *params]
        ).fetchall()
        by_id = {row[0]: learning_from_row(row) for row in rows}
        return [by_id[i] for i in ids if i in by_id]

    async def get_vectors(self, scope: Scope, ids: Sequence[int]) -> dict[int, Vector]:
        return await self._run(self._get_vectors, scope, list(ids))

    def _get_vectors(self, conn: sqlite3.Connection, scope: Scope, ids: list[int]) -> dict[int, Vector]:
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
        return await self._run(self._list, scope, query)

    def _list(self, conn: sqlite3.Connection, scope: Scope, query: ListQuery) -> Page[Learning]:
        clause, params = visible_clause(scope)
        where = [clause]
        if query.global_only:
            where.append("user_id = ''")
        elif query.user is not None:
            where.append("user_id = ?")
            params.append(query.user)
        for column, value in (
            ("namespace", query.namespace),
            ("category", query.category),
            ("status", query.status),
            ("origin", query.origin),
        ):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(getattr(value, "value", value))
        if query.updated_before is not None:
            where.append("updated_at < ?")
            params.append(query.updated_before.timestamp())
        if query.text:
            expression = match_expression(query.text, prefix=True)
            if expression is None:
                return Page(items=[], total=0, offset=query.offset, limit=query.limit)
            where.append("id IN (SELECT rowid FROM learnings_fts WHERE learnings_fts MATCH ?)")
            params.append(expression)
        order = {
            "newest": "created_at DESC, id DESC",
            "oldest": "created_at ASC, id ASC",
            "updated": "updated_at DESC, id DESC",
        }[query.order]
        sql_where = " AND ".join(where)
        with read_transaction(conn):
            total = conn.execute(f"SELECT COUNT(*) FROM learnings WHERE {sql_where}", params).fetchone()[0]
            rows = conn.execute(
                f"SELECT {LEARNING_COLUMNS} FROM learnings WHERE {sql_where} ORDER BY {order} LIMIT ? OFFSET ?",
                [*params, query.limit, query.offset],
            ).fetchall()
        return Page(items=[learning_from_row(r) for r in rows], total=total, offset=query.offset, limit=query.limit)

    # -- search --------------------------------------------------------------------------------------

    async def search(self, scope: Scope, request: SearchRequest) -> list[Candidate]:
        return await self._run(self._search, scope, request)

    def _search(self, conn: sqlite3.Connection, scope: Scope, request: SearchRequest) -> list[Candidate]:
        keys = partition_keys(scope, request.filters.include_global)
        partitions = [self._partition(conn, key) for key in keys]
        masks = [p.mask(request.filters, self._codebook) for p in partitions]
        vector_hits: list[tuple[int, float]] = []
        if request.vector is not None and request.vector_k > 0:
            query = np.ascontiguousarray(request.vector, dtype=np.float32)
            if query.shape != (self.dimension,):
                raise StoreError(f"query vector has shape {query.shape}, expected ({self.dimension},)")
            for partition, mask in zip(partitions, masks, strict=True):
                vector_hits += partition.search(query, request.vector_k, mask)
            vector_hits = sorted(vector_hits, key=lambda pair: -pair[1])[: request.vector_k]
        text_hits: list[tuple[int, float]] = []
        terms = self._terms.known([stem(t) for t in request.terms])
        if terms and request.text_k > 0:
            for partition, mask in zip(partitions, masks, strict=True):
                text_hits += partition.keyword_search(terms, request.text_k, mask)
            text_hits = sorted(text_hits, key=lambda pair: -pair[1])[: request.text_k]
        found: dict[int, dict[str, Any]] = {}
        for rank, (learning_id, similarity) in enumerate(vector_hits, start=1):
            found[learning_id] = {"vector_similarity": similarity, "vector_rank": rank}
        for rank, (learning_id, score) in enumerate(text_hits, start=1):
            found.setdefault(learning_id, {}).update(text_score=score, text_rank=rank)
        if not found:
            return []
        clause, params = visible_clause(scope, by_id=True)
        ids = list(found)
        marks = ", ".join("?" for _ in ids)
        rows = conn.execute(
            f"SELECT id, status, hits, updated_at, tags FROM learnings WHERE id IN ({marks}) AND {clause}",
            [*ids, *params],
        ).fetchall()
        return [
            Candidate(
                id=row[0],
                status=Status(row[1]),
                hits=row[2],
                updated_at=row[3],
                tags=[] if row[4] == "[]" else json.loads(row[4]),
                **found[row[0]],
            )
            for row in rows
        ]

    async def near_duplicates(
        self, scope: Scope, simhash64: str, max_distance: int, namespace: str | None, *, include_global: bool = True
    ) -> list[tuple[int, int]]:
        return await self._run(
            self._near_duplicates, scope, int(simhash64, 16), max_distance, namespace, include_global
        )

    def _near_duplicates(
        self,
        conn: sqlite3.Connection,
        scope: Scope,
        simhash: int,
        max_distance: int,
        namespace: str | None,
        include_global: bool,
    ) -> list[tuple[int, int]]:
        filters = Filters(namespace=namespace)
        found: list[tuple[int, int]] = []
        for key in partition_keys(scope, include_global):
            partition = self._partition(conn, key)
            found += partition.near_simhash(simhash, max_distance, partition.mask(filters, self._codebook))
        return sorted(found, key=lambda pair: pair[1])

    async def similar(
        self, owner: Scope, vector: Vector, namespace: str | None, k: int
    ) -> list[tuple[Learning, float]]:
        return await self._run(self._similar, owner, vector, namespace, k)

    def _similar(
        self, conn: sqlite3.Connection, owner: Scope, vector: Vector, namespace: str | None, k: int
    ) -> list[tuple[Learning, float]]:
        partition = self._partition(conn, (owner.tenant, owner.user or ""))
        query = np.ascontiguousarray(vector, dtype=np.float32)
        hits = partition.search(query, k, partition.mask(Filters(namespace=namespace), self._codebook))
        learnings = {learning.id: learning for learning in self._get_many(conn, owner, [i for i, _ in hits])}
        return [(learnings[i], similarity) for i, similarity in hits if i in learnings]

    async def existing_texts(self, owner: Scope, namespace: str, texts: Sequence[str]) -> set[str]:
        return await self._run(self._existing_texts, owner, namespace, list(texts))

    def _existing_texts(self, conn: sqlite3.Connection, owner: Scope, namespace: str, texts: list[str]) -> set[str]:
        if not texts:
            return set()
        marks = ", ".join("?" for _ in texts)
        rows = conn.execute(
            f"SELECT text FROM learnings WHERE tenant = ? AND user_id = ? AND namespace = ? AND text IN ({marks})",
            [owner.tenant, owner.user or "", namespace, *texts],
        )
        return {row[0] for row in rows}

    # -- observer turns ------------------------------------------------------------------------------

    async def last_turn(self, owner: Scope, session: str) -> TurnRecord | None:
        return await self._run(self._last_turn, owner, session)

    def _last_turn(self, conn: sqlite3.Connection, owner: Scope, session: str) -> TurnRecord | None:
        row = conn.execute(
            "SELECT session, turn, message_hash, topic_terms, retrieved_ids, saved_ids, at, feedback_type, "
            "feedback_score FROM turns WHERE tenant = ? AND user_id = ? AND session = ? ORDER BY turn DESC LIMIT 1",
            (owner.tenant, owner.user or "", session),
        ).fetchone()
        if row is None:
            return None
        return TurnRecord(
            session=row[0],
            turn=row[1],
            message_hash=row[2],
            topic_terms=tuple(json.loads(row[3])),
            retrieved_ids=tuple(json.loads(row[4])),
            saved_ids=tuple(json.loads(row[5])),
            at=datetime.fromtimestamp(row[6], UTC),
            feedback_type=row[7],
            feedback_score=row[8],
        )

    async def put_turn(self, owner: Scope, turn: TurnRecord) -> None:
        await self._run(self._put_turn, owner, turn)

    def _put_turn(self, conn: sqlite3.Connection, owner: Scope, turn: TurnRecord) -> None:
        with write_transaction(conn):
            conn.execute(
                "INSERT OR REPLACE INTO turns (tenant, user_id, session, turn, message_hash, topic_terms, "
                "retrieved_ids, saved_ids, feedback_type, feedback_score, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    owner.tenant,
                    owner.user or "",
                    turn.session,
                    turn.turn,
                    turn.message_hash,
                    json.dumps(list(turn.topic_terms)),
                    json.dumps(list(turn.retrieved_ids)),
                    json.dumps(list(turn.saved_ids)),
                    turn.feedback_type,
                    turn.feedback_score,
                    turn.at.timestamp(),
                ),
            )

    # -- vector partitions ---------------------------------------------------------------------------

    def _partition(self, conn: sqlite3.Connection, key: PartitionKey) -> Partition:
        partition = self._partitions.get(key)
        if partition is None:
            partition = self._load_partition(conn, key)
            self._partitions[key] = partition
            self._evict()
        else:
            self._catch_up(conn, key, partition)
            self._partitions.move_to_end(key)
        return partition

    def _ann_path(self, key: PartitionKey) -> Path | None:
        if self.path == ":memory:":
            return None
        digest = hashlib.blake2b(f"{key[0]}\x00{key[1]}\x00{self.embedding_model}".encode(), digest_size=12)
        return Path(self.path + ".ann") / f"{digest.hexdigest()}.hnsw"

    def _row_codes(self, row: Sequence[Any]) -> RowCodes:
        """Codes of a row selected with `_PARTITION_COLUMNS`."""
        _, status, category, namespace, type_, sim, _, text, topic, tags = row[:10]
        terms, counts = self._terms.encode(index_terms(f"{text}\n{topic}\n{' '.join(json.loads(tags))}"))
        return RowCodes(
            status=STATUS_CODES[Status(status)],
            category=self._codebook.code(category),
            namespace=self._codebook.code(namespace),
            type=self._codebook.code(type_),
            simhash=int(sim, 16),
            terms=terms,
            term_counts=counts,
        )

    def _load_partition(self, conn: sqlite3.Connection, key: PartitionKey) -> Partition:
        with read_transaction(conn):
            watermark = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM vector_changes").fetchone()[0]
            rows = conn.execute(
                f"SELECT {_PARTITION_COLUMNS} FROM learnings "
                "WHERE tenant = ? AND user_id = ? AND status != 'deprecated' AND embedding_model = ?",
                (key[0], key[1], self.embedding_model),
            ).fetchall()
        partition = Partition(
            self.dimension,
            watermark,
            self.ann_threshold,
            self._ann_path(key),
            functools.partial(self._changes_since, conn, key),
        )
        if rows:
            blob = b"".join(row[6] for row in rows)
            vectors = np.frombuffer(blob, dtype=np.float32).reshape(len(rows), self.dimension)
            codes = [self._row_codes(r) for r in rows]
            partition.bulk_load([r[0] for r in rows], vectors, codes)
            partition.keywords.freeze()
        return partition

    def _changes_since(self, conn: sqlite3.Connection, key: PartitionKey, seq: int) -> list[int] | None:
        rows = conn.execute(
            "SELECT learning_id FROM vector_changes WHERE tenant = ? AND user_id = ? AND seq > ?",
            (key[0], key[1], seq),
        ).fetchall()
        return [r[0] for r in rows]

    def _catch_up(self, conn: sqlite3.Connection, key: PartitionKey, partition: Partition) -> None:
        changes = conn.execute(
            "SELECT seq, learning_id FROM vector_changes WHERE tenant = ? AND user_id = ? AND seq > ? ORDER BY seq",
            (key[0], key[1], partition.watermark),
        ).fetchall()
        if not changes:
            return
        ids = sorted({learning_id for _, learning_id in changes})
        marks = ", ".join("?" for _ in ids)
        rows = conn.execute(
            f"SELECT {_PARTITION_COLUMNS}, tenant, user_id, embedding_model FROM learnings WHERE id IN ({marks})",
            ids,
        ).fetchall()
        current = {row[0]: row for row in rows}
        for learning_id in ids:
            row = current.get(learning_id)
            if (
                row is not None
                and row[1] != "deprecated"
                and (row[10], row[11]) == key
                and row[12] == self.embedding_model
                and row[6] is not None
            ):
                partition.upsert(learning_id, vector_from_blob(row[6]), self._row_codes(row))
            else:
                partition.remove(learning_id)
        partition.watermark = changes[-1][0]

    def _evict(self) -> None:
        total = sum(p.n for p in self._partitions.values())
        while total > self.max_cached_vectors and len(self._partitions) > 1:
            _, oldest = self._partitions.popitem(last=False)
            oldest.save_ann()
            total -= oldest.n

    # -- events --------------------------------------------------------------------------------------

    async def history(self, scope: Scope, learning_id: int) -> list[Event]:
        return await self.events(scope, learning_id=learning_id, limit=10_000)

    async def events(
        self, scope: Scope, *, after: int = 0, limit: int = 100, learning_id: int | None = None
    ) -> list[Event]:
        return await self._run(self._events, scope, after, limit, learning_id)

    def _events(
        self, conn: sqlite3.Connection, scope: Scope, after: int, limit: int, learning_id: int | None
    ) -> list[Event]:
        clause, params = visible_clause(scope)
        where = [clause, "seq > ?"]
        params.append(after)
        if learning_id is not None:
            where.append("learning_id = ?")
            params.append(learning_id)
        rows = conn.execute(
            f"SELECT {_EVENT_COLUMNS} FROM events WHERE {' AND '.join(where)} ORDER BY seq LIMIT ?",
            [*params, limit],
        ).fetchall()
        return [event_from_row(r) for r in rows]

    # -- vocabularies --------------------------------------------------------------------------------

    async def get_vocabulary(self, tenant: str, namespace: str) -> Vocabulary | None:
        return await self._run(self._get_vocabulary, tenant, namespace)

    def _get_vocabulary(self, conn: sqlite3.Connection, tenant: str, namespace: str) -> Vocabulary | None:
        row = conn.execute(
            "SELECT body FROM vocabularies WHERE tenant = ? AND namespace = ?", (tenant, namespace)
        ).fetchone()
        return None if row is None else Vocabulary.model_validate_json(row[0])

    async def list_vocabularies(self, tenant: str) -> list[Vocabulary]:
        return await self._run(self._list_vocabularies, tenant)

    def _list_vocabularies(self, conn: sqlite3.Connection, tenant: str) -> list[Vocabulary]:
        rows = conn.execute("SELECT body FROM vocabularies WHERE tenant = ? ORDER BY namespace", (tenant,))
        return [Vocabulary.model_validate_json(r[0]) for r in rows]

    async def put_vocabulary(self, tenant: str, vocabulary: Vocabulary, event: EventDraft) -> Event:
        return await self._run(self._put_vocabulary, tenant, vocabulary, event)

    def _put_vocabulary(
        self, conn: sqlite3.Connection, tenant: str, vocabulary: Vocabulary, event: EventDraft
    ) -> Event:
        scope = Scope(tenant=tenant)
        with write_transaction(conn):
            conn.execute(
                "INSERT INTO vocabularies (tenant, namespace, body, updated_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (tenant, namespace) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at",
                (tenant, vocabulary.namespace, vocabulary.model_dump_json(), self.clock().timestamp()),
            )
            _, events = apply_operations(conn, scope, [AppendEvent(event=event)], self.clock())
        return events[0]

    # -- maintenance ---------------------------------------------------------------------------------

    async def purge_deprecated(self, scope: Scope, older_than: datetime, actor: str) -> list[int]:
        return await self._run(self._purge_deprecated, scope, older_than, actor)

    def _purge_deprecated(self, conn: sqlite3.Connection, scope: Scope, older_than: datetime, actor: str) -> list[int]:
        clause, params = owner_clause(scope)
        with write_transaction(conn):
            ids = [
                r[0]
                for r in conn.execute(
                    f"SELECT id FROM learnings WHERE {clause} AND status = 'deprecated' AND updated_at < ?",
                    [*params, older_than.timestamp()],
                )
            ]
            if ids:
                marks = ", ".join("?" for _ in ids)
                conn.execute(f"DELETE FROM learnings WHERE id IN ({marks})", ids)
                draft = EventDraft(actor=actor, action=EventAction.PURGED, data={"ids": ids})
                apply_operations(conn, scope, [AppendEvent(event=draft)], self.clock())
        return ids

    async def forget_user(self, tenant: str, user: str) -> dict[str, int]:
        return await self._run(self._forget_user, tenant, user)

    def _forget_user(self, conn: sqlite3.Connection, tenant: str, user: str) -> dict[str, int]:
        removed: dict[str, int] = {}
        with write_transaction(conn):
            for table in ("learnings", "events", "vector_changes", *self.user_tables):
                cursor = conn.execute(f"DELETE FROM {table} WHERE tenant = ? AND user_id = ?", (tenant, user))
                removed[table] = cursor.rowcount
            # Shared knowledge they contributed stays, without their name on it.
            cursor = conn.execute(
                "UPDATE learnings SET source_author = NULL, source_session = NULL, source_message = NULL, "
                "source_interaction = NULL WHERE tenant = ? AND user_id = '' AND source_author = ?",
                (tenant, user),
            )
            removed["anonymised"] = cursor.rowcount
            for column in ("before", "after"):
                conn.execute(
                    f"UPDATE events SET {column} = json_set({column}, '$.source.author', NULL, "
                    f"'$.source.session', NULL, '$.source.message', NULL, '$.source.interaction', NULL) "
                    f"WHERE tenant = ? AND json_extract({column}, '$.source.author') = ?",
                    (tenant, user),
                )
            conn.execute(
                "INSERT INTO events (tenant, user_id, learning_id, actor, action, panel, at, data) "
                "VALUES (?, '', NULL, 'system:forget', ?, 'learning', ?, ?)",
                (tenant, EventAction.USER_FORGOTTEN.value, self.clock().timestamp(), json.dumps(removed)),
            )
        # Merge full-text segments so deleted postings are gone from the index, not just masked.
        conn.execute("INSERT INTO learnings_fts (learnings_fts) VALUES ('optimize')")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        partition = self._partitions.pop((tenant, user), None)
        if partition is None:
            path = self._ann_path((tenant, user))
            if path is not None:
                Partition(self.dimension, 0, 0, path, lambda seq: None).drop_ann_files()
        else:
            partition.drop_ann_files()
        return removed

    # Tables added by later features that carry (tenant, user_id) register here to be forgotten too.
    user_tables: tuple[str, ...] = ("turns", *TOOL_USER_TABLES, "api_keys", *AGENT_USER_TABLES)

    async def export(self, scope: Scope) -> AsyncIterator[tuple[Learning, Vector | None]]:
        last_id = 0
        while True:
            batch = await self._run(self._export_batch, scope, last_id)
            if not batch:
                return
            for learning, vector in batch:
                yield learning, vector
            last_id = batch[-1][0].id

    def _export_batch(
        self, conn: sqlite3.Connection, scope: Scope, after_id: int
    ) -> list[tuple[Learning, Vector | None]]:
        clause, params = owner_clause(scope)
        rows = conn.execute(
            f"SELECT {LEARNING_COLUMNS}, embedding FROM learnings WHERE {clause} AND id > ? ORDER BY id LIMIT 500",
            [*params, after_id],
        ).fetchall()
        return [(learning_from_row(row[:-1]), None if row[-1] is None else vector_from_blob(row[-1])) for row in rows]
