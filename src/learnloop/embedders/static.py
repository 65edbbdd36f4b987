"""A static embedder distilled from all-MiniLM-L6-v2: one vector per token, averaged. ~0.05 ms per text.

The table is derived once, on this machine, from the same bundled MiniLM graph the `local:minilm` embedder
runs (nothing is downloaded): every WordPiece token goes through the model on its own (`[CLS] token
[SEP]`), its mean-pooled output becomes the token's vector, and each vector is scaled by a smooth
inverse-frequency weight (SIF, a / (a + p(token)), with p from the vocabulary's frequency order), the
recipe of model2vec. A text's vector is the mean of its tokens' vectors, L2-normalised.

Trade-off, measured with the benches: on LoCoMo (conversational, lexical) its vector-only recall is higher
than MiniLM's; on MetaTool (queries against tool descriptions, paraphrase-heavy) it is far lower, because
a bag of token vectors cannot read context. Its vectors are not comparable with MiniLM's (own model_id).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import EmbedderError, ValidationError
from .base import Purpose, Vectors
from .bundled import DIMENSION, bundled_model_path, load_tokenizer, user_cache_dir

__all__ = ["StaticMiniLM"]

logger = logging.getLogger(__name__)

# model2vec's default SIF coefficient; on LoCoMo 1e-3 and 1e-5 both lost ~7 points of recall@5 against it.
SIF_COEFFICIENT = 1e-4
# Derivation batch: 3-token rows, so wide batches are cheap and keep ORT's per-call overhead small.
DERIVE_ROWS = 512
# Texts per thread hop: below this, embedding on the event loop costs less than handing the work over.
INLINE_TEXTS = 8
TABLE_VERSION = 1


class StaticMiniLM:
    """Token-vector averages over a table distilled from MiniLM; the table is built on first use (~1 min)."""

    def __init__(self, *, model_path: Path | None = None, cache_dir: Path | None = None, threads: int = 2) -> None:
        self._model_path = model_path
        self._cache_dir = cache_dir or user_cache_dir()
        self._threads = threads
        self._table: npt.NDArray[np.float32] | None = None
        self._tokenizer: Any = None
        self._unknown_id = 100
        self._load_lock = threading.Lock()
        self._closed = False

    @property
    def model_id(self) -> str:
        return f"local:minilm-static-v{TABLE_VERSION}"

    @property
    def dimension(self) -> int:
        return DIMENSION

    async def embed(self, texts: Sequence[str], *, purpose: Purpose = "document") -> Vectors:
        del purpose  # symmetric: queries and documents share the table
        if isinstance(texts, str):
            raise ValidationError("embed() takes a sequence of texts, not a single string")
        if self._closed:
            raise EmbedderError(f"{self.model_id} embedder is closed")
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        if self._table is not None and len(texts) <= INLINE_TEXTS:
            return self._embed_loaded(list(texts))
        return await asyncio.to_thread(self._embed_blocking, list(texts))

    async def aclose(self) -> None:
        self._closed = True
        self._table = None

    def _embed_blocking(self, texts: list[str]) -> Vectors:
        self._load()
        return self._embed_loaded(texts)

    def _embed_loaded(self, texts: list[str]) -> Vectors:
        table, tokenizer = self._table, self._tokenizer
        if table is None:
            raise EmbedderError(f"{self.model_id} embedder is closed")
        encodings = [tokenizer.encode(texts[0], add_special_tokens=False)] if len(texts) == 1 else None
        if encodings is None:
            encodings = tokenizer.encode_batch(texts, add_special_tokens=False)
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        for row, encoding in enumerate(encodings):
            ids = encoding.ids or [self._unknown_id]  # blank text: the [UNK] vector, still unit length
            out[row] = table[ids].mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.maximum(norms, 1e-12)
        return out

    def _load(self) -> None:
        with self._load_lock:  # taken only off the event loop, so waiting here blocks nothing
            if self._table is not None:
                return
            if self._closed:
                raise EmbedderError(f"{self.model_id} embedder is closed")
            tokenizer = load_tokenizer(truncate=False)
            self._unknown_id = tokenizer.token_to_id("[UNK]")
            source = self._model_path or bundled_model_path()
            self._tokenizer = tokenizer
            self._table = _derived_table(source, tokenizer, self._cache_dir, self._threads)


def _derived_table(source: Path, tokenizer: Any, cache_dir: Path, threads: int) -> npt.NDArray[np.float32]:
    """The token table for `source`, read from the cache or derived and cached (atomically)."""
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    name = f"minilm-static-v{TABLE_VERSION}-{digest}.npy"
    # A read-only home falls back to the temp folder, else the table lives in memory only.
    folders = (cache_dir, Path(tempfile.gettempdir()) / f"learnloop-{os.getuid()}")
    for folder in folders:
        target = folder / name
        if target.exists():
            try:
                return _checked(np.load(target), tokenizer)
            except (OSError, ValueError):
                logger.warning("ignoring an unreadable static table at %s", target)
    table = _derive(source, tokenizer, threads)
    for folder in folders:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=folder, suffix=".npy", delete=False) as handle:
                np.save(handle, table.astype(np.float16))
            os.replace(handle.name, folder / name)  # concurrent processes never see half a file
            break
        except OSError:
            continue
    return table


def _checked(table: npt.NDArray[Any], tokenizer: Any) -> npt.NDArray[np.float32]:
    if table.shape != (tokenizer.get_vocab_size(), DIMENSION):
        raise ValueError(f"static table has shape {table.shape}")
    return table.astype(np.float32)


def _derive(source: Path, tokenizer: Any, threads: int) -> npt.NDArray[np.float32]:
    import onnxruntime as ort

    logger.warning("deriving the static embedding table from %s (once per machine, about a minute)", source.name)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        raise EmbedderError(f"cannot load {source} to derive the static table: {exc}") from exc
    size = tokenizer.get_vocab_size()
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    table = np.empty((size, DIMENSION), dtype=np.float64)
    for start in range(0, size, DERIVE_ROWS):
        ids = np.arange(start, min(size, start + DERIVE_ROWS), dtype=np.int64)
        rows = np.stack([np.full_like(ids, cls_id), ids, np.full_like(ids, sep_id)], axis=1)
        try:
            (hidden,) = session.run(
                ["last_hidden_state"],
                {"input_ids": rows, "attention_mask": np.ones_like(rows), "token_type_ids": np.zeros_like(rows)},
            )
        except Exception as exc:
            raise EmbedderError(f"deriving the static table failed: {exc}") from exc
        table[start : start + len(ids)] = hidden.mean(axis=1)
    # WordPiece vocabularies list tokens roughly by frequency, so rank stands in for a corpus count (Zipf).
    rank = np.arange(2, size + 2, dtype=np.float64)
    probability = (1.0 / rank) / (1.0 / rank).sum()
    weights = SIF_COEFFICIENT / (SIF_COEFFICIENT + probability)
    # Rounded as the cache stores it, so the first process's vectors equal every later one's.
    derived: npt.NDArray[np.float32] = (table * weights[:, np.newaxis]).astype(np.float16).astype(np.float32)
    return derived
