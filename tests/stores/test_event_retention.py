"""'retrieved' events are kept for a retention, then folded into per-hour counts and deleted; the metrics
(totals, series, hit rates, per tenant and per user) stay exactly what they were, and the learnings' own
events (their history) are never touched."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import learnloop
from learnloop.embedders.base import Embedder
from learnloop.errors import StoreError
from learnloop.factory import build_engine
from learnloop.models import EventAction, Scope
from learnloop.server.metrics import Bucket, Metrics, compute_metrics
from learnloop.stores.base import AppendEvent, EventDraft
from learnloop.stores.sql import event_retention
from learnloop.stores.sql.service import SqlServiceStore
from learnloop.stores.sqlite import SQLiteStore
from tests.conftest import BREWING, TEST_DIM, _Shared
from tests.stores.test_contract import ALICE, BOB, OTHER_TENANT, TENANT, insert
from tests.support.clock import Clock

RETENTION = timedelta(days=30)
SCOPES = (TENANT, ALICE, BOB, OTHER_TENANT, Scope(tenant="t2"))
# (days, bucket) windows: some reach past the compacted events, some start among them, some see only live ones.
WINDOWS: tuple[tuple[float, Bucket | None], ...] = ((90, None), (45, "hour"), (31.5, None), (30.25, "hour"), (1, None))


def _clock() -> Clock:
    """Starts on a whole hour, so every metrics window does too."""
    start = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    return Clock(start - timedelta(days=40))


def open_store(path: Path, clock: Clock, retention: timedelta = timedelta(days=10_000)) -> SQLiteStore:
    """By default with a retention the idle housekeeping never reaches: the tests compact by hand."""
    return SQLiteStore(
        path, embedding_model="test:model", dimension=TEST_DIM, clock=clock, retrieval_event_retention=retention
    )


async def settle() -> None:
    """Let the idle step that follows every job run (with the clock as it is) before the test moves the clock."""
    await asyncio.sleep(0.2)


def read(path: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def retrieved(path: Path) -> int:
    return int(read(path, "SELECT COUNT(*) FROM events WHERE action = 'retrieved'")[0][0])  # type: ignore[call-overload]


async def retrieval(store: SQLiteStore, scope: Scope, ids: list[int]) -> None:
    """The event `retrieve_context` appends."""
    draft = EventDraft(actor="app", action=EventAction.RETRIEVED, data={"ids": ids, "count": len(ids)})
    await store.apply(scope, [AppendEvent(draft)])


async def all_metrics(store: SQLiteStore, now: datetime) -> list[Metrics]:
    service = SqlServiceStore(store)
    return [
        await compute_metrics(service, scope, now=now, days=days, bucket=bucket, counters=True)
        for scope in SCOPES
        for days, bucket in WINDOWS
    ]


async def fill(store: SQLiteStore, clock: Clock) -> dict[str, int]:
    """Learnings and retrievals of two users, the tenant's global scope and another tenant, over ten days."""
    ids = {
        "alice": await insert(store, ALICE, "alice's kettle", seed=1),
        "bob": await insert(store, BOB, "bob's mash tun", seed=2),
        "global": await insert(store, TENANT, "the club's kettle", seed=3),
        "other": await insert(store, OTHER_TENANT, "another tenant's yeast", seed=4),
    }
    for step in range(60):
        await retrieval(store, ALICE, [ids["alice"], ids["global"]] if step % 3 else [])
        if step % 2:
            await retrieval(store, BOB, [ids["bob"]] if step % 4 == 1 else [])
        if step % 5 == 0:
            await retrieval(store, TENANT, [ids["global"]])
            await retrieval(store, OTHER_TENANT, [ids["other"]] if step % 10 else [])
        clock.advance(hours=3, minutes=55)
    return ids


