"""A learned second reader of the pairs dedupe's rules could not settle: one fact said again, a new value of it,
or two facts.

The rules (`dedupe.judge`) act only on positive evidence in the words, so a paraphrase that shares few words
("wants concise answers without preamble" / "keep replies short and skip the intro fluff") or a change said
without a change word ("lives in a flat in Leeds" / "lives in a house in York") ends as `create`. This reader
looks again at exactly those pairs — a `create` the rules reached for want of evidence, never one they reached
because of a scope, a date, a record, or a name or label one text has and the other lacks — and turns it into
`new_version` or one learning only when it is sure (`PairReader.update_threshold`, `same_threshold`). "The same
fact" becomes `skip` only when the old text already says everything the new one does; otherwise `merge`, whose
text keeps both claims, so a wrong reading joins two facts instead of losing one.

Multinomial logistic regression (create / new_version / skip / merge) over what the rules already computed
(`evidence.compare`: alignment, overlap, values, correction words, swapped regions …), the cosine of the pair
under the embedder it was trained for, and the words only one text has (hashed, with their character 4-grams, so
inflections and other languages read). Weights per embedding model ship as package data
(``capture/data/dedupe_pairs.npz``), fitted by ``bench/train_dedupe_model.py`` on the labelled pair corpora in
``bench/data/dedupe/``; its thresholds were set on out-of-fold predictions so that the reader keeps
different-subject pairs apart about as often as the rules alone do. An embedder without weights gets no reader.
"""

from __future__ import annotations

import functools
import io
import re
import zlib
from dataclasses import dataclass, replace
from importlib import resources

import numpy as np
import numpy.typing as npt

from ..models import Learning
from .dedupe import DedupeAction, DedupeDecision, DedupePolicy, covers, dates_swapped, denies, merged_text
from .evidence import Comparison, RegionKind, compare, profile
from .ngrams import char_ngrams, view
from .single_valued import single_value_replaced

__all__ = ["CLASSES", "HASH_BUCKETS", "PairReader", "cues", "load_pair_reader", "with_pair_reader", "word_buckets"]

CLASSES = ("create", "new_version", "skip", "merge")
HASH_BUCKETS = 1 << 14
_VALUES = ("same", "conflict", "extra", "fewer", "none", "other")
_WORD = re.compile(r"\w+")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*(?=\S)")
# The rules' own reasons for a create that the reader may not overturn: another scope, another date, a record,
# two texts that say opposite things. (Names are checked on the texts themselves, below.)
_SETTLED = ("another scope", "another date", "records of what was said", "says the opposite")

Floats = npt.NDArray[np.float64]


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.casefold()))


def _bucket(token: str) -> int:
    return zlib.crc32(token.encode()) & (HASH_BUCKETS - 1)


def word_buckets(new: str, old: str) -> list[int]:
    """The words only one text has, signed by which (`+` new, `-` old), whole and as character 4-grams."""
    added, dropped = _words(new) - _words(old), _words(old) - _words(new)
    found: list[int] = []
    for sign, words in (("+", added), ("-", dropped)):
        for word in words:
            found.append(_bucket(sign + word))
            padded = f"<{word}>"
            found.extend(_bucket(sign + padded[i : i + 4]) for i in range(max(1, len(padded) - 3)))
    return found


def cues(new: str, old: str, similarity: float, c: Comparison, linked: bool) -> Floats:
    """What the rules and the embedding say of the pair, as numbers (the order is the weights' order)."""
    pn, po = profile(new), profile(old)
    grams_new = set(char_ngrams(f" {view(new)} ")[0].tolist())
    grams_old = set(char_ngrams(f" {view(old)} ")[0].tolist())
    shared_grams = len(grams_new & grams_old)
    wn, wo = _words(new), _words(old)
    cn, co = set(pn.content), set(po.content)
    found = [
        similarity,
        similarity * similarity,
        c.alignment,
        c.overlap,
        len(c.new_only) / 5,
        len(c.old_only) / 5,
        shared_grams / max(1, len(grams_new | grams_old)),
        len(wn & wo) / max(1, len(wn | wo)),
        min(len(new), len(old)) / max(len(new), len(old), 1),
        bool(c.correction),
        c.strong_correction,
        c.negation_flip,
        bool(c.extra_names),
        bool(c.retraction),
        bool(c.reasserted),
        c.attribute_swap is not None,
        c.subject is not None,
        c.renamed_value,
        len(c.salient_shared) / 5,
        denies(new) != denies(old),
        single_value_replaced(new, old) is not None,
        dates_swapped(new, old),
        bool(pn.markers - po.markers),
        bool(po.markers - pn.markers),
        len(c.regions) / 3,
        len(cn & co) / max(1, len(co)),
        len(cn & co) / max(1, len(cn)),
        shared_grams / max(1, len(grams_old)),
        shared_grams / max(1, len(grams_new)),
        not cn - co,
        not co - cn,
        len(cn - co) / 5,
        len(co - cn) / 5,
        bool(pn.quantities),
        bool(po.quantities),
        bool(pn.dates),
        bool(po.dates),
        pn.negated != po.negated,
        len(new) / 200,
        len(old) / 200,
        linked,
        *(c.values == value for value in _VALUES),
    ]
    return np.asarray(found, dtype=np.float64)


