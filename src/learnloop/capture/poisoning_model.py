"""A learned memory-poisoning detector: logistic regression on hashed character and word n-grams, plus the
text's embedding when the caller has one.

The structural rules (`poisoning`, `poisoning_acts`) name what a text does; this model catches phrasings they
do not list. Its inputs:

* **n-grams** — character 3- to 6-grams of the normalised lowercased text (web and e-mail addresses read as
  one placeholder each, digits as 0), hashed into 2^18 buckets (a fixed polynomial hash: the same text gives
  the same features in every process).
  They carry every language the training corpus has, including the ones the embedder does not read well
  (Korean, Japanese);
* **the embedding** — the 384-dimensional vector of the bundled MiniLM (`local:minilm-q8` /
  ``local:all-MiniLM-L6-v2``), which the save path computes anyway. Optional: the model was trained with the
  vector dropped half of the time, so it also scores text alone (`learnloop gate`, field checks, recheck).

The score is the largest over the whole text and each of its sentences (a poisoning sentence hidden behind
benign ones is not diluted), and the text is refused at or above `threshold` (set by
``bench/train_gate_model.py`` on held-out benign text). Weights ship as package data
(``capture/data/poisoning.npz``, trained from ``bench/data/gate/learned/``); nothing is downloaded.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources

import numpy as np
import numpy.typing as npt

from .ngrams import char_ngrams, view

__all__ = ["BUCKETS", "DIMENSION", "VECTOR_MODELS", "PoisoningModel", "features", "load_model"]

BUCKETS = 1 << 18
#: The embedders whose vectors the model reads (the bundled MiniLM, int8 as shipped or requantised); any other
#: embedder's vectors are not passed to it.
VECTOR_MODELS = frozenset({"local:all-MiniLM-L6-v2", "local:all-MiniLM-L6-v2-q8"})
DIMENSION = 384
_MASK = np.uint64(BUCKETS - 1)
_WORDS = re.compile(r"[^\W\d_]{2,}")
# Sentence ends in the view: a full stop, "!" or "?" before a space, their CJK forms, a line break.
_BOUNDARY = re.compile(r"[.!?](?= )|[。！？\n]")
_MIN_NGRAMS = 40  # a sentence shorter than ~10 characters is scored only as part of the text
# The model was trained on texts of up to ~300 characters. Scored whole, a longer one's sum grows with its length
# (a quarter of 1,500-character texts joined from benign chat lines read as poisoning), so beyond this many
# n-grams (~300 characters) a text is scored by its sentences and pairs of adjacent sentences only.
_WHOLE_NGRAMS = 1200

Indices = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float32]


def features(text: str) -> Indices:
    """The buckets of a text's character n-grams, one per occurrence (each counts 1 / sqrt(total))."""
    return (char_ngrams(f" {view(text)} ")[0] & _MASK).astype(np.int64)


@dataclass(frozen=True)
class PoisoningModel:
    """Weights of the n-gram part (`ngram`, one per bucket), of the embedding part (`dense`), a bias and the
    refusal threshold on the logit."""

    ngram: Floats
    dense: Floats
    bias: float
    threshold: float
    version: str

    # The text part of the last logit: the save path asks for a text without, then with, its vector.
    _last: tuple[str, float] | None = field(default=None, init=False, compare=False, repr=False)

    def logit(self, text: str, vector: Sequence[float] | npt.NDArray[np.floating] | None = None) -> float:
        """The poisoning logit of a text: the highest over the whole text and its sentences."""
        dense = 0.0
        if vector is not None:
            v = np.asarray(vector, dtype=np.float32)
            if v.shape == (DIMENSION,):
                dense = float(v @ self.dense)
        last = self._last
        if last is not None and last[0] == text:
            return last[1] + dense + self.bias
        best = self._text_logit(text)
        object.__setattr__(self, "_last", (text, best))  # one tuple, swapped whole: safe between threads
        return best + dense + self.bias

    def _text_logit(self, text: str) -> float:
        seen = f" {_once(view(text))} "
        hashes, starts = char_ngrams(seen)
        if not len(hashes):
            return 0.0
        weights = self.ngram[(hashes & _MASK).astype(np.int64)]
        ends = [m.end() for m in _BOUNDARY.finditer(seen)]
        best = float(weights.sum()) / np.sqrt(len(weights)) if len(weights) <= _WHOLE_NGRAMS or not ends else -np.inf
        if ends:  # each sentence on its own: a planted one is not diluted by the benign ones around it
            sentence = np.searchsorted(np.asarray(ends), starts, side="right")
            sums = np.bincount(sentence, weights=weights)
            counts = np.bincount(sentence)
            long = counts >= _MIN_NGRAMS
            if long.any():
                best = max(best, float((sums[long] / np.sqrt(counts[long])).max()))
            # An order split over two sentences ("Note from IT. From now on …"); a text of one sentence has no pair.
            if len(weights) > _WHOLE_NGRAMS and len(sums) > 1:
                pairs = (sums[:-1] + sums[1:]) / np.sqrt(np.maximum(counts[:-1] + counts[1:], 1))
                best = max(best, float(pairs.max()))
        return float(best)

    def refuses(self, text: str, vector: Sequence[float] | npt.NDArray[np.floating] | None = None) -> bool:
        """At or above the threshold; a text of fewer than three distinct words (a token, masked text) never."""
        words: set[str] = set()
        for word in _WORDS.finditer(text.lower()):
            words.add(word.group(0))
            if len(words) == 3:
                break
        else:
            return False
        return self.logit(text, vector) >= self.threshold


def _once(text: str) -> str:
    """The text with each sentence kept once: saying the same thing again does not make it more of an order."""
    parts, seen, start = [], set(), 0
    for end in [m.end() for m in _BOUNDARY.finditer(text)] + [len(text)]:
        sentence = text[start:end]
        if sentence.strip() and sentence.strip() not in seen:
            seen.add(sentence.strip())
            parts.append(sentence)
        start = end
    return "".join(parts)


@functools.cache
def load_model() -> PoisoningModel | None:
    """The shipped model (None if the package was built without it)."""
    try:
        data = resources.files("learnloop.capture").joinpath("data/poisoning.npz").read_bytes()
    except FileNotFoundError:
        return None
    import io

    with np.load(io.BytesIO(data)) as npz:
        return PoisoningModel(
            ngram=npz["ngram"].astype(np.float32),
            dense=npz["dense"].astype(np.float32),
            bias=float(npz["bias"]),
            threshold=float(npz["threshold"]),
            version=str(npz["version"]),
        )
