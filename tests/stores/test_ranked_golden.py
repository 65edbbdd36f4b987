"""A fixed corpus searched and ranked as the store did before the search path's speed-ups (perf5): the same hits,
ranks, scores and ranking, to the bit, with the exact scan and with the HNSW index. The expected answers were
written by the code before those changes (`tests/stores/data/ranked_golden.json`; rewritten on 2026-11-27 with
vectors whose cosines are exact on every CPU, by the code of that day); regenerate them only for a change meant
to alter results: `python -m tests.stores.test_ranked_golden`."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from learnloop.models import Filters, Limits, Scope, Status
from learnloop.pool_ranking import rank_pool
from learnloop.retrieval import RetrievalConfig
from learnloop.stores.base import Insert, SearchRequest
from learnloop.stores.candidate_pool import CandidatePool
from learnloop.stores.sqlite import SQLiteStore
from tests.stores.test_contract import created, record

GOLDEN = Path(__file__).parent / "data" / "ranked_golden.json"
DIM = 16
_WORDS = (
    "boil mash hops yeast kettle water grain wort chill ferment lager ale stout malt sugar gravity pitch "
    "temperature litre minute hour wednesday garden train coffee sister leeds bristol window aisle seat"
).split()
NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)


def _vector(rng: np.random.Generator, centres: np.ndarray) -> np.ndarray:
    """A unit vector of ±1/4 in each of the 16 dimensions: every cosine is a multiple of 1/16, exact in float32
    whatever order a CPU's vector unit sums in (the answers must not depend on the machine, only on the code)."""
    v = centres[rng.integers(len(centres))] + 0.35 * rng.standard_normal(DIM)
    return np.where(v >= 0, 0.25, -0.25).astype(np.float32)


async def _answers(folder: Path, ann_threshold: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(20)
    words = random.Random(20)
    centres = rng.standard_normal((12, DIM))
    store = SQLiteStore(folder / "golden.db", embedding_model="test:model", dimension=DIM, ann_threshold=ann_threshold)
    user, tenant = Scope(tenant="t1", user="alice"), Scope(tenant="t1")
    try:
        for scope, count in ((user, 700), (tenant, 40)):
            ops = []
            for i in range(count):
                text = " ".join(words.choice(_WORDS) for _ in range(words.randint(3, 12)))
                status = Status.VERIFIED if i % 7 == 0 else Status.CANDIDATE
                fields: dict[str, Any] = {"status": status, "tags": ("kit",) if i % 5 == 0 else ()}
                learning = record(scope, f"{text} {i}", **fields)
                learning = dataclasses.replace(learning, vector=_vector(rng, centres))
                ops.append(Insert(learning, created()))
            await store.apply(scope, ops)
        answers = []
        config = RetrievalConfig(min_similarity=0.2)
        for q in range(40):
            terms = [words.choice(_WORDS) for _ in range(words.randint(0, 5))]
            request = SearchRequest(
                vector=_vector(rng, centres), terms=terms, filters=Filters(), vector_k=50, text_k=50
            )
            pool = await _pool(store, user, request)
            assert isinstance(pool, CandidatePool)
            ranked = rank_pool(pool, Filters(), Limits(top_k=8), config, NOW)
            answers.append(
                {
                    "hits": [
                        [c.id, c.vector_rank, c.vector_similarity, c.text_rank, c.text_score, c.text_coverage]
                        for c in pool
                    ],
                    "ranked": [[r.candidate.id, r.score, r.relevance] for r in ranked],
                    "query": q,
                }
            )
        return answers
    finally:
        await store.aclose()


async def _pool(store: SQLiteStore, scope: Scope, request: SearchRequest) -> Any:
    """The search's hits as `select` sees them (the pool ranking reads), no rows read."""
    seen: list[Any] = []
    await store.search(scope, request, select=lambda found: seen.append(found) or [])
    return seen[0]


def _comparable(answers: list[dict[str, Any]]) -> dict[str, Any]:
    """The ranking as JSON holds it (floats round-trip exactly through repr), and a digest of every hit's ranks
    and scores (3,388 hits: too many to keep in the repository)."""
    hits = json.dumps([a["hits"] for a in answers], separators=(",", ":"))
    return {
        "ranked": json.loads(json.dumps([a["ranked"] for a in answers])),
        "hits_sha256": hashlib.sha256(hits.encode()).hexdigest(),
    }


@pytest.mark.parametrize("mode", ["exact", "hnsw"])
async def test_search_and_ranking_answer_as_before(tmp_path: Path, mode: str) -> None:
    expected = json.loads(GOLDEN.read_text())[mode]
    got = _comparable(await _answers(tmp_path, 1 << 62 if mode == "exact" else 256))
    assert got["ranked"] == expected["ranked"]
    assert got["hits_sha256"] == expected["hits_sha256"]


def _write() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as exact, tempfile.TemporaryDirectory() as hnsw:
        golden = {
            "exact": _comparable(asyncio.run(_answers(Path(exact), 1 << 62))),
            "hnsw": _comparable(asyncio.run(_answers(Path(hnsw), 256))),
        }
    GOLDEN.write_text(json.dumps(golden, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    _write()