async def test_compaction_leaves_every_metric_as_it_was(tmp_path: Path) -> None:
    clock, path = _clock(), tmp_path / "s.db"
    store = open_store(path, clock)
    try:
        ids = await fill(store, clock)
        history = await store.history(ALICE, ids["alice"])
        old = retrieved(path)
        in_t1 = int(read(path, "SELECT COUNT(*) FROM events WHERE action = 'retrieved' AND tenant = 't1'")[0][0])  # type: ignore[call-overload]
        clock.advance(days=25)  # the first retrievals are now 35 days old, the last 25: recent ones stay live
        later = clock() + timedelta(days=1)
        await retrieval(store, ALICE, [ids["alice"]])
        await retrieval(store, BOB, [])
        before = await all_metrics(store, later)
        assert before[0].totals["retrievals"] == in_t1 + 2

        folded, more = await store._run(
            event_retention.compact_retrievals, clock().timestamp(), RETENTION.total_seconds()
        )
        assert folded > 0 and not more
        cutoff = (clock() - RETENTION).timestamp()
        assert read(path, f"SELECT COUNT(*) FROM events WHERE action = 'retrieved' AND at < {cutoff}") == [(0,)]
        assert 0 < retrieved(path) < old
        assert await all_metrics(store, later) == before

        # Everything, then again: nothing is counted twice.
        clock.advance(days=40)
        assert (await store._run(event_retention.compact_retrievals, clock().timestamp(), 0.0))[0] > 0
        assert await store._run(event_retention.compact_retrievals, clock().timestamp(), 0.0) == (0, False)
        assert retrieved(path) == 0
        assert await all_metrics(store, later) == before
        # The learnings' own events, their history, are all still there.
        assert await store.history(ALICE, ids["alice"]) == history
        assert read(path, "SELECT COUNT(*) FROM events WHERE action = 'created'") == [(4,)]
    finally:
        await store.aclose()


async def test_small_batches_and_a_pass_killed_midway_count_each_event_once(tmp_path: Path) -> None:
    clock, path = _clock(), tmp_path / "s.db"
    store = open_store(path, clock)
    try:
        await fill(store, clock)
        now = clock() + timedelta(days=1)
        before = await all_metrics(store, now)
        total = retrieved(path)

        # The delete fails after the counts were added: the transaction takes both back.
        await store._run(
            lambda conn: conn.execute(
                "CREATE TEMP TRIGGER killed BEFORE DELETE ON events BEGIN SELECT RAISE(ABORT, 'killed'); END"
            )
        )
        with pytest.raises(StoreError, match="killed"):
            await store._run(event_retention.compact_retrievals, now.timestamp(), 0.0, 7)
        assert read(path, "SELECT COUNT(*) FROM retrieval_counts") == [(0,)] and retrieved(path) == total
        await store._run(lambda conn: conn.execute("DROP TRIGGER temp.killed"))

        passes = 0
        while True:
            folded, more = await store._run(event_retention.compact_retrievals, now.timestamp(), 0.0, 7)
            passes += 1
            assert folded >= 7 or not more
            if not more:
                break
        assert passes > total // 14 and retrieved(path) == 0  # events at the same time go in one batch
        assert read(path, "SELECT SUM(retrievals) FROM retrieval_counts") == [(total,)]
        assert await all_metrics(store, now) == before
    finally:
        await store.aclose()


