"""Rows kept between retrievals (`stores.sql.row_cache`) must read exactly as a fresh read of the file: after this
process's retrieval bookkeeping and promotions, another process's hit counts and links, and a caller changing
what it was given."""

from __future__ import annotations

from pathlib import Path

from learnloop.models import EventAction, Filters, Learning, LinkKind, Status, utcnow
from learnloop.stores.base import AddLink, Candidate, EventDraft, SearchRequest, Touch, Update
from learnloop.stores.sql.row_cache import RowCache, Written
from learnloop.stores.sqlite import SQLiteStore
from learnloop.stores.sqlite.store import _another_committed
from tests.conftest import TEST_DIM, unit_vector
from tests.stores.test_contract import ALICE, TENANT, insert

Kept = list[tuple[object, ...]]


async def test_kept_rows_read_as_a_fresh_read(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store, other, plain = (SQLiteStore(path, embedding_model="test:model", dimension=TEST_DIM) for _ in range(3))
    plain._rows = None  # the long way round: every row and link read from the file
    try:
        ids = [await insert(store, ALICE, f"boil note {i}", seed=i) for i in range(4)]
        shared = await insert(store, TENANT, "shared boil note", seed=9)
        for s in (store, other, plain):  # maintenance commits, due at first, would clear the cache at any moment
            while await s._run(s._partitions.housekeeping):
                pass
        request = SearchRequest(vector=unit_vector(0), terms=["boil"], filters=Filters(), vector_k=10, text_k=10)

        async def kept(s: SQLiteStore) -> Kept:
            def every(candidates: list[Candidate]) -> list[Candidate]:
                return sorted(candidates, key=lambda c: c.id)

            found = await s.search(ALICE, request, select=every)
            return [(c.id, c.learning(), c.conflicts, c.gate_version) for c in found]

        async def same() -> dict[int, tuple[object, ...]]:
            got = await kept(store)
            assert got == await kept(plain)
            assert store._rows is not None and all(store._rows.row(c[0]) is not None for c in got)  # type: ignore[arg-type]
            return {c[0]: c for c in got}  # type: ignore[misc]

        assert set(await same()) == {*ids, shared}
        reads: list[str] = []
        connection = store._worker.connection
        assert connection is not None
        connection.set_trace_callback(
            lambda sql: reads.append(sql) if "gate_version FROM learning_rows WHERE id IN" in sql else None
        )
        await same()
        assert reads == []  # all kept
        # This process's retrieval bookkeeping: hit counts, then a promotion written as its follow-up.
        store.submit(ALICE, [Touch(ids=(ids[0], ids[1]), at=utcnow())]).result(timeout=10)
        assert (await same())[ids[0]][1].hits == 1  # type: ignore[attr-defined]
        assert reads == []  # carried past the commit, the touched rows taken from it
        promote = [Update(ids[0], {"status": Status.VERIFIED}, None)]
        store.submit(ALICE, [Touch(ids=(ids[0],), at=utcnow())], then=lambda touched: promote).result(timeout=10)
        promoted = (await same())[ids[0]][1]
        assert (promoted.hits, promoted.status) == (2, Status.VERIFIED)  # type: ignore[attr-defined]
        assert len(reads) == 1 and f"({ids[0]})" in reads[0].replace("?", "")  # the promoted row alone is read
        # What a caller does with what it was given stays with it.
        promoted.tags.append("mine")  # type: ignore[attr-defined]
        promoted.source.session = "changed"  # type: ignore[attr-defined]
        promoted.text = "changed"  # type: ignore[attr-defined]
        await same()
        # Another process: hit counts (not in the change log), a conflict link, an update.
        other.submit(ALICE, [Touch(ids=(ids[2],), at=utcnow())]).result(timeout=10)
        assert (await same())[ids[2]][1].hits == 1  # type: ignore[attr-defined]
        linked = EventDraft(actor="system:dedupe", action=EventAction.LINKED)
        await other.apply(
            ALICE, [AddLink(ids[1], LinkKind.POSSIBLE_CONFLICT, "other step", linked, learning_id=ids[3])]
        )
        conflicts = (await same())[ids[3]][2]
        assert [c.id for c in conflicts] == [ids[1]]  # type: ignore[attr-defined]
        await other.apply(ALICE, [Update(ids[1], {"status": Status.DEPRECATED}, None)])
        found = await same()
        assert ids[1] not in found and found[ids[3]][2] == ()
        # This process writing outside its bookkeeping.
        await store.apply(ALICE, [Update(ids[3], {"text": "boil note three"}, None)])
        assert (await same())[ids[3]][1].text == "boil note three"  # type: ignore[attr-defined]
    finally:
        for s in (plain, other, store):
            await s.aclose()


def test_a_commit_of_another_connection_or_other_writes_clear_the_cache() -> None:
    """Between the stamps before and after this process's bookkeeping commit: another connection's commit may
    have changed anything the cache holds (its hit counts are in no log), and so may writes besides hit counts,
    events and updates."""
    now = utcnow()
    learning = Learning(
        id=1, tenant="t1", user="alice", text="boil note", simhash64="0" * 16, created_at=now, updated_at=now
    )
    for stamps, written, kept in [
        (((3, 10), (3, 12)), [Touch(ids=(1,), at=utcnow())], True),
        (((3, 10), (4, 12)), [Touch(ids=(1,), at=utcnow())], False),  # another connection committed
        (
            ((3, 10), (3, 12)),
            [AddLink(2, LinkKind.POSSIBLE_CONFLICT, "x", EventDraft("a", EventAction.LINKED), 1)],
            False,
        ),
        (((2, 10), (3, 12)), [], False),  # the cache was not current before
        (None, [], False),  # no partition or cache was current before
    ]:
        cache = RowCache(foreign=_another_committed)
        cache.at((3, 10))
        cache.put_row(learning, "v1")
        noted = Written()
        noted.note(written)
        cache.carry(stamps, noted)
        assert (cache.row(1) is not None) is kept
        assert cache.stamp == ((3, 12) if kept else None)
