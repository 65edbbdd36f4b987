"""The change log that keeps each process's routing index in step: trimmed per tenant, and an index that fell
behind the trim is reloaded — also in the middle of a write, where SQLite cannot open a second transaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

import learnloop
from learnloop.stores.sql import tools_admin
from tests.tools.conftest import CATALOG, Clock

QUERY = "will it rain in Paris tomorrow?"


def changes(path: Path, tenant: str) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM tool_changes WHERE tenant = ?", (tenant,)).fetchone()[0])
    finally:
        conn.close()


async def test_a_write_after_the_log_was_trimmed_past_the_index_reloads_it(
    open_loop: Callable[..., learnloop.Loop], clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tools_admin, "_CHANGES_KEPT", 2)
    here, there = open_loop("sync.db", clock=clock), open_loop("sync.db", clock=clock)
    path = Path(here.engine.store.path)  # type: ignore[attr-defined]
    try:
        for loop in (here, there):
            loop.tools.configure(insight_every=0)
        await here.tools.register(CATALOG)
        other = here.for_tenant("globex").tools
        await other.register(CATALOG)
        globex_before = changes(path, "globex")
        # This process's index is loaded now; the other process then learns, and its maintenance trims the log.
        await here.tools.set_context("h1", QUERY, user="alice")
        for n in range(4):
            await there.tools.set_context(f"t{n}", f"{QUERY} ({n})", user=f"user{n}")
            await there.tools.record_call(f"t{n}", "get_forecast", {"city": "Paris"})
        await there.tools.aggregate_insights()
        assert changes(path, "default") == 3  # the two newest entries and the trim's marker
        assert changes(path, "globex") == globex_before  # another tenant's entries are not this trim's business

        # The write replays the log under the write lock: the index is reloaded inside that transaction.
        receipt = await here.tools.record_call("h1", "get_forecast", {"city": "Paris"})
        assert receipt.applied
        routed = await here.tools.route(QUERY, 1, user="zoe")
        assert routed[0].name == "get_forecast" and routed[0].learned_uses == 5  # the others' pairs, and this one
    finally:
        await here.aclose()
        await there.aclose()
