"""The OpenAI-compatible embeddings client against a scripted server over real HTTP on loopback."""

from __future__ import annotations

from collections.abc import AsyncIterator

import numpy as np
import pytest

from learnloop.config import Settings
from learnloop.embedders.base import Embedder
from learnloop.embedders.openai import OpenAIEmbeddings, from_spec
from learnloop.errors import ConfigurationError, EmbedderError
from tests.support.scripted_openai import Reply, ScriptedOpenAI, hash_embedding


@pytest.fixture
async def openai_embedder(scripted_openai: ScriptedOpenAI) -> AsyncIterator[OpenAIEmbeddings]:
    model = OpenAIEmbeddings("embed-test", base_url=scripted_openai.base_url, api_key="k", backoff_base=0.01)
    yield model
    await model.aclose()


async def test_batches_of_256_keep_input_order(
    openai_embedder: OpenAIEmbeddings, scripted_openai: ScriptedOpenAI
) -> None:
    texts = [f"learning number {i} about topic {i % 7}" for i in range(300)]

    vectors = await openai_embedder.embed(texts)

    assert vectors.shape == (300, scripted_openai.embedding_dimension)
    assert vectors.dtype == np.float32
    expected = np.array([hash_embedding(t, scripted_openai.embedding_dimension) for t in texts])
    np.testing.assert_allclose(vectors, expected, atol=1e-6)
    sent = scripted_openai.embedding_requests
    assert [len(r["input"]) for r in sent] == [256, 44]
    assert sent[0]["input"][0] == texts[0]
    assert sent[1]["input"][-1] == texts[-1]
    assert sent[0]["model"] == "embed-test"
    assert openai_embedder.dimension == scripted_openai.embedding_dimension


async def test_vectors_are_normalised_whatever_the_provider_sends(
    openai_embedder: OpenAIEmbeddings, scripted_openai: ScriptedOpenAI
) -> None:
    scripted_openai.embeddings.reply(Reply.embeddings([[3.0, 4.0], [0.0, 0.5]]))

    vectors = await openai_embedder.embed(["a", "b"])

    np.testing.assert_allclose(vectors, [[0.6, 0.8], [0.0, 1.0]], atol=1e-7)
    assert openai_embedder.dimension == 2


async def test_rows_follow_the_response_index_not_its_order(
    openai_embedder: OpenAIEmbeddings, scripted_openai: ScriptedOpenAI
) -> None:
    data = [{"object": "embedding", "index": 1, "embedding": [0.0, 1.0]}]
    data.append({"object": "embedding", "index": 0, "embedding": [1.0, 0.0]})
    scripted_openai.embeddings.reply(Reply.json_body({"object": "list", "data": data}))

    vectors = await openai_embedder.embed(["first", "second"])

    np.testing.assert_array_equal(vectors, [[1.0, 0.0], [0.0, 1.0]])


async def test_empty_input_makes_no_request(openai_embedder: OpenAIEmbeddings, scripted_openai: ScriptedOpenAI) -> None:
    assert (await openai_embedder.embed([])).shape == (0, 0)
    assert scripted_openai.embedding_requests == []


async def test_retries_then_succeeds(openai_embedder: OpenAIEmbeddings, scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.embeddings.reply(Reply.error(503, "busy"))

    assert (await openai_embedder.embed(["x"])).shape == (1, scripted_openai.embedding_dimension)
    assert len(scripted_openai.embedding_requests) == 2


async def test_a_provider_error_becomes_embedder_error(
    openai_embedder: OpenAIEmbeddings, scripted_openai: ScriptedOpenAI
) -> None:
    scripted_openai.embeddings.reply(Reply.error(400, "'$.input' is invalid", type="invalid_request_error"))

    with pytest.raises(EmbedderError, match=r"HTTP 400: '\$\.input' is invalid") as caught:
        await openai_embedder.embed([""])
    assert caught.value.details["status_code"] == 400


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (Reply.embeddings([[1.0, 0.0]]), "returned 1 embeddings for 2 inputs"),
        (Reply.embeddings([[1.0, 0.0], [0.0, 0.0]]), "zero or non-finite"),
        (Reply.embeddings([[1.0, 0.0], [1.0]]), "unexpected embeddings shape"),
        (Reply.embeddings([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), "returned 3 embeddings for 2 inputs"),
        (Reply.json_body({"data": "nope"}), "unexpected embeddings shape"),
        (Reply.raw_body("upstream timeout"), "non-JSON"),
    ],
    ids=["too-few", "zero-vector", "ragged", "too-many", "bad-data", "not-json"],
)
async def test_an_unusable_response_becomes_embedder_error(
    openai_embedder: OpenAIEmbeddings, scripted_openai: ScriptedOpenAI, reply: Reply, message: str
) -> None:
    scripted_openai.embeddings.reply(reply)

    with pytest.raises(EmbedderError, match=message):
        await openai_embedder.embed(["a", "b"])


async def test_a_declared_dimension_is_enforced(scripted_openai: ScriptedOpenAI) -> None:
    embedder = OpenAIEmbeddings("embed-test", base_url=scripted_openai.base_url, dimension=8)
    assert embedder.dimension == 8

    with pytest.raises(EmbedderError, match="dimension 64, expected 8"):
        await embedder.embed(["a"])
    await embedder.aclose()


def test_the_dimension_is_known_for_openai_models_and_unknown_otherwise() -> None:
    assert OpenAIEmbeddings("text-embedding-3-small").dimension == 1536
    with pytest.raises(EmbedderError, match="not known until the first embed"):
        _ = OpenAIEmbeddings("some-local-model", base_url="http://127.0.0.1:1/v1").dimension


async def test_from_spec_uses_the_settings() -> None:
    with ScriptedOpenAI(embedding_dimension=1536) as server:
        embedder = from_spec("text-embedding-3-small", server.settings())

        assert isinstance(embedder, Embedder)
        assert embedder.model_id == "openai:text-embedding-3-small"
        assert (await embedder.embed(["hello world"])).shape == (1, 1536)
        assert server.requests[0].headers["authorization"] == "Bearer sk-scripted-test"
        await embedder.aclose()


async def test_a_model_of_unknown_dimension_declares_it_in_the_spec(scripted_openai: ScriptedOpenAI) -> None:
    embedder = from_spec("nomic-embed-text?dimension=64", scripted_openai.settings())

    assert isinstance(embedder, Embedder)
    assert (embedder.model_id, embedder.dimension) == ("openai:nomic-embed-text", 64)
    assert (await embedder.embed(["hello"])).shape == (1, 64)
    assert scripted_openai.embedding_requests[0]["model"] == "nomic-embed-text"
    await embedder.aclose()


def test_from_spec_defaults_and_configuration_errors() -> None:
    with_key = Settings(openai_api_key="k")
    assert from_spec("", with_key).model_id == "openai:text-embedding-3-small"
    with pytest.raises(ConfigurationError, match="needs a key"):
        from_spec("text-embedding-3-small", Settings())
    with pytest.raises(ConfigurationError, match="unknown option"):
        from_spec("m?dimensions=5", with_key)
    with pytest.raises(ConfigurationError, match="positive integer"):
        from_spec("m?dimension=-3", with_key)
