"""BM25 over one partition, in memory: a compressed inverted index plus a small delta of recent documents.

FTS5 ranks by computing bm25() for every matching row, which grows with the partition (about 4 ms at 20k
rows and 20 ms at 100k on the 2-core machine); scoring posting lists with numpy stays well under a
millisecond. Documents live in slots; a removed slot is only marked dead, and the owner compacts slots
now and then, rebuilding the index.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["KeywordIndex", "Matched", "TermCodebook", "held_at"]

_K1 = 1.2
_B = 0.75
_DELTA_REBUILD = 2_000
# Query terms whose weights a keyword index keeps (see `KeywordIndex._term_weights`).
_WEIGHTS_KEPT = 512

IntArray = npt.NDArray[np.int32]
# Postings' slots are numpy's index type: a scatter-add of a query term's weights (`weigh`) with int32 indices
# converts them first and took twice as long (15k postings: 131 against 63 µs); 4 more bytes per posting.
SlotArray = npt.NDArray[np.intp]
# A query's matched terms: each one's postings (slots, ascending) and IDF.
Matched = list[tuple[SlotArray, float]]


class TermCodebook:
    """Stemmed term → integer id, shared by every partition of a store."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}

    def encode(self, terms: Counter[str]) -> tuple[IntArray, IntArray]:
        ids = np.fromiter((self._ids.setdefault(t, len(self._ids)) for t in terms), dtype=np.int32, count=len(terms))
        return ids, np.fromiter(terms.values(), dtype=np.int32, count=len(terms))

    def encode_many(self, documents: Sequence[Counter[str]]) -> tuple[list[IntArray], list[IntArray]]:
        """`encode` for many documents: two arrays in all, cut into per-document views."""
        if not documents:
            return [], []
        ids = self._ids
        flat_ids = [ids.setdefault(t, len(ids)) for terms in documents for t in terms]
        flat_counts = [n for terms in documents for n in terms.values()]
        ends = np.cumsum([len(terms) for terms in documents]).tolist()
        bounds = list(zip([0, *ends[:-1]], ends, strict=True))
        all_ids, all_counts = np.array(flat_ids, dtype=np.int32), np.array(flat_counts, dtype=np.int32)
        # Plain slices (views): `np.split` costs ten times more per piece.
        return [all_ids[a:b] for a, b in bounds], [all_counts[a:b] for a, b in bounds]

    def known(self, terms: Sequence[str]) -> list[int]:
        return [i for t in terms if (i := self._ids.get(t)) is not None]

    def ids(self, terms: Sequence[str]) -> list[int]:
        """The id of each of `terms`, new ones added."""
        ids = self._ids
        return [ids.setdefault(t, len(ids)) for t in terms]

    def strings(self) -> list[str]:
        """Every term, at the index of its id."""
        return list(self._ids)


