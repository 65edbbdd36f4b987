"""bench/scale.py at its smallest on each backend: it runs and reports every figure the README table takes (the
figures are not judged)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench.test_benches import run_bench
from tests.conftest import database_target

KEYS = {
    "import_per_s",
    "vec",
    "e2e",
    "vec_warm",
    "big_vec",
    "big_e2e",
    "first_query_after_restart_ms",
    "peak_rss_mb",
    "embed",
}


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_scale_bench_reports_every_figure(backend: str, tmp_path: Path) -> None:
    db = database_target(backend, tmp_path, "scale.db")
    sizes = ["--learnings", "60", "--users", "6", "--big-user", "40", "--queries", "4"]
    figures = run_bench("scale", "--backend", backend, "--db", db, *sizes)
    assert set(figures) >= KEYS, KEYS - set(figures)
    assert figures["learnings"] == 100 and figures["backend"] == backend
    # The timed queries again on the rows already imported (how a long import is kept out of a bench lock).
    again = run_bench("scale", "--backend", backend, "--db", db, *sizes, "--reuse")
    assert again["import_per_s"] is None and set(again) >= KEYS - {"import_per_s"}
