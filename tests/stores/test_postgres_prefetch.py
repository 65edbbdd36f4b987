"""A PostgreSQL search reads what it needs before ranking in one statement (`postgres.partitions`): for a user
whose partition is not loaded, that user's rows come with the change log's bounds, and the search answers as it
does from the loaded partition. Statements are counted, never timed."""

from __future__ import annotations

from pathlib import Path

import pytest

from learnloop.models import Filters, Scope
from learnloop.stores.base import SearchRequest, Store
from learnloop.stores.postgres.dialect import PgConnection
from tests.conftest import make_store, unit_vector
from tests.stores.test_contract import insert
from tests.support.postgres import drop_databases

pytestmark = pytest.mark.postgres

ALICE = Scope(tenant="t1", user="alice")
BOB = Scope(tenant="t1", user="bob")
REQUEST = SearchRequest(vector=unit_vector(3), terms=["boil", "water"], filters=Filters())


async def _ids(store: Store, scope: Scope) -> list[int]:
    return [c.id for c in await store.search(scope, REQUEST)]


async def test_a_cold_user_is_read_in_one_statement_and_ranked_as_when_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = make_store("postgres", tmp_path)
    await store.start()
    try:
        for n in range(12):
            await insert(store, ALICE, f"boil water note {n}", seed=n)
            await insert(store, BOB, f"bob's boil note {n}", seed=100 + n)
        await insert(store, Scope(tenant="t1"), "tenant-wide water rule", seed=7)
    finally:
        await store.aclose()

    store = make_store("postgres", tmp_path)  # a restarted process: no partition loaded
    await store.start()
    try:
        await _ids(store, BOB)  # loads the tenant's global partition too
        statements: list[str] = []
        round_trips: list[list[str]] = []  # the statements of each one
        execute, fetch_together = PgConnection.execute, PgConnection.fetch_together

        def counted(self: PgConnection, sql: str, parameters: object = (), /) -> object:
            statements.append(sql)
            round_trips.append([sql])
            return execute(self, sql, parameters)

        def counted_together(self: PgConnection, sent: list[tuple[str, object]]) -> object:
            statements.extend(sql for sql, _ in sent)
            round_trips.append([sql for sql, _ in sent])
            return fetch_together(self, sent)  # type: ignore[arg-type]

        monkeypatch.setattr(PgConnection, "execute", counted)
        monkeypatch.setattr(PgConnection, "fetch_together", counted_together)
        cold = await _ids(store, ALICE)
        monkeypatch.setattr(PgConnection, "execute", execute)
        monkeypatch.setattr(PgConnection, "fetch_together", fetch_together)
        warm = await _ids(store, ALICE)
    finally:
        await store.aclose()
        drop_databases()

    assert cold == warm and len(cold) == 13  # alice's twelve and the tenant's one
    assert not any(sql.startswith("BEGIN") for sql in statements), statements
    reads_rows = [sql for sql in statements if "FROM learning_rows WHERE tenant = ? AND user_id = ?" in sql]
    assert len(reads_rows) == 1 and "LATERAL" in reads_rows[0]
    # The prefetch, the candidates' rows and their conflict links: nothing else before the answer, in two round
    # trips (the last two statements sent together).
    assert len(statements) == 3, statements
    assert [len(sent) for sent in round_trips] == [1, 2], round_trips
    assert "learning_links" in round_trips[1][1]
