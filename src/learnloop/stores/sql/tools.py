"""`ToolStore` on the learnings' database: same connection, same executor thread, same transactions.

The store's `tools` hands out the one instance bound to a store. Every method runs as a job on the store's
single executor thread (`SqlStore._run`), which owns the connection and, here, one in-memory routing
index per tenant, so a signal is written, made durable and indexed in one job, with no second writer
connection and no locks.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from datetime import datetime
from typing import Any, Protocol, TypeVar

from ...models import Scope
from ...stores.base import Vector
from ...tools.base import (
    CallRecord,
    CatalogEntry,
    EvidenceRequest,
    InsightDraft,
    InsightInputs,
    LearningPolicy,
    ObservationRecord,
    ToolEvidence,
    ToolKnowledge,
)
from ...tools.models import (
    Insight,
    LearnedPair,
    PrivacyMode,
    QueryTemplate,
    RecoveryPattern,
    SeedTemplate,
    SignalKind,
    SignalReceipt,
    ToolInfo,
    ToolSignal,
    ToolStat,
)
from ...tools.shapes import Shaper
from ..search import tool_routes
from ..search.template_directions import TemplateDirections
from ..search.tool_index import ToolIndex
from ..tool_rows import PAIR_COLUMNS, SIGNAL_COLUMNS, pair_from_row, signal_from_row
from . import tools_admin, tools_scrub
from .dialect import Connection, dialect_of
from .jobs import ConnectionJobs
from .tools_reads import (
    insight_inputs,
    read_insights,
    read_recent_failures,
    read_recoveries,
    read_stats,
    read_templates,
    relevant_templates,
)
from .tools_sync import sql_tool_indexes
from .tools_writes import flush_weak, write_call, write_observation
from .transactions import write_transaction

__all__ = ["TOOL_USER_TABLES", "SqlToolStore"]

T = TypeVar("T")


# Tables holding a user's rows; the store's `forget_user` deletes them.
class ToolJobs(ConnectionJobs, Protocol):
    """The store's jobs, and when another process last committed to the file."""

    @property
    def data_version_seen(self) -> Hashable:
        """The dialect's commit stamp when the store's thread last read it; moves when another process commits."""
        ...

    def note_data_version(self, version: Hashable) -> None: ...


TOOL_USER_TABLES = (
    "tool_signals",
    "tool_pairs",
    "tool_stats",
    "tool_templates",
    "tool_template_examples",
    "tool_recoveries",
    "tool_privacy",
)


def _has_any(conn: Connection, tenant: str) -> bool:
    """Whether any user of the tenant has tool knowledge a retrieval could show."""
    return bool(
        conn.execute(
            "SELECT EXISTS (SELECT 1 FROM tool_templates WHERE tenant = ?) "
            "OR EXISTS (SELECT 1 FROM tool_recoveries WHERE tenant = ?) "
            "OR EXISTS (SELECT 1 FROM tool_insights WHERE tenant = ?) "
            "OR EXISTS (SELECT 1 FROM tool_signals WHERE tenant = ? AND kind = 'call' AND ok = 0)",
            (tenant, tenant, tenant, tenant),
        ).fetchone()[0]
    )


