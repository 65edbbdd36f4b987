"""A learned reader of follow-ups: which of nine things the user's next message says about the last answer.

`FeedbackAnalyzer` (``feedback.py``) asks it once the app's explicit signals, silence and repetition have had
their say. Multinomial logistic regression over three inputs:

* **n-grams** — character 3- to 6-grams of the follow-up (`ngrams.view`), hashed into 2^16 buckets, weighted
  tf-idf (sublinear counts times the training corpus's idf, unit length): every language of the training
  corpus, phrasing the keyword lists do not name;
* **the embedding** — the follow-up's vector from the bundled MiniLM when the caller has it (the model was
  trained with it dropped for half of the copies, so text alone also reads);
* **cues** — what the keyword rules and the context say (`FeedbackAnalyzer.cues`): the rules' verdict, each
  keyword family found, a question, a number, word overlap with the previous message.

Negative feedback deprecates knowledge, so a negative label is named only at or above its own probability
threshold (set by ``bench/train_feedback_model.py`` for precision on out-of-fold predictions); below it the
reading is `unclear` and nothing is deprecated (`torn`: sure it is negative, not which way, gets the mild
action). Weights ship as package data (``capture/data/feedback.npz``).
"""

from __future__ import annotations

import functools
import io
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

import numpy as np
import numpy.typing as npt

from .ngrams import char_ngrams, view

__all__ = [
    "BUCKETS",
    "DIMENSION",
    "LABELS",
    "NEGATIVE",
    "UNCLEAR",
    "FeedbackModel",
    "buckets",
    "decide",
    "features",
    "load_feedback_model",
    "torn",
]

LABELS = (
    "positive",
    "refinement",
    "new_topic",
    "new_statement",
    "exclamation",
    "correction",
    "failure",
    "frustration",
    "outdated",
)
NEGATIVE = frozenset({"correction", "failure", "frustration", "outdated"})
TORN_MASS = 0.8  # held-out: catches 22 + 16 negatives the thresholds miss, 1 of 503 benign follow-ups (demoted only)
#: What `decide` names when the most probable label is negative but below its threshold.
UNCLEAR = "unclear"
BUCKETS = 1 << 16
DIMENSION = 384
_MASK = np.uint64(BUCKETS - 1)

Floats = npt.NDArray[np.float32]


def buckets(text: str) -> npt.NDArray[np.int64]:
    """The n-gram buckets of a follow-up, one per occurrence."""
    return (char_ngrams(f" {view(text)} ")[0] & _MASK).astype(np.int64)


def features(text: str, idf: npt.NDArray[np.floating]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """A follow-up's n-gram buckets and their tf-idf weights (1 + log count, times idf, unit length)."""
    found, counts = np.unique(buckets(text), return_counts=True)
    weights = (1.0 + np.log(counts)) * idf[found]
    norm = float(np.sqrt(weights @ weights))
    return found, weights / norm if norm else weights


@dataclass(frozen=True)
class FeedbackModel:
    """Weights per label (columns in `LABELS` order) of the n-grams, the embedding and the cues; a bias, and
    the probability a label needs to be named (0 for the non-negative ones)."""

    ngram: Floats
    idf: Floats
    dense: Floats
    cue: Floats
    bias: Floats
    thresholds: Floats
    cue_names: tuple[str, ...]
    version: str

    def logits(
        self, text: str, cues: npt.NDArray[np.floating], vector: Sequence[float] | npt.NDArray[np.floating] | None
    ) -> npt.NDArray[np.float64]:
        z = self.bias.astype(np.float64) + np.asarray(cues, dtype=np.float64) @ self.cue
        found, weights = features(text, self.idf)
        z += weights @ self.ngram[found]
        if vector is not None:
            v = np.asarray(vector, dtype=np.float32)
            if v.shape == (DIMENSION,):
                z += v @ self.dense
        return z

    def probabilities(
        self, text: str, cues: npt.NDArray[np.floating], vector: Sequence[float] | npt.NDArray[np.floating] | None
    ) -> npt.NDArray[np.float64]:
        z = self.logits(text, cues, vector)
        e = np.exp(z - z.max())
        return np.asarray(e / e.sum(), dtype=np.float64)


def decide(p: npt.NDArray[np.floating], thresholds: npt.NDArray[np.floating]) -> tuple[str, float]:
    """The most probable label if it clears its threshold (the non-negative ones always do), else `unclear`: a
    negative reading too weak to act on is not turned into the runner-up's praise or refinement. (Naming the top
    negative label when the negative labels are near certain together deprecated 6 of 250 benign held-out
    follow-ups instead of 1: knowledge lost is worse than a failure not counted.)"""
    index = int(np.argmax(p))
    return (LABELS[index] if p[index] >= thresholds[index] else UNCLEAR), float(p[index])


def torn(p: npt.NDArray[np.floating]) -> bool:
    """Sure the follow-up is negative, unsure which way ("that's wrong, it didn't work": correction or failure?):
    the two most probable labels are negative and the negative labels hold `TORN_MASS` together."""
    first, second = (LABELS[int(i)] for i in np.argsort(p)[::-1][:2])
    mass = sum(float(p[i]) for i, label in enumerate(LABELS) if label in NEGATIVE)
    return first in NEGATIVE and second in NEGATIVE and mass >= TORN_MASS


@functools.cache
def load_feedback_model() -> FeedbackModel | None:
    """The shipped model (None if the package was built without it)."""
    try:
        data = resources.files("learnloop.capture").joinpath("data/feedback.npz").read_bytes()
    except FileNotFoundError:
        return None
    with np.load(io.BytesIO(data)) as npz:
        return FeedbackModel(
            ngram=npz["ngram"].astype(np.float32),
            idf=npz["idf"].astype(np.float32),
            dense=npz["dense"].astype(np.float32),
            cue=npz["cue"].astype(np.float32),
            bias=npz["bias"].astype(np.float32),
            thresholds=npz["thresholds"].astype(np.float32),
            cue_names=tuple(str(n) for n in npz["cue_names"]),
            version=str(npz["version"]),
        )
