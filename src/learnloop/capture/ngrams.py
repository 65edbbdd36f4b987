"""Hashed character n-grams, the text features of the learned classifiers (`poisoning_model`, `feedback_model`).

A fixed polynomial hash, so the same text gives the same features in every process and on every platform. The
text is read through `view`: normalised, lower case, web and e-mail addresses as one placeholder each and
digits as 0 — a model that learned the domains or numbers of its training texts would not generalise.
"""

from __future__ import annotations

import re

import numpy as np
import numpy.typing as npt

from .gate_rule import normalize

__all__ = ["NGRAMS", "char_ngrams", "view"]

NGRAMS = (3, 4, 5, 6)
_PRIME = np.uint64(1_000_003)
_MIX = np.uint64(0x9E3779B97F4A7C15)
_SHIFT = np.uint64(29)
_URL = re.compile(
    r"(?:https?://|www\.)[^\s<>\"'`)\]]+|\b[\w-]{1,63}(?:\.[\w-]{1,63})*\.[a-z]{2,12}(?:/[^\s<>\"'`)\]]*)?"
)
_EMAIL = re.compile(r"[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63})+")
_DIGITS = re.compile(r"\d+")
_DOTTED = re.compile(r"\w\.[a-z]")


def char_ngrams(text: str) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
    """Hashes of every character n-gram (n in `NGRAMS`), each n in its own space, repeats kept; and where
    each starts."""
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    positions = np.arange(len(codes))
    parts, starts = [], []
    h = codes
    for n in range(2, NGRAMS[-1] + 1):  # the n-gram hash extends the (n-1)-gram one by a character
        if len(codes) < n:
            break
        h = h[:-1] * _PRIME + codes[n - 1 :]
        if n >= NGRAMS[0]:
            parts.append(h + np.uint64(n))
            starts.append(positions[: len(h)])
    if not parts:
        return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
    mixed = np.concatenate(parts) * _MIX
    return mixed ^ (mixed >> _SHIFT), np.concatenate(starts)


def view(text: str) -> str:
    """The text as the classifiers read it (see the module docstring)."""
    lowered = normalize(text).lower()
    if "@" in lowered:
        lowered = _EMAIL.sub(" emailx ", lowered)
    if "://" in lowered or ("." in lowered and ("www." in lowered or _DOTTED.search(lowered))):
        lowered = _URL.sub(" urlx ", lowered)
    # str.split() breaks at exactly what `\s` matches, in one pass in C (a regex replaced every single space).
    return " ".join(_DIGITS.sub("0", lowered).split())
