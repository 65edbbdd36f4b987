"""Cosine thresholds belong to one embedding model: an engine takes its embedder's calibration."""

from __future__ import annotations

from pathlib import Path

from learnloop.capture.dedupe import DedupePolicy
from learnloop.embedders.base import Embedder
from learnloop.embedders.static import StaticMiniLM
from learnloop.engine import Engine
from learnloop.retrieval import RetrievalConfig, noise_floor
from learnloop.stores.sqlite import SQLiteStore


def _engine(tmp_path: Path, embedder: Embedder, **options: object) -> Engine:
    store = SQLiteStore(tmp_path / "e.db", embedding_model=embedder.model_id, dimension=embedder.dimension)
    return Engine(store=store, embedder=embedder, **options)  # type: ignore[arg-type]


async def test_minilm_keeps_the_thresholds_it_was_tuned_on(tmp_path: Path, embedder: Embedder) -> None:
    engine = _engine(tmp_path, embedder)
    assert engine.dedupe_policy == DedupePolicy()
    assert engine.retrieval.min_similarity == noise_floor(embedder.model_id) == 0.38
    await engine.store.aclose()


async def test_the_static_profile_gets_its_own_scale(tmp_path: Path) -> None:
    static = StaticMiniLM()  # the table is derived on first embed, not here
    engine = _engine(tmp_path, static)
    assert engine.dedupe_policy == DedupePolicy.for_model(static.model_id) != DedupePolicy()
    assert engine.dedupe_policy.paraphrase_similarity > DedupePolicy().paraphrase_similarity
    assert engine.retrieval.min_similarity == noise_floor(static.model_id) > 0.8
    await engine.store.aclose()


async def test_an_embedder_nobody_calibrated_gets_the_conservative_policy(tmp_path: Path, embedder: Embedder) -> None:
    class Unknown:
        model_id = "openai:text-embedding-3-small"
        dimension = embedder.dimension

        async def embed(self, texts, purpose="document"):  # type: ignore[no-untyped-def]
            return await embedder.embed(texts, purpose=purpose)

        async def aclose(self) -> None:
            return None

    engine = _engine(tmp_path, Unknown())  # type: ignore[arg-type]
    assert not engine.dedupe_policy.calibrated
    await engine.store.aclose()


async def test_thresholds_given_explicitly_are_kept(tmp_path: Path) -> None:
    mine = DedupePolicy(paraphrase_similarity=0.5)
    engine = _engine(tmp_path, StaticMiniLM(), dedupe=mine, retrieval=RetrievalConfig(min_similarity=0.1))
    assert engine.dedupe_policy is mine
    assert engine.retrieval.min_similarity == 0.1
    await engine.store.aclose()
