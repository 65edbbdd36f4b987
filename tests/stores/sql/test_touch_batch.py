"""Consecutive retrievals' bookkeeping written as one batch tells each retrieval, and leaves in the store, what
applying them one by one would have: the same counters after each touch, the same events, the same rows."""

from __future__ import annotations

from concurrent.futures import Future
from datetime import timedelta
from pathlib import Path
from typing import Any

from learnloop.models import EventAction, Learning, Scope, utcnow
from learnloop.stores.base import AppendEvent, Delete, EventDraft, Store, Touch
from learnloop.stores.records import Counted
from learnloop.stores.sql.bookkeeping import Bookkeeping, FollowUps, apply_bookkeeping
from tests.conftest import make_store
from tests.stores.test_contract import ALICE, BOB, TENANT, created, insert
from tests.stores.test_stored_terms import sql

COUNTERS = "SELECT learning_id, tenant, user_id, hits, streak, last_retrieved_at FROM learning_counters ORDER BY 1"
EVENTS = "SELECT seq, tenant, user_id, learning_id, actor, action, data FROM events ORDER BY seq"


def _nothing(touched: list[Learning]) -> list[Any]:
    return []


START = utcnow().replace(microsecond=0)


def _retrieval(scope: Scope, ids: tuple[int, ...], minutes: int, *, then: bool = False) -> Bookkeeping:
    at = START + timedelta(minutes=minutes)
    draft = EventDraft(actor="system:retrieval", action=EventAction.RETRIEVED, data={"ids": list(ids)})
    touch = Touch(ids=ids, at=at, follow_from=(2, 3) if then else None)
    return Bookkeeping(scope, [touch, AppendEvent(draft)], _nothing if then else None)


async def _apply(store: Store, items: list[Bookkeeping], *, together: bool) -> tuple[list[Any], list[Any]]:
    """Each item's outcome (its result, or the follow-up handed back) and the counters each touch reported."""
    reported: list[tuple[Scope, list[Counted]]] = []
    outcomes: list[Any] = []
    batches = [items] if together else [[item] for item in items]
    now = START + timedelta(minutes=10)

    def run(conn: Any) -> None:
        for batch in batches:
            futures: list[Future[Any]] = [Future() for _ in batch]
            later = apply_bookkeeping(
                conn, list(zip(batch, futures, strict=True)), now, lambda s, c: reported.append((s, c))
            )
            handed = {id(f): item for item, f in later}
            for future in futures:
                if id(future) in handed:
                    follow = handed[id(future)]
                    assert isinstance(follow, FollowUps)
                    outcomes.append(("later", follow.ids, follow.done))
                elif future.exception() is not None:
                    outcomes.append(("failed", type(future.exception())))
                else:
                    outcomes.append(("done", future.result()))

    await store._run(run)  # type: ignore[attr-defined]
    return outcomes, reported


async def _fill(store: Store) -> list[int]:
    mine = [await insert(store, ALICE, f"alice's note {n}") for n in range(3)]
    shared = await insert(store, TENANT, "the tenant's note", user=None)
    bobs = await insert(store, BOB, "bob's note")
    gone = await insert(store, ALICE, "deleted before it is retrieved")
    await store.apply(ALICE, [Delete(gone, created())])
    return [*mine, shared, bobs, gone]


async def test_a_batch_of_retrievals_reports_and_writes_what_one_by_one_would(backend: str, tmp_path: Path) -> None:
    results = []
    for together in (True, False):
        store = make_store(backend, tmp_path / str(together))
        await store.start()
        try:
            a, b, c, shared, bobs, gone = await _fill(store)
            items = [
                _retrieval(ALICE, (a, b), 1, then=True),
                _retrieval(BOB, (a, shared, bobs), 2),  # alice's learning: not bob's to count
                _retrieval(ALICE, (a, a, c, gone, 999), 3, then=True),  # twice in one touch counts once
                _retrieval(TENANT, (a, bobs), 4),
                _retrieval(ALICE, (), 5),
                _retrieval(ALICE, (b, a), 6, then=True),
            ]
            outcomes, reported = await _apply(store, items, together=together)
            results.append((outcomes, reported, await sql(store, COUNTERS), await sql(store, EVENTS)))
        finally:
            await store.aclose()
    assert results[0] == results[1]
    outcomes, reported, counters, _ = results[0]
    assert [len(c) for _, c in reported] == [2, 2, 3, 2, 0, 2]
    assert outcomes[5][0] == "later" and outcomes[5][1] == [b, a]  # a at streak 4, b at 2: both reached a count
    assert [row[:5] for row in counters if row[0] == a] == [(a, "t1", "alice", 4, 4)]


async def test_a_batch_that_fails_is_applied_one_by_one(tmp_path: Path) -> None:
    """One retrieval the database refuses (here a trigger refuses its event) fails alone: the batch is rolled
    back to its savepoint and its items applied one by one, the others committed as if never batched."""
    store = make_store("sqlite", tmp_path)
    await store.start()
    try:
        a, b, *_ = await _fill(store)
        await sql(
            store,
            "CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.data LIKE '%999%' "
            "BEGIN SELECT RAISE(ABORT, 'refused'); END",
        )
        items = [_retrieval(ALICE, (a,), 1), _retrieval(ALICE, (b, 999), 2), _retrieval(ALICE, (a, b), 3)]
        outcomes, reported = await _apply(store, items, together=True)
        counters = [row[:5] for row in await sql(store, COUNTERS)]
    finally:
        await store.aclose()
    assert [o[0] for o in outcomes] == ["done", "failed", "done"]
    assert [[c.id for c in counted] for _, counted in reported] == [[a], [a, b]]
    assert counters == [(a, "t1", "alice", 2, 2), (b, "t1", "alice", 1, 1)]  # the refused one's touch undone
