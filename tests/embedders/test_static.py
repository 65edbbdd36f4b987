"""The static embedder distilled from the bundled MiniLM: real derivation, real table, no mocks.

The table is derived once per machine into the user cache (about a minute on two cores) and reused by
every later process, so only the first run of this module on a fresh machine pays for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import numpy as np
import pytest

from learnloop.config import Settings
from learnloop.embedders import resolve_embedder
from learnloop.embedders import static as static_module
from learnloop.embedders.local import DIMENSION, user_cache_dir
from learnloop.embedders.static import StaticMiniLM
from learnloop.errors import ConfigurationError, EmbedderError, ValidationError

BOIL_OFF = "Grainfather Gen 1 boil-off rate is ~3.5 L/hr"
PARAPHRASE = "The Grainfather Gen 1 boils off about 3.5 litres per hour"
UNRELATED = "User prefers pytest over unittest"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def static() -> Iterator[StaticMiniLM]:
    embedder = StaticMiniLM()
    yield embedder
    asyncio.run(embedder.aclose())


async def test_vectors_are_unit_length_float32_rows(static: StaticMiniLM) -> None:
    vectors = await static.embed([BOIL_OFF, "ok", "", "   ", UNRELATED])
    assert vectors.shape == (5, DIMENSION) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


async def test_batches_equal_single_texts_in_the_callers_order(static: StaticMiniLM) -> None:
    texts = [f"dry hop {i} grams of Citra on day {i % 5 + 2}" for i in range(30)] + [BOIL_OFF]
    batch = await static.embed(texts)
    singles = np.vstack([await static.embed([text]) for text in texts])
    np.testing.assert_allclose(batch, singles, atol=1e-6)


async def test_purpose_does_not_change_the_vector(static: StaticMiniLM) -> None:
    query = await static.embed([BOIL_OFF], purpose="query")
    np.testing.assert_array_equal(query, await static.embed([BOIL_OFF], purpose="document"))


async def test_a_paraphrase_is_closer_than_an_unrelated_text(static: StaticMiniLM) -> None:
    base, paraphrase, unrelated = await static.embed([BOIL_OFF, PARAPHRASE, UNRELATED])
    assert float(base @ paraphrase) > float(base @ unrelated)


async def test_long_texts_are_not_cut(static: StaticMiniLM) -> None:
    head = " ".join(["the mash was held at 67 degrees"] * 60)
    whole, cut = await static.embed([head + " then the yeast stalled at 1.030", head])
    assert float(whole @ cut) < 1.0 - 1e-7


async def test_its_vectors_have_their_own_model_id(static: StaticMiniLM) -> None:
    assert static.model_id == "local:minilm-static-v1" and static.dimension == DIMENSION
    assert resolve_embedder("local:minilm-static", Settings()).model_id == static.model_id


async def test_bad_input_and_closed_embedders_raise_typed_errors() -> None:
    embedder = StaticMiniLM()
    with pytest.raises(ValidationError):
        await embedder.embed("a bare string")
    assert (await embedder.embed([])).shape == (0, DIMENSION)
    await embedder.aclose()
    with pytest.raises(EmbedderError, match="closed"):
        await embedder.embed([BOIL_OFF])
    with pytest.raises(ConfigurationError, match="local:minilm-static"):
        resolve_embedder("local:minilm-statik", Settings())


async def test_the_table_is_derived_once_and_read_back_by_later_processes(
    static: StaticMiniLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = await static.embed([BOIL_OFF, UNRELATED])  # derived (or read) by the module's embedder
    assert list(user_cache_dir().glob("minilm-static-v1-*.npy"))

    def must_not_derive(*args: object) -> None:
        raise AssertionError("the cached table should have been used")

    monkeypatch.setattr(static_module, "_derive", must_not_derive)
    again = StaticMiniLM()
    try:
        np.testing.assert_array_equal(await again.embed([BOIL_OFF, UNRELATED]), first)
    finally:
        await again.aclose()