async def test_the_idle_pass_runs_every_few_minutes_and_never_waits(tmp_path: Path) -> None:
    clock, path = _clock(), tmp_path / "s.db"
    store = open_store(path, clock, RETENTION)
    try:
        learning = await insert(store, ALICE, "note", seed=1)
        await retrieval(store, ALICE, [learning])

        def idle_pass(conn: sqlite3.Connection) -> tuple[int, bool, bool]:
            writes = conn.total_changes
            _, more = event_retention.compact_retrievals(conn, clock().timestamp(), RETENTION.total_seconds())
            return conn.total_changes - writes, more, conn.in_transaction

        assert await store._run(idle_pass) == (0, False, False)  # nothing due: no write, no transaction left
        assert retrieved(path) == 1

        await settle()
        clock.advance(days=31)
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process is writing
        started = time.monotonic()
        assert await store._run(store._partitions.housekeeping) is False
        assert time.monotonic() - started < 5  # not the 30 s busy timeout
        assert retrieved(path) == 1
        other.execute("COMMIT")
        other.close()
        await store._run(store._partitions.housekeeping)  # tried again on the next idle step, not in minutes
        assert retrieved(path) == 0

        await retrieval(store, ALICE, [learning])
        await settle()
        clock.advance(days=31)
        await store._run(store._partitions.housekeeping)
        assert retrieved(path) == 0
        await retrieval(store, ALICE, [])
        await settle()
        clock.advance(days=30, seconds=-100)  # a pass now finds the event not quite old enough
        await store._run(store._partitions.housekeeping)
        await settle()
        clock.advance(seconds=200)  # old enough, but the last pass was less than COMPACT_EVERY ago
        await store._run(store._partitions.housekeeping)
        await settle()
        assert retrieved(path) == 1
        clock.advance(seconds=event_retention.COMPACT_EVERY - 200)
        await store._run(store._partitions.housekeeping)
        assert retrieved(path) == 0
        assert read(path, "SELECT SUM(retrievals), SUM(hits) FROM retrieval_counts") == [(3, 2)]
    finally:
        await store.aclose()


async def test_forgetting_a_user_removes_their_compacted_counts(tmp_path: Path) -> None:
    clock, path = _clock(), tmp_path / "s.db"
    store = open_store(path, clock)
    try:
        await fill(store, clock)
        await store._run(event_retention.compact_retrievals, clock().timestamp() + 1, 0.0)
        removed = await store.forget_user("t1", "alice")
        assert removed["retrieval_counts"] > 0
        assert read(path, "SELECT COUNT(*) FROM retrieval_counts WHERE tenant = 't1' AND user_id = 'alice'") == [(0,)]
        assert read(path, "SELECT COUNT(*) FROM retrieval_counts WHERE user_id = 'bob'") != [(0,)]
        metrics = await compute_metrics(
            SqlServiceStore(store), ALICE, now=clock(), days=30, bucket=None, counters=False
        )
        # What alice still sees is the tenant's global retrievals only.
        assert (
            metrics.totals["retrievals"]
            == read(path, "SELECT SUM(retrievals) FROM retrieval_counts WHERE tenant = 't1' AND user_id = ''")[0][0]
        )
    finally:
        await store.aclose()


async def test_through_the_loop_retrievals_age_out_and_the_metrics_stay(tmp_path: Path, embedder: Embedder) -> None:
    clock = _clock()
    store = SQLiteStore(
        tmp_path / "loop.db", embedding_model=embedder.model_id, dimension=embedder.dimension, clock=clock
    )
    engine = build_engine(
        store,
        _Shared(embedder),  # type: ignore[arg-type]
        default_vocabulary=learnloop.Vocabulary.from_mapping(BREWING),
        clock=clock,
    )
    loop = learnloop.Loop(engine)
    try:
        saved = await loop.save("Grainfather Gen 1 boil-off rate is about 3.5 L/hr", user="alice", category="equipment")
        assert saved.learning is not None
        questions = ["How much water boils off in an hour?", "What is the capital of Mongolia?"]
        for i in range(6):
            await loop.retrieve_context("alice", questions[i % 2])
            clock.advance(minutes=20)
        history = await loop.history(saved.learning.id, user="alice")
        service = SqlServiceStore(store)
        later = clock() + timedelta(days=31)
        buckets: tuple[Bucket, ...] = ("hour", "day")

        async def metrics() -> list[Metrics]:
            return [
                await compute_metrics(service, loop.scope(user), now=later, days=40, bucket=bucket, counters=True)
                for user in (None, "alice")
                for bucket in buckets
            ]

        before = await metrics()
        totals = before[0].totals
        assert totals["retrievals"] == 6 and 0 < totals["retrieval_hits"] < 6

        clock.advance(days=31)
        await store._run(store._partitions.housekeeping)
        assert [e for e in await loop.events(limit=1000) if e.action == EventAction.RETRIEVED] == []
        assert await metrics() == before
        assert await loop.history(saved.learning.id, user="alice") == history
    finally:
        await loop.aclose()