class SqlToolStore:
    def __init__(self, store: ToolJobs) -> None:
        self._store = store
        self._keeper = sql_tool_indexes(store.dimension, store.embedding_model)
        self._directions = TemplateDirections()
        # Writes made through this store (other processes' show in PRAGMA data_version), and per tenant the
        # (data_version, writes) at which it was last seen to hold no tool knowledge at all.
        self._writes = 0
        self._known_empty: dict[str, tuple[int, int]] = {}

    def __repr__(self) -> str:
        return f"SqlToolStore({self._store.path!r})"

    async def _run(self, fn: Callable[..., T], *args: Any, stale_ok: bool = False) -> T:
        return await self._store._run(fn, *args, stale_ok=stale_ok)

    def _counted(self, write: Callable[..., T]) -> Callable[..., T]:
        """`write`, then one more write counted (on the executor thread, like every job)."""

        def counted(*args: Any) -> T:
            result = write(*args)
            self._writes += 1
            return result

        return counted

    def note_outside_write(self) -> None:
        """Rows of tool knowledge were written past this store (a tenant import), on the store's thread."""
        self._writes += 1

    @property
    def embedding_model(self) -> str:
        return self._store.embedding_model

    # -- catalog -----------------------------------------------------------------------------------------

    async def put_tools(self, tenant: str, entries: Sequence[CatalogEntry], now: datetime) -> None:
        await self._run(tools_admin.put_tools, self._keeper, tenant, list(entries), now.timestamp())

    async def remove_tools(self, tenant: str, names: Sequence[str]) -> int:
        return await self._run(self._remove_tools, tenant, list(names))

    def _remove_tools(self, conn: Connection, tenant: str, names: list[str]) -> int:
        if not names:
            return 0
        marks = ", ".join("?" for _ in names)

        def work(index: ToolIndex) -> int:
            removed = conn.execute(f"DELETE FROM tool_catalog WHERE tenant = ? AND name IN ({marks})", [tenant, *names])
            self._keeper.refresh_catalog(conn, tenant, index)
            return removed.rowcount

        return self._keeper.write(conn, tenant, work)

    async def list_tools(
        self, tenant: str, *, server: str | None = None, embedding_model: str | None = None
    ) -> list[ToolInfo]:
        return await self._run(tools_admin.list_tools, tenant, server, embedding_model)

    # -- signals -----------------------------------------------------------------------------------------

    async def record_call(
        self, scope: Scope, record: CallRecord, policy: LearningPolicy, now: datetime
    ) -> SignalReceipt:
        return await self._run(self._record_call, scope, record, policy, now.timestamp())

    def _record_call(
        self, conn: Connection, scope: Scope, record: CallRecord, policy: LearningPolicy, now: float
    ) -> SignalReceipt:
        model = self.embedding_model
        receipt = self._keeper.write(
            conn, scope.tenant, lambda index: write_call(conn, index, scope, record, policy, model, now)
        )
        self._writes += 1  # counted on this thread, after the write, so no read can see it early
        return receipt

    async def record_observation(self, scope: Scope, record: ObservationRecord, now: datetime) -> int:
        return await self._run(self._record_observation, scope, record, now.timestamp())

    def _record_observation(self, conn: Connection, scope: Scope, record: ObservationRecord, now: float) -> int:
        with write_transaction(conn):
            return write_observation(conn, scope, record, now)

    async def flush_weak(self, tenant: str, policy: LearningPolicy, now: datetime, limit: int = 500) -> int:
        return await self._run(self._flush_weak, tenant, policy, now.timestamp(), limit)

    def _flush_weak(self, conn: Connection, tenant: str, policy: LearningPolicy, now: float, limit: int) -> int:
        model = self.embedding_model
        return self._keeper.write(
            conn, tenant, lambda index: flush_weak(conn, index, tenant, policy, model, now, limit)
        )

    async def pending_weak(self, tenant: str) -> int:
        sql = "SELECT COUNT(*) FROM tool_signals WHERE tenant = ? AND applied = 0"
        return int(await self._run(lambda conn: conn.execute(sql, (tenant,)).fetchone()[0]))

    async def signals(
        self,
        scope: Scope,
        *,
        session: str | None = None,
        kind: SignalKind | None = None,
        after: int = 0,
        limit: int = 100,
    ) -> list[ToolSignal]:
        where, params = ["tenant = ?", "id > ?"], [scope.tenant, after]
        for column, value in (("user_id", scope.user), ("session", session), ("kind", kind)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(str(value))
        sql = f"SELECT {SIGNAL_COLUMNS} FROM tool_signals WHERE {' AND '.join(where)} ORDER BY id LIMIT ?"
        rows = await self._run(lambda conn: conn.execute(sql, [*params, limit]).fetchall())
        return [signal_from_row(r) for r in rows]

    # -- routing -----------------------------------------------------------------------------------------

    async def evidence(self, scope: Scope, request: EvidenceRequest) -> list[ToolEvidence]:
        return await self._run(self._evidence, scope, request)

    def _evidence(self, conn: Connection, scope: Scope, request: EvidenceRequest) -> list[ToolEvidence]:
        return tool_routes.evidence(self._keeper.index(conn, scope.tenant), scope, request)

    async def popular_tools(self, scope: Scope, limit: int) -> list[ToolEvidence]:
        return await self._run(self._popular, scope, limit)

    def _popular(self, conn: Connection, scope: Scope, limit: int) -> list[ToolEvidence]:
        index = self._keeper.index(conn, scope.tenant)
        uses: dict[str, int] = dict(
            conn.execute(
                "SELECT tool, CAST(SUM(successes) AS BIGINT) FROM tool_stats WHERE tenant = ? GROUP BY tool",
                (scope.tenant,),
            ).fetchall()
        )
        return tool_routes.popular(index, uses, limit)

    async def learned_pairs(
        self, scope: Scope, now: datetime, *, tool: str | None = None, limit: int = 100
    ) -> list[LearnedPair]:
        where, params = ["tenant = ?"], [scope.tenant]
        for column, value in (("user_id", scope.user), ("tool", tool)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        sql = (
            f"SELECT {PAIR_COLUMNS} FROM tool_pairs WHERE {' AND '.join(where)} "
            "ORDER BY confidence DESC, last_used_at DESC LIMIT ?"
        )
        rows = await self._run(lambda conn: conn.execute(sql, [*params, limit]).fetchall())
        return [pair_from_row(r, now) for r in rows]

    # -- templates, recovery, statistics -------------------------------------------------------------------

    async def templates(
        self,
        scope: Scope,
        now: datetime,
        *,
        intent: str | None = None,
        tool: str | None = None,
        vector: Vector | None = None,
        include_archived: bool = False,
    ) -> list[QueryTemplate]:
        model = self.embedding_model
        return await self._run(
            lambda conn: read_templates(
                conn,
                scope,
                now,
                intent=intent,
                tool=tool,
                vector=vector,
                embedding_model=model,
                include_archived=include_archived,
            )
        )

    async def seed_templates(self, tenant: str, seeds: Sequence[tuple[SeedTemplate, str]], now: datetime) -> int:
        return await self._run(self._counted(tools_admin.seed_templates), tenant, list(seeds), now.timestamp())

    async def template_feedback(
        self, scope: Scope, template_ids: Sequence[int], score: float, now: datetime
    ) -> list[QueryTemplate]:
        return await self._run(tools_admin.template_feedback, scope, list(template_ids), score, now)

    async def recovery_patterns(
        self,
        scope: Scope,
        now: datetime,
        *,
        fingerprint: str | None = None,
        error_type: str | None = None,
        tool: str | None = None,
        include_archived: bool = False,
    ) -> list[RecoveryPattern]:
        return await self._run(
            lambda conn: read_recoveries(
                conn,
                scope,
                now,
                fingerprint=fingerprint,
                error_type=error_type,
                tool=tool,
                include_archived=include_archived,
            )
        )

    async def tool_stats(self, scope: Scope, *, intent: str | None = None) -> list[ToolStat]:
        return await self._run(read_stats, scope, intent)

    async def knowledge(
        self,
        scope: Scope,
        vector: Vector | None,
        now: datetime,
        *,
        failures_since: datetime,
        template_similarity: float = 0.45,
        intent: str | None = None,
        recovery_confidence: float = 0.8,
        limit: int = 20,
    ) -> ToolKnowledge:
        model = self.embedding_model

        def read(conn: Connection) -> ToolKnowledge:
            data_version = conn.execute(dialect_of(conn).commit_stamp).fetchone()[0]
            self._store.note_data_version(data_version)
            version = (data_version, self._writes)
            if self._known_empty.get(scope.tenant) == version:
                return ToolKnowledge()
            knowledge = ToolKnowledge(
                templates=relevant_templates(
                    conn, self._directions, scope, now, vector, model, template_similarity, intent, limit
                ),
                recoveries=read_recoveries(conn, scope, now, min_confidence=recovery_confidence, limit=limit),
                failures=read_recent_failures(conn, scope, failures_since, limit) if scope.user is not None else [],
                insights=read_insights(conn, scope.tenant, now, None, limit=limit),
            )
            if not knowledge and not _has_any(conn, scope.tenant):
                self._known_empty[scope.tenant] = version
            return knowledge

        # Read on the retrieval path: it must not wait for the previous retrieval's hit counts.
        return await self._run(read, stale_ok=True)

    def may_know(self, tenant: str) -> bool:
        # As of the last job that read data_version (every search does): this process's writes count in
        # `_writes` once acknowledged, another process's commits move data_version.
        return self._known_empty.get(tenant) != (self._store.data_version_seen, self._writes)

    # -- insights and maintenance --------------------------------------------------------------------------

    async def insight_inputs(self, tenant: str, since: datetime, now: datetime) -> InsightInputs:
        return await self._run(insight_inputs, tenant, since, now)

    async def put_insights(
        self, tenant: str, insights: Sequence[InsightDraft], now: datetime, *, stale_before: datetime
    ) -> tuple[int, int]:
        return await self._run(
            self._counted(tools_admin.put_insights), tenant, list(insights), now.timestamp(), stale_before.timestamp()
        )

    async def insights(self, tenant: str, now: datetime, *, type: str | None = None) -> list[Insight]:
        return await self._run(read_insights, tenant, now, type)

    async def maintain(self, tenant: str, now: datetime) -> tuple[int, int, int]:
        return await self._run(tools_admin.maintain, self._keeper, tenant, now)

    async def scrub_shared(self, tenant: str, shaper: Shaper) -> int:
        return await self._run(self._counted(tools_scrub.scrub_shared), tenant, shaper)

    # -- privacy -----------------------------------------------------------------------------------------

    async def privacy(self, tenant: str, user: str) -> PrivacyMode | None:
        sql = "SELECT mode FROM tool_privacy WHERE tenant = ? AND user_id = ?"
        row = await self._run(lambda conn: conn.execute(sql, (tenant, user)).fetchone())
        return None if row is None else PrivacyMode(row[0])

    async def set_privacy(self, tenant: str, user: str, mode: PrivacyMode, now: datetime) -> None:
        await self._run(tools_admin.set_privacy, tenant, user, mode, now.timestamp())
