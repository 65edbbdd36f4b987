"""Counting tokens for a context budget (seed 001 §8.9: at most 2,000 tokens of learning context).

The counter is pluggable (`TokenCounter`); the default counts with the tokenizer bundled for the local embedding
model (MiniLM's WordPiece vocabulary), which is an approximation of what the app's LLM will count — close for
English prose, lower for code and some scripts. An app that knows its model's tokenizer gives that instead:

    loop.turns.configure(TurnConfig(token_counter=MyCounter()))   # anything with count(text) -> int
"""

from __future__ import annotations

import functools
import math
import threading
from typing import Any, Protocol, runtime_checkable

__all__ = ["BundledTokenCounter", "CharacterEstimate", "TokenCounter", "default_counter"]


@runtime_checkable
class TokenCounter(Protocol):
    def count(self, text: str) -> int:
        """Tokens `text` takes (whitespace between pieces counts nothing, so counts of lines add up)."""
        ...


class CharacterEstimate:
    """About four characters per token under the common BPE vocabularies (no tokenizer needed)."""

    def count(self, text: str) -> int:
        return math.ceil(len(text) / 4) if text else 0


class BundledTokenCounter:
    """Counts with the local embedding model's bundled tokenizer, without its special tokens and untruncated."""

    def __init__(self, cache_size: int = 8_192) -> None:
        self._tokenizer: Any = None
        self._lock = threading.Lock()
        # The same learnings and sections come back turn after turn, and an encode costs ~0.15 ms.
        self._cached = functools.lru_cache(maxsize=cache_size)(self._encode)

    def _load(self) -> Any:
        with self._lock:
            if self._tokenizer is None:
                from .embedders.bundled import load_tokenizer

                self._tokenizer = load_tokenizer(truncate=False)
            return self._tokenizer

    def count(self, text: str) -> int:
        return self._cached(text) if text else 0

    def _encode(self, text: str) -> int:
        tokenizer = self._tokenizer or self._load()
        return len(tokenizer.encode(text, add_special_tokens=False).ids)


@functools.cache
def default_counter() -> TokenCounter:
    """The one bundled-tokenizer counter of this process."""
    return BundledTokenCounter()