class KeywordIndex:
    def __init__(self) -> None:
        # Each slot's term ids and frequencies: slots [0, based) flat (row i at base_offsets[i]:[i + 1]), so a
        # loaded partition holds a few arrays rather than two per document; later slots one array each.
        self.base_terms = np.zeros(0, dtype=np.int32)
        self.base_tf = np.zeros(0, dtype=np.int32)
        self.base_offsets = np.zeros(1, dtype=np.int64)
        self.recent_terms: list[IntArray] = []
        self.recent_tf: list[IntArray] = []
        self.doc_len = np.zeros(0, dtype=np.float32)
        self.alive = np.zeros(0, dtype=bool)
        self.df: dict[int, int] = {}
        self.live_docs = 0
        self.total_len = 0
        # Frozen part: CSR over slots [0, frozen) sorted by term.
        self.frozen = 0
        self.term_index: dict[int, tuple[int, int]] = {}
        self.post_slots: SlotArray = np.zeros(0, dtype=np.intp)
        self.post_tf = np.zeros(0, dtype=np.float32)
        # Delta part: slots >= frozen.
        self.delta: dict[int, tuple[list[int], list[int]]] = {}
        # See `_normalisation` (None: to recompute), and the (total length, live documents) it was computed for.
        self._length_norm: npt.NDArray[np.float32] | None = None
        self._norm_of = (0, 0)
        # Per query term, its postings' slots, their BM25 contributions and its IDF, with what they were computed
        # from (`_weights_stamp`): queries repeat terms, and the arithmetic on a common term's postings is most of a
        # keyword search.
        self._weights: dict[int, tuple[SlotArray, npt.NDArray[np.float32], float, tuple[int, ...]]] = {}

    def _renumbered(self) -> None:
        """Postings rebuilt or slots renumbered: every cached length normalisation and weight is dropped. (A
        document added or killed changes only what `_weights_stamp` and `_normalisation` check.)"""
        self._length_norm = None
        self._weights = {}

    @property
    def based(self) -> int:
        return len(self.base_offsets) - 1

    @property
    def slots(self) -> int:
        return self.based + len(self.recent_terms)

    def terms_of(self, slot: int) -> IntArray:
        if slot < self.based:
            return self.base_terms[self.base_offsets[slot] : self.base_offsets[slot + 1]]
        return self.recent_terms[slot - self.based]

    def add(self, terms: IntArray, tf: IntArray) -> int:
        slot = self.slots
        self.recent_terms.append(terms)
        self.recent_tf.append(tf)
        length = int(tf.sum())
        if slot >= len(self.doc_len):
            size = max(64, 2 * len(self.doc_len), slot + 1)
            self.doc_len = np.resize(self.doc_len, size)
            self.alive = np.resize(self.alive, size)
        self.doc_len[slot] = length
        self.alive[slot] = True
        self.live_docs += 1
        self.total_len += length
        for term, count in zip(terms.tolist(), tf.tolist(), strict=True):
            self.df[term] = self.df.get(term, 0) + 1
            slots, tfs = self.delta.setdefault(term, ([], []))
            slots.append(slot)
            tfs.append(count)
        if slot + 1 - self.frozen > max(_DELTA_REBUILD, self.frozen // 10):
            self.freeze()
        return slot

    def add_many(self, terms: Sequence[IntArray], tf: Sequence[IntArray]) -> int:
        """`add` for many documents at once (loading a partition): the index is rebuilt once, with document
        frequencies counted over the whole batch, instead of growing the delta document by document."""
        first = self.slots
        count = len(terms)
        if count == 0:
            return first
        self.recent_terms.extend(terms)
        self.recent_tf.extend(tf)
        sizes = np.fromiter((len(t) for t in terms), dtype=np.int64, count=count)
        flat_tf = np.concatenate(tf) if sizes.sum() else np.zeros(0, dtype=np.int32)
        owner = np.repeat(np.arange(count), sizes)
        lengths = np.bincount(owner, weights=flat_tf, minlength=count).astype(np.int64)
        end = first + count
        if end > len(self.doc_len):
            size = max(64, 2 * len(self.doc_len), end)
            self.doc_len = np.resize(self.doc_len, size)
            self.alive = np.resize(self.alive, size)
        self.doc_len[first:end] = lengths
        self.alive[first:end] = True
        self.live_docs += count
        self.total_len += int(lengths.sum())
        if flat_tf.size:
            unique, frequency = np.unique(np.concatenate(terms), return_counts=True)
            df = self.df
            for term, n in zip(unique.tolist(), frequency.tolist(), strict=True):
                df[term] = df.get(term, 0) + n
        self.freeze()
        return first

    def restore(self, terms: IntArray, tf: IntArray, sizes: npt.NDArray[np.int64]) -> None:
        """Fill an empty index with documents given flat (a snapshot's arrays): document `i` holds the next
        `sizes[i]` entries of `terms` and `tf`."""
        count = len(sizes)
        self.base_terms, self.base_tf = terms, tf
        self.base_offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        self.recent_terms, self.recent_tf = [], []
        owner = np.repeat(np.arange(count, dtype=np.intp), sizes)
        lengths = np.bincount(owner, weights=tf, minlength=count).astype(np.int64)
        self.doc_len = lengths.astype(np.float32)
        self.alive = np.ones(count, dtype=bool)
        self.live_docs = count
        self.total_len = int(lengths.sum())
        frequency = np.bincount(terms) if terms.size else np.zeros(0, dtype=np.int64)
        present = np.flatnonzero(frequency)
        self.df = dict(zip(present.tolist(), frequency[present].tolist(), strict=True))
        self._freeze_flat(terms, tf, owner)

    def documents(self, slots: npt.NDArray[np.int64]) -> tuple[IntArray, IntArray, npt.NDArray[np.int64]]:
        """The term ids and frequencies of `slots`, flat, and how many each holds (see `restore`)."""
        self._fold()
        starts = self.base_offsets[slots]
        sizes = self.base_offsets[slots + 1] - starts
        ends = np.cumsum(sizes)
        gather = np.repeat(starts - (ends - sizes), sizes) + np.arange(int(ends[-1]) if len(ends) else 0)
        return self.base_terms[gather], self.base_tf[gather], sizes

    def kill(self, slot: int) -> None:
        if not self.alive[slot]:
            return
        self.alive[slot] = False
        self.live_docs -= 1
        self.total_len -= int(self.doc_len[slot])
        for term in self.terms_of(slot).tolist():
            self.df[term] -= 1

    def _fold(self) -> None:
        """Move the recent slots' arrays into the flat ones."""
        if not self.recent_terms:
            return
        sizes = np.fromiter((len(t) for t in self.recent_terms), dtype=np.int64, count=len(self.recent_terms))
        self.base_terms = np.concatenate((self.base_terms, *self.recent_terms)).astype(np.int32, copy=False)
        self.base_tf = np.concatenate((self.base_tf, *self.recent_tf)).astype(np.int32, copy=False)
        self.base_offsets = np.concatenate((self.base_offsets, self.base_offsets[-1] + np.cumsum(sizes)))
        self.recent_terms, self.recent_tf = [], []

    def freeze(self) -> None:
        """Fold every slot into the compressed index (dead slots stay, masked, until compaction)."""
        if self.slots == 0:
            return
        self._fold()
        slots = np.repeat(np.arange(self.based, dtype=np.intp), np.diff(self.base_offsets))
        self._freeze_flat(self.base_terms, self.base_tf, slots)

    def _freeze_flat(self, terms: IntArray, tf: IntArray, slots: SlotArray) -> None:
        """`freeze` from every slot's (term, frequency) entries, flat, with the slot of each."""
        self._renumbered()
        tfs = tf.astype(np.float32)
        order = _stable_order(terms)
        terms, self.post_slots, self.post_tf = terms[order], slots[order].astype(np.intp, copy=False), tfs[order]
        boundaries = np.flatnonzero(np.diff(terms)) + 1
        starts = np.concatenate(([0], boundaries)).astype(np.int64)
        ends = np.concatenate((boundaries, [len(terms)])).tolist()
        spans = zip(starts.tolist(), ends, strict=True)
        self.term_index = dict(zip(terms[starts].tolist(), spans, strict=True)) if len(terms) else {}
        self.frozen = self.slots
        self.delta = {}

    def compact(self, keep: IntArray) -> None:
        """Keep only the slots in `keep` (in that order): they become slots 0..len(keep)-1."""
        terms, tf, sizes = self.documents(keep.astype(np.int64))
        self.base_terms, self.base_tf = terms, tf
        self.base_offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        self.doc_len = self.doc_len[keep].copy()
        self._renumbered()
        self.alive = np.ones(len(keep), dtype=bool)
        self.freeze()

    def postings(self, term: int) -> tuple[SlotArray, npt.NDArray[np.float32]]:
        span = self.term_index.get(term)
        frozen_slots = self.post_slots[span[0] : span[1]] if span else self.post_slots[:0]
        frozen_tf = self.post_tf[span[0] : span[1]] if span else self.post_tf[:0]
        recent = self.delta.get(term)
        if recent is None:
            return frozen_slots, frozen_tf
        return (
            np.concatenate((frozen_slots, np.asarray(recent[0], dtype=np.intp))),
            np.concatenate((frozen_tf, np.asarray(recent[1], dtype=np.float32))),
        )

    def _normalisation(self) -> npt.NDArray[np.float32]:
        """BM25's length normalisation of every slot, k1 · (1 − b + b · length / average length): computed once
        per change of the average rather than per term and query, with the same float32 operations as on a
        term's postings, so scores stay bit for bit the same. Element by element: slots added since under the
        same average (a learning's status changed: its old slot killed, the same text in a new one) are
        computed alone and appended."""
        of = (self.total_len, self.live_docs)
        norm, slots = self._length_norm, self.slots
        if norm is None or self._norm_of != of:
            norm = _K1 * (1 - _B + _B * self.doc_len[:slots] / (self.total_len / self.live_docs))
        elif len(norm) < slots:
            added = _K1 * (1 - _B + _B * self.doc_len[len(norm) : slots] / (self.total_len / self.live_docs))
            norm = np.concatenate((norm, added))
        self._length_norm, self._norm_of = norm, of
        return norm

    def idf(self, term: int) -> float:
        df = self.df.get(term, 0)
        return math.log(1 + (self.live_docs - df + 0.5) / (df + 0.5))

    def idf_weights(self, terms: Sequence[int]) -> dict[int, float]:
        """BM25's IDF of each distinct term."""
        return {term: self.idf(term) for term in set(terms)}

    def held_weight(self, terms: Sequence[int]) -> npt.NDArray[np.float64]:
        """Per slot, the summed IDF of the distinct `terms` it holds (what `coverage` divides), from the postings:
        a few array additions per query term instead of a walk over every candidate's terms."""
        held = np.zeros(self.slots, dtype=np.float64)
        for term in set(terms):
            if self.df.get(term, 0) > 0:
                slots, _ = self.postings(term)
                held[slots] += self.idf(term)
        return held

    def max_idf(self) -> float:
        """The IDF of a term no document holds."""
        return math.log(1 + (self.live_docs + 0.5) / 0.5)

    def scores(self, query_terms: Sequence[int]) -> npt.NDArray[np.float32] | None:
        """BM25 of every slot for the query (zero where no term matches), or None when nothing matches."""
        return self.weigh(query_terms)[0]

    def weigh(self, query_terms: Sequence[int]) -> tuple[npt.NDArray[np.float32] | None, Matched]:
        """`scores`, and the postings and IDF of each distinct query term some live document holds (in the order
        the scores added them; see `held_at`)."""
        if self.live_docs == 0:
            return None, []
        scores: npt.NDArray[np.float32] | None = None
        matched: Matched = []
        for term in set(query_terms):
            weights = self._term_weights(term)
            if weights is None:
                continue
            slots, contributions, idf, _ = weights
            if scores is None:
                scores = np.zeros(self.slots, dtype=np.float32)
            # A term's postings name each slot once, so plain fancy-index addition is exact.
            scores[slots] += contributions
            matched.append((slots, idf))
        return scores, matched

    def _weights_stamp(self, term: int, df: int) -> tuple[int, ...]:
        """What a term's weights are computed from, besides slots' lengths (which never change in a slot): the
        live documents and their total length (the IDF and the average length), its document frequency, and how
        many postings it has beyond the frozen part (postings are only appended to between rebuilds). A status
        change kills a slot and adds the same text in a new one: every other term's stamp is as before."""
        recent = self.delta.get(term)
        return (self.live_docs, self.total_len, df, 0 if recent is None else len(recent[0]))

    def _term_weights(self, term: int) -> tuple[SlotArray, npt.NDArray[np.float32], float, tuple[int, ...]] | None:
        """A term's postings with each one's BM25 contribution, and its IDF (None: no live document holds it)."""
        df = self.df.get(term, 0)
        if df <= 0:
            return None
        stamp = self._weights_stamp(term, df)
        found = self._weights.get(term)
        if found is not None and found[3] == stamp:
            return found
        if found is not None and found[3][:3] == stamp[:3] and found[3][3] < stamp[3]:
            # Same IDF and average length, postings appended since (a moved document holding the term): only the
            # new ones are weighed, each as it would be among all of them.
            kept_slots, kept, idf, _ = found
            recent_slots, recent_tf = self.delta[term]
            added = np.asarray(recent_slots[found[3][3] :], dtype=np.intp)
            added_tf = np.asarray(recent_tf[found[3][3] :], dtype=np.float32)
            slots = np.concatenate((kept_slots, added))
            contributions = np.concatenate((kept, self._contributions(idf, added, added_tf)))
        else:
            idf = math.log(1 + (self.live_docs - df + 0.5) / (df + 0.5))
            slots, tf = self.postings(term)
            contributions = self._contributions(idf, slots, tf)
        if len(self._weights) >= _WEIGHTS_KEPT:
            self._weights = {}
        found = self._weights[term] = (slots, contributions, idf, stamp)
        return found

    def _contributions(self, idf: float, slots: SlotArray, tf: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """BM25 contributions of a term with this IDF at postings `slots` of frequencies `tf`."""
        norm = tf + self._normalisation()[slots]
        return (idf * tf * (_K1 + 1) / norm).astype(np.float32, copy=False)


def _stable_order(terms: IntArray) -> npt.NDArray[np.intp]:
    """`np.argsort(terms, kind="stable")`, by radix: numpy sorts 16-bit keys in linear time, so a vocabulary
    under 65,536 terms takes one pass and a larger one two (low half, then high half). A 100k-learning partition
    holds over a million postings: this is most of what loading its keyword index costs."""
    if terms.size == 0 or int(terms.max()) < 1 << 16:
        return np.argsort(terms.astype(np.uint16), kind="stable")
    low = np.argsort((terms & 0xFFFF).astype(np.uint16), kind="stable")
    return low[np.argsort((terms[low] >> 16).astype(np.uint16), kind="stable")]


def held_at(matched: Matched, slots: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """`KeywordIndex.held_weight` at `slots` only, from a query's matched postings (`weigh`): a binary search of
    each term's postings for the few hits rather than a pass over every slot. The same IDFs are added in the
    same order, so the sums are the same to the bit."""
    held = np.zeros(len(slots), dtype=np.float64)
    # Searched as the postings' own dtype: a needle of another would have numpy copy every posting list first.
    needles = slots.astype(np.intp, copy=False)
    for postings, idf in matched:
        if len(postings):
            # A needle past the last posting is compared with the last one ("clip"): it does not match.
            held[postings.take(postings.searchsorted(needles), mode="clip") == needles] += idf
    return held
