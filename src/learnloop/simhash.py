"""64-bit SimHash (Charikar) over normalised word unigrams and bigrams.

Near-identical texts ("Boil-off is 3.5 L/hr." vs "boil off is 3.5 l/hr") land within a few bits of each
other; unrelated texts differ in about half the bits. Used to catch store bloat that embeddings alone
would call "similar but different".
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from itertools import pairwise

import numpy as np

__all__ = ["features", "hamming", "simhash64", "simhash64_hex"]

_WORD = re.compile(r"[^\W_]+(?:[.,][0-9]+)*", re.UNICODE)
_BIT_WEIGHTS = np.left_shift(np.uint64(1), np.arange(64, dtype=np.uint64))


def features(text: str) -> list[str]:
    """Lower-cased, accent-folded words and adjacent word pairs."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    words = _WORD.findall(folded)
    return words + [f"{a} {b}" for a, b in pairwise(words)]


def _hash64(feature: str) -> int:
    return int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")


def simhash64(text: str) -> int:
    feats = features(text)
    if not feats:
        return 0
    # Bigrams carry order; unigrams carry vocabulary. Equal weights keep small edits small.
    hashes = np.array([_hash64(f) for f in feats], dtype=np.uint64)
    bits = np.unpackbits(hashes.view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
    votes = bits.sum(axis=0, dtype=np.int64) * 2 - len(feats)
    return int(np.bitwise_or.reduce(_BIT_WEIGHTS[votes > 0], initial=np.uint64(0)))


def simhash64_hex(text: str) -> str:
    return f"{simhash64(text):016x}"


def hamming(a: int | str, b: int | str) -> int:
    x = int(a, 16) if isinstance(a, str) else a
    y = int(b, 16) if isinstance(b, str) else b
    return (x ^ y).bit_count()
