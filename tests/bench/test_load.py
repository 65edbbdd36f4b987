"""bench/load.py at its smallest, on the test cluster: two `learnloop serve` processes and two
`learnloop agent-worker` processes on one PostgreSQL under concurrent saves, retrievals and interactions. No
request fails, the write counters and hit counts are exact, every interaction is processed exactly once and
every SSE client of either API process sees every event in order (the figures are not judged)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench.test_benches import run_bench
from tests.support.postgres import database_url

pytestmark = pytest.mark.postgres


def test_two_api_processes_and_two_workers_keep_the_contract(tmp_path: Path) -> None:
    figures = run_bench(
        "load",
        "--db",
        database_url(tmp_path),
        "--embedder",
        "scripted",
        "--saves",
        "30",
        "--retrievals",
        "40",
        "--interactions",
        "16",
        "--sessions",
        "4",
        "--settle",
        "60",
    )
    failed = {name: figures[name] for name in ("errors", "first_errors", "save_counters", "seen_by_each")}
    assert figures["ok"], failed
    assert figures["events"] > 30 and figures["seen_by_each"] == [figures["events"]] * 4
