"""An embedder for any OpenAI-compatible `/embeddings` endpoint.

Vectors come back float32 and L2-normalised whatever the provider does, so they can be compared with a dot
product like the local model's. The dimension is given, known for OpenAI's own models, or learned from the
first response; every later response must match it. Stores are opened with the dimension before anything
is embedded, so a model this module does not know needs it in the spec:
`openai:nomic-embed-text?dimension=768`.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..config import Settings
from ..errors import ConfigurationError, EmbedderError
from ..llms.openai import DEFAULT_BASE_URL, OpenAIEndpoint, connection_from
from .base import Embedder, Purpose, Vectors

__all__ = ["DEFAULT_MODEL", "OpenAIEmbeddings", "from_spec"]

DEFAULT_MODEL = "text-embedding-3-small"
MAX_BATCH_INPUTS = 256
# OpenAI caps a request at ~300k tokens; at ~4 characters a token this stays well below it.
MAX_BATCH_CHARS = 400_000

_KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


class OpenAIEmbeddings:
    """`Embedder` over `POST {base_url}/embeddings`, in batches of at most `MAX_BATCH_INPUTS` texts."""

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        timeout: float = 60.0,
        dimension: int | None = None,
        batch_size: int = MAX_BATCH_INPUTS,
        max_attempts: int = 3,
        backoff_base: float = 0.5,
    ) -> None:
        self._model = model
        self._dimension = dimension or _KNOWN_DIMENSIONS.get(model)
        self._batch_size = max(1, min(batch_size, MAX_BATCH_INPUTS))
        self._endpoint = OpenAIEndpoint(
            base_url=base_url,
            api_key=api_key,
            timeout=timeout,
            error=EmbedderError,
            what=f"embeddings ({model})",
            max_attempts=max_attempts,
            backoff_base=backoff_base,
        )

    @property
    def model_id(self) -> str:
        return f"openai:{self._model}"

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            raise EmbedderError(
                f"the dimension of {self.model_id} is not known until the first embed() call; declare it "
                f"in the spec ('{self.model_id}?dimension=768') or pass `dimension` to OpenAIEmbeddings"
            )
        return self._dimension

    async def embed(self, texts: Sequence[str], *, purpose: Purpose = "document") -> Vectors:
        # OpenAI-style embedding models use one space for queries and documents: `purpose` changes nothing.
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single string")
        parts = [await self._embed_batch(batch) for batch in _batches(texts, self._batch_size)]
        if not parts:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        vectors: Vectors = np.concatenate(parts)
        return vectors

    async def aclose(self) -> None:
        await self._endpoint.aclose()

    async def _embed_batch(self, texts: list[str]) -> Vectors:
        body = await self._endpoint.post(
            "embeddings", {"model": self._model, "input": texts, "encoding_format": "float"}
        )
        vectors = self._vectors_from(body, len(texts))
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        if not np.all(np.isfinite(norms)) or np.any(norms == 0):
            raise self._endpoint.fail("answered with a zero or non-finite vector, which cannot be normalised")
        unit: Vectors = (vectors / norms).astype(np.float32)
        return unit

    def _vectors_from(self, body: dict[str, Any], expected: int) -> npt.NDArray[np.float64]:
        try:
            items = sorted(body["data"], key=lambda item: int(item["index"]))
            indices = [int(item["index"]) for item in items]
            vectors = np.asarray([item["embedding"] for item in items], dtype=np.float64)
        except (KeyError, TypeError, ValueError) as exc:
            raise self._endpoint.fail(f"answered with an unexpected embeddings shape: {exc!r}") from exc
        if len(indices) != expected:
            raise self._endpoint.fail(f"returned {len(indices)} embeddings for {expected} inputs")
        if indices != list(range(expected)):
            raise self._endpoint.fail(f"returned embeddings with duplicate or out-of-range indices {indices}")
        if vectors.ndim != 2:
            raise self._endpoint.fail("returned embeddings that are not lists of numbers")
        if self._dimension is None:
            self._dimension = int(vectors.shape[1])
        elif vectors.shape[1] != self._dimension:
            raise self._endpoint.fail(f"returned vectors of dimension {vectors.shape[1]}, expected {self._dimension}")
        return vectors


def _batches(texts: Sequence[str], size: int) -> Iterator[list[str]]:
    """Consecutive slices of at most `size` texts and (unless one text alone exceeds it) MAX_BATCH_CHARS."""
    batch: list[str] = []
    chars = 0
    for text in texts:
        if batch and (len(batch) == size or chars + len(text) > MAX_BATCH_CHARS):
            yield batch
            batch, chars = [], 0
        batch.append(text)
        chars += len(text)
    if batch:
        yield batch


def from_spec(model: str, settings: Settings) -> Embedder:
    """The `learnloop.embedders` entry point: `openai:<model>[?dimension=N]`.

    A bare `openai` means text-embedding-3-small. `dimension` declares the vector size of a model this
    module does not know; it is checked against every response, not sent to the server.
    """
    name, _, query = model.partition("?")
    options = urllib.parse.parse_qs(query, keep_blank_values=True, separator="&")
    unknown = sorted(set(options) - {"dimension"})
    if unknown:
        raise ConfigurationError(f"unknown option(s) {', '.join(unknown)} in embedder spec 'openai:{model}'")
    dimension = None
    if "dimension" in options:
        value = options["dimension"][-1]
        if not value.isdigit() or int(value) <= 0:
            raise ConfigurationError(f"dimension must be a positive integer in 'openai:{model}', got {value!r}")
        dimension = int(value)
    base_url, api_key = connection_from(settings)
    return OpenAIEmbeddings(
        name or DEFAULT_MODEL,
        base_url=base_url,
        api_key=api_key,
        timeout=settings.request_timeout,
        dimension=dimension,
    )
