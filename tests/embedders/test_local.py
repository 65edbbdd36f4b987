"""The bundled MiniLM embedder, on the real model (no mocks)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from learnloop.config import Settings
from learnloop.embedders import Embedder, resolve_embedder
from learnloop.embedders.local import DIMENSION, LocalMiniLM
from learnloop.errors import ConfigurationError, EmbedderError, ValidationError

BOIL_OFF = "Grainfather Gen 1 boil-off rate is ~3.5 L/hr"
BOIL_OFF_QUESTION = "how much water will boil off in a 60 minute boil?"
UNRELATED = "I like cats"

# Lengths from 1 to ~90 tokens, more than one chunk, deliberately not in length order.
MIXED = [
    BOIL_OFF,
    "ok",
    " ".join(["the mash was held at 67 degrees for an hour and the efficiency came out at 78 percent"] * 4),
    UNRELATED,
    "Which region had the highest refund rate last quarter, broken down by product line?",
    *(f"Learning {i}: dry hop {i} grams of Citra on day {i % 5 + 2} of fermentation" for i in range(40)),
    "",
    BOIL_OFF_QUESTION,
]


@pytest.fixture(scope="module")
def minilm() -> Iterator[LocalMiniLM]:
    embedder = LocalMiniLM()
    yield embedder
    asyncio.run(embedder.aclose())


@pytest.fixture(scope="module")
def uncached() -> Iterator[LocalMiniLM]:
    embedder = LocalMiniLM(cache_size=0)
    yield embedder
    asyncio.run(embedder.aclose())


async def test_vectors_are_unit_length_float32_rows(minilm: LocalMiniLM) -> None:
    vectors = await minilm.embed([BOIL_OFF, UNRELATED])
    assert vectors.shape == (2, DIMENSION) == (2, minilm.dimension)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert minilm.model_id == "local:all-MiniLM-L6-v2"
    assert isinstance(minilm, Embedder)


async def test_same_text_gives_the_same_vector(uncached: LocalMiniLM) -> None:
    first = await uncached.embed([BOIL_OFF])
    second = await uncached.embed([BOIL_OFF])
    np.testing.assert_array_equal(first, second)


async def test_batch_matches_single_texts_despite_padding(uncached: LocalMiniLM) -> None:
    batch = await uncached.embed(MIXED)
    singles = np.vstack([await uncached.embed([text]) for text in MIXED])
    cosines = np.sum(batch * singles, axis=1)
    assert cosines.min() > 0.9999


async def test_batch_keeps_the_callers_order(uncached: LocalMiniLM) -> None:
    batch = await uncached.embed(MIXED)
    reversed_batch = await uncached.embed(MIXED[::-1])
    np.testing.assert_allclose(batch, reversed_batch[::-1], atol=1e-5)
    distinct = [text for text in MIXED if text]  # every row must be nearest to its own text
    own = await uncached.embed(distinct)
    singles = np.vstack([await uncached.embed([text]) for text in distinct])
    assert list(np.argmax(own @ singles.T, axis=1)) == list(range(len(distinct)))


async def test_a_paraphrase_is_closer_than_an_unrelated_text(minilm: LocalMiniLM) -> None:
    learning, question, unrelated = await minilm.embed([BOIL_OFF, BOIL_OFF_QUESTION, UNRELATED])
    assert float(learning @ question) > float(learning @ unrelated) + 0.2


async def test_purpose_does_not_change_the_vector(uncached: LocalMiniLM) -> None:
    query = await uncached.embed([BOIL_OFF_QUESTION], purpose="query")
    document = await uncached.embed([BOIL_OFF_QUESTION], purpose="document")
    np.testing.assert_array_equal(query, document)


async def test_long_text_is_truncated_to_the_models_window(minilm: LocalMiniLM) -> None:
    words = [f"word{i % 50}" if i % 3 else "grain" for i in range(2000)]
    long_text = " ".join(words)
    vectors = await minilm.embed([long_text, long_text + " and a different ending about cats"])
    assert vectors.shape == (2, DIMENSION)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(vectors[0], vectors[1], atol=1e-6)  # the tail beyond 256 tokens is cut


async def test_empty_input_gives_an_empty_matrix(minilm: LocalMiniLM) -> None:
    vectors = await minilm.embed([])
    assert vectors.shape == (0, DIMENSION)
    assert vectors.dtype == np.float32


async def test_a_bare_string_is_rejected(minilm: LocalMiniLM) -> None:
    with pytest.raises(ValidationError):
        await minilm.embed(BOIL_OFF)


async def test_cached_vectors_are_equal_and_cannot_be_corrupted(minilm: LocalMiniLM) -> None:
    text = "the cache test sentence about a Grainfather"
    first = await minilm.embed([text])
    original = first.copy()
    first[0, :] = 0.0  # a caller scribbling on its result
    second = await minilm.embed([text], purpose="query")
    np.testing.assert_array_equal(second, original)
    second[0, :] = 1.0
    np.testing.assert_array_equal(await minilm.embed([text]), original)


async def test_concurrent_first_calls_load_once_and_agree() -> None:
    embedder = LocalMiniLM(cache_size=0)
    sessions_created = 0
    create_session = embedder._new_session

    def counting_create_session() -> object:
        nonlocal sessions_created
        sessions_created += 1
        return create_session()

    embedder._new_session = counting_create_session  # type: ignore[method-assign]
    try:
        results = await asyncio.gather(*(embedder.embed([BOIL_OFF]) for _ in range(4)))
        for vectors in results[1:]:
            np.testing.assert_array_equal(vectors, results[0])
        assert sessions_created == 1
    finally:
        await embedder.aclose()
    with pytest.raises(EmbedderError):
        await embedder.embed([BOIL_OFF])


async def test_the_event_loop_keeps_running_during_a_batch(uncached: LocalMiniLM) -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.001)
            ticks += 1

    task = asyncio.create_task(ticker())
    await uncached.embed(MIXED * 2)
    task.cancel()
    assert ticks >= 10


async def test_resolve_embedder_finds_the_local_provider() -> None:
    embedder = resolve_embedder("local:minilm", Settings(embedder_threads=1))
    assert isinstance(embedder, LocalMiniLM)
    assert embedder.model_id == "local:all-MiniLM-L6-v2"
    assert isinstance(resolve_embedder("local:all-MiniLM-L6-v2", Settings()), LocalMiniLM)
    assert isinstance(resolve_embedder("local", Settings()), LocalMiniLM)


def test_unknown_specs_raise_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match=r"known providers: .*local"):
        resolve_embedder("nope:x", Settings())
    with pytest.raises(ConfigurationError, match="local:minilm"):
        resolve_embedder("local:bert-large", Settings())
    with pytest.raises(ConfigurationError):
        LocalMiniLM(threads=0)


@pytest.mark.slow
async def test_minilm_q8_is_derived_once_and_stays_close(tmp_path: Path, minilm: LocalMiniLM) -> None:
    texts = [BOIL_OFF, BOIL_OFF_QUESTION, UNRELATED]
    q8 = LocalMiniLM(requantise=True, cache_dir=tmp_path, model_id="local:all-MiniLM-L6-v2-q8")
    try:
        vectors = await q8.embed(texts)
    finally:
        await q8.aclose()
    (derived,) = os.listdir(tmp_path)
    assert derived.startswith("minilm-q8-")
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.sum(vectors * await minilm.embed(texts), axis=1).min() > 0.97
    again = LocalMiniLM(requantise=True, cache_dir=tmp_path)
    try:
        np.testing.assert_array_equal(await again.embed(texts), vectors)
    finally:
        await again.aclose()
    assert os.listdir(tmp_path) == [derived]