@dataclass(frozen=True)
class PairReader:
    """Weights of one embedding model's reader: cue weights (after standardising with `mean`/`scale`), hashed
    word weights and a bias per class (columns in `CLASSES` order), and the probability each action needs."""

    model: str
    mean: Floats
    scale: Floats
    cue: Floats
    words: Floats
    bias: Floats
    update_threshold: float
    same_threshold: float

    def probabilities(self, new: str, old: str, similarity: float, c: Comparison, linked: bool) -> Floats:
        z = self.bias + ((cues(new, old, similarity, c, linked) - self.mean) / self.scale) @ self.cue
        buckets = np.unique(np.asarray(word_buckets(new, old), dtype=np.int64))
        if buckets.size:
            z = z + self.words[buckets].sum(axis=0)
        e = np.exp(z - z.max())
        return np.asarray(e / e.sum(), dtype=np.float64)

    def second_look(self, text: str, old: Learning, decision: DedupeDecision, policy: DedupePolicy) -> DedupeDecision:
        """The rules' `create` for want of evidence, read again; any other decision is returned as it is."""
        if not open_to_reading(text, old.text, decision):
            return decision
        assert decision.similarity is not None
        p = self.probabilities(text, old.text, decision.similarity, compare(text, old.text), decision.link is not None)
        update, same = float(p[1]), float(p[2] + p[3])
        at = f"#{old.id} (similarity {decision.similarity:.2f})"
        if update >= self.update_threshold and update > same:
            return replace(
                decision,
                action=DedupeAction.NEW_VERSION,
                link=None,
                reason=f"replaces {at}: the pair reader reads a new value of the same thing ({update:.2f})",
            )
        if same >= self.same_threshold and same > update:
            if covers(old.text, text):
                reason = f"already known as {at}: the pair reader reads the same fact ({same:.2f})"
                return replace(decision, action=DedupeAction.SKIP, link=None, reason=reason)
            merged = merged_text(old.text, text)
            if len(merged) > policy.max_merged_chars:
                return decision
            reason = f"adds to {at}: the pair reader reads the same fact ({same:.2f}); both texts kept"
            return replace(decision, action=DedupeAction.MERGE, link=None, reason=reason, text=merged)
        return decision


def open_to_reading(text: str, old: str, decision: DedupeDecision) -> bool:
    """Is this a `create` the rules reached for want of evidence (not for a scope, a date, a record, a denial,
    or a name or label only one text has), between texts of as many claims?"""
    if decision.action is not DedupeAction.CREATE or decision.similarity is None or decision.target is None:
        return False
    if any(reason in decision.reason for reason in _SETTLED):
        return False
    # A learning that holds more claims than the new text (a merge's joined text) is not one fact against one, what
    # the reader was trained on: read, "User loves fantasy. User loves magical worlds." took in "User loves travel".
    if _sentences(old) > _sentences(text):
        return False
    # Another person or another scope is never for the reader, nor a name or label that opens the text or follows
    # its owner ("*Aisha* Nowak drives …", "Kettle *A* …", "the user's *Skoda*"): whose or which thing it is. Names
    # and dates further on are values it weighs ("has a flat white" / "has a black Americano", "on Tuesdays").
    ours, theirs = profile(text), profile(old)
    if ours.relations != theirs.relations or ours.environments != theirs.environments:
        return False
    return not any(
        r.kind is RegionKind.MARKER and r.old and r.new and (r.leading or r.owner_changed)
        for r in compare(text, old).regions
    )


def _sentences(text: str) -> int:
    return len(_SENTENCE_BREAK.split(text.strip()))


@functools.cache
def load_pair_reader(model: str) -> PairReader | None:
    """The shipped reader for an embedding model (the policy's `model`), or None."""
    try:
        data = resources.files("learnloop.capture").joinpath("data/dedupe_pairs.npz").read_bytes()
    except FileNotFoundError:
        return None
    with np.load(io.BytesIO(data)) as npz:
        models = [str(m) for m in npz["models"]]
        key = next((m for m in models if model == m or model.startswith(m + "-")), None)
        if key is None:
            return None
        i = models.index(key)
        return PairReader(
            model=key,
            mean=npz["mean"][i].astype(np.float64),
            scale=npz["scale"][i].astype(np.float64),
            cue=npz["cue"][i].astype(np.float64),
            words=npz["words"][i].astype(np.float64),
            bias=npz["bias"][i].astype(np.float64),
            update_threshold=float(npz["update_threshold"][i]),
            same_threshold=float(npz["same_threshold"][i]),
        )


def with_pair_reader(policy: DedupePolicy) -> DedupePolicy:
    """The policy with its embedder's reader, when one ships and the policy is calibrated for that embedder."""
    if not policy.calibrated or policy.reader is not None:
        return policy
    reader = load_pair_reader(policy.model)
    return policy if reader is None else replace(policy, reader=reader)
