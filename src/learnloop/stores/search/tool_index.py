"""One tenant's routing data in memory: catalog vectors and keywords, learned query→tool pair vectors.

The backend holds every row; this index is loaded on first use and kept in step with its change log
(SQLite: `tool_changes`, written by triggers), so writes of other processes, and deletions made by
forgetting a user, are seen on the next call. It lives on the store's executor thread, like the learnings
partitions, so it needs no lock.
Ranking a query is two matrix-vector products (catalog, learned pairs) and one BM25 pass. The pairs also
say how familiar the query is to each used tool (`tools.base.Familiarity`): its nearest pair's similarity
and how many pairs it has, counted per tool as pairs come and go.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ...terms import index_terms, stem
from ...tools.base import Familiarity
from ...tools.catalog import keyword_document
from ...tools.decay import HALF_LIFE_DAYS, Knowledge
from .keywords import KeywordIndex, TermCodebook
from .tool_cells import Cells

__all__ = ["CatalogRow", "Hit", "PairRow", "ToolIndex"]

Vectors = npt.NDArray[np.float32]
_DAY = 86_400.0
# From this many learned pairs on, a route reads only the pairs in the cells nearest its query.
CELLS_FROM = 4096
# Cells read per query: an eighth of them, at least 8.
_PROBE_SHARE = 8
_MIN_PROBES = 8


@dataclass(frozen=True)
class CatalogRow:
    name: str
    server: str
    description: str
    input_schema: dict[str, Any]
    vector: Vectors | None


@dataclass(frozen=True)
class PairRow:
    id: int
    owner: str
    tool: str
    query_hash: str
    vector: Vectors
    confidence: float
    uses: int
    last_used_at: float


@dataclass(frozen=True)
class Hit:
    position: int
    description_similarity: float
    keyword: float
    learned: float
    learned_uses: int
    unfamiliar: float = 0.0


class ToolIndex:
    def __init__(self, dimension: int, cells_from: int = CELLS_FROM) -> None:
        self.dimension = dimension
        self.cells_from = cells_from
        self.cells: Cells | None = None
        self._cells_trained_on = 0
        self.watermark = 0
        self.terms = TermCodebook()
        # catalog, by position
        self.names: list[str] = []
        self.rows: list[CatalogRow] = []
        self.position: dict[str, int] = {}
        self.vectors = np.zeros((0, dimension), dtype=np.float32)
        self.keywords = KeywordIndex()
        # learned pairs, by row (rows are swapped on removal, so the arrays stay dense)
        self.pair_count = 0
        self.pair_ids = np.zeros(0, dtype=np.int64)
        self.pair_vectors = np.zeros((0, dimension), dtype=np.float32)
        self.pair_tool = np.zeros(0, dtype=np.int32)
        self.pair_owner = np.zeros(0, dtype=np.int32)
        self.pair_confidence = np.zeros(0, dtype=np.float32)
        self.pair_uses = np.zeros(0, dtype=np.int32)
        self.pair_last = np.zeros(0, dtype=np.float64)
        self.pair_cell = np.zeros(0, dtype=np.int32)
        self.pair_row: dict[int, int] = {}
        self.pair_hash: dict[int, str] = {}
        self.pair_by_key: dict[tuple[int, int, str], int] = {}  # (owner, tool, query hash) -> pair id
        self.tool_codes: dict[str, int] = {}
        self.owner_codes: dict[str, int] = {}
        self.code_position = np.zeros(0, dtype=np.int32)  # tool code -> catalog position, -1 if absent
        self.code_pairs = np.zeros(0, dtype=np.int64)  # tool code -> learned pairs of every user
        # Bumped by every change to the catalog or the pairs; keys `_uses_cache` (see `_known_uses`).
        self._version = 0
        self._uses_cache: tuple[int, float, npt.NDArray[np.float32]] | None = None

    # -- catalog -------------------------------------------------------------------------------------------

    def load_catalog(self, rows: Sequence[CatalogRow]) -> None:
        self._version += 1
        self.rows = list(rows)
        self.names = [r.name for r in rows]
        self.position = {name: i for i, name in enumerate(self.names)}
        self.vectors = np.zeros((len(rows), self.dimension), dtype=np.float32)
        for i, row in enumerate(rows):
            if row.vector is not None:
                self.vectors[i] = row.vector
        self.keywords = KeywordIndex()
        for row in rows:
            ids, counts = self.terms.encode(index_terms(keyword_document(row.name, row.description)))
            self.keywords.add(ids, counts)
        self.keywords.freeze()
        self._map_codes()

    def _tool_code(self, tool: str) -> int:
        code = self.tool_codes.get(tool)
        if code is None:
            code = self.tool_codes[tool] = len(self.tool_codes)
            self.code_pairs = np.append(self.code_pairs, np.int64(0))
            self._map_codes()
        return code

    def owner_code(self, owner: str) -> int:
        return self.owner_codes.setdefault(owner, len(self.owner_codes))

    def _map_codes(self) -> None:
        self.code_position = np.full(len(self.tool_codes), -1, dtype=np.int32)
        for tool, code in self.tool_codes.items():
            self.code_position[code] = self.position.get(tool, -1)

    # -- learned pairs -------------------------------------------------------------------------------------

    def _reserve(self, extra: int) -> None:
        need = self.pair_count + extra
        if need <= len(self.pair_ids):
            return
        capacity = max(need, 2 * len(self.pair_ids), 256)
        for name in (
            "pair_ids",
            "pair_vectors",
            "pair_tool",
            "pair_owner",
            "pair_confidence",
            "pair_uses",
            "pair_last",
            "pair_cell",
        ):
            array = getattr(self, name)
            grown = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
            grown[: self.pair_count] = array[: self.pair_count]
            setattr(self, name, grown)

    def upsert_pair(self, pair: PairRow) -> None:
        self._version += 1
        row = self.pair_row.get(pair.id)
        if row is None:
            self._reserve(1)
            row = self.pair_count
            self.pair_count += 1
            self.pair_row[pair.id] = row
        else:
            old = (int(self.pair_owner[row]), int(self.pair_tool[row]), self.pair_hash[pair.id])
            self.pair_by_key.pop(old, None)
            self.code_pairs[old[1]] -= 1
        owner, tool = self.owner_code(pair.owner), self._tool_code(pair.tool)
        self.code_pairs[tool] += 1
        self.pair_ids[row] = pair.id
        self.pair_vectors[row] = pair.vector
        self.pair_tool[row] = tool
        self.pair_owner[row] = owner
        self.pair_confidence[row] = pair.confidence
        self.pair_uses[row] = pair.uses
        self.pair_last[row] = pair.last_used_at
        self.pair_hash[pair.id] = pair.query_hash
        self.pair_by_key[(owner, tool, pair.query_hash)] = pair.id
        if self.cells is not None:
            self.pair_cell[row] = self.cells.assign(pair.vector.reshape(1, -1))[0]

    def remove_pair(self, pair_id: int) -> None:
        row = self.pair_row.pop(pair_id, None)
        if row is None:
            return
        self._version += 1
        key = (int(self.pair_owner[row]), int(self.pair_tool[row]), self.pair_hash.pop(pair_id))
        self.pair_by_key.pop(key, None)
        self.code_pairs[key[1]] -= 1
        last = self.pair_count - 1
        if row != last:
            for name in (
                "pair_ids",
                "pair_vectors",
                "pair_tool",
                "pair_owner",
                "pair_confidence",
                "pair_uses",
                "pair_last",
                "pair_cell",
            ):
                array = getattr(self, name)
                array[row] = array[last]
            self.pair_row[int(self.pair_ids[row])] = row
        self.pair_count = last

    def _pair_similarities(self, vector: Vectors, floor: float) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]:
        """Rows of the pairs at least `floor` similar to `vector`, and their similarities."""
        m = self.pair_count
        if m < self.cells_from:
            sims = self.pair_vectors[:m] @ vector
            rows = np.flatnonzero(sims >= floor)
            return rows, sims[rows]
        if self.cells is None or m >= 2 * self._cells_trained_on:
            # Retrained as the pairs double, so cells stay about √n pairs each.
            self.cells = Cells.train(self.pair_vectors[:m])
            self.pair_cell[:m] = self.cells.assign(self.pair_vectors[:m])
            self._cells_trained_on = m
        probes = self.cells.nearest(vector, max(_MIN_PROBES, self.cells.count // _PROBE_SHARE))
        candidates = np.flatnonzero(np.isin(self.pair_cell[:m], probes))
        sims = self.pair_vectors[candidates] @ vector
        keep = sims >= floor
        return candidates[keep], sims[keep]

    def pair_for(self, owner: str, tool: str, query_hash: str) -> int | None:
        owner_code, tool_code = self.owner_codes.get(owner), self.tool_codes.get(tool)
        if owner_code is None or tool_code is None:
            return None
        return self.pair_by_key.get((owner_code, tool_code, query_hash))

    def _rows_of(self, owner: str, tool: str) -> npt.NDArray[np.intp]:
        owner_code, tool_code = self.owner_codes.get(owner), self.tool_codes.get(tool)
        if owner_code is None or tool_code is None or self.pair_count == 0:
            return np.zeros(0, dtype=np.intp)
        n = self.pair_count
        return np.flatnonzero((self.pair_owner[:n] == owner_code) & (self.pair_tool[:n] == tool_code))

    def nearest_pair(self, owner: str, tool: str, vector: Vectors) -> tuple[int, float] | None:
        """The most similar stored pair of this user and tool: (pair id, cosine similarity)."""
        rows = self._rows_of(owner, tool)
        if rows.size == 0:
            return None
        sims = self.pair_vectors[rows] @ vector
        best = int(np.argmax(sims))
        return int(self.pair_ids[rows[best]]), float(sims[best])

    def weakest_pairs(self, owner: str, tool: str, keep: int, now: float) -> list[int]:
        """Ids of the pairs beyond the `keep` strongest (decayed confidence) of this user and tool."""
        rows = self._rows_of(owner, tool)
        if rows.size <= keep:
            return []
        weights = self._weights(rows, now)
        order = np.argsort(weights, kind="stable")
        return [int(self.pair_ids[rows[i]]) for i in order[: rows.size - keep]]

    def _weights(self, rows: npt.NDArray[np.intp], now: float) -> npt.NDArray[np.float64]:
        age_days = np.maximum(0.0, (now - self.pair_last[rows]) / _DAY)
        half_life = HALF_LIFE_DAYS[Knowledge.USER_PATTERN]
        return self.pair_confidence[rows].astype(np.float64) * np.power(0.5, age_days / half_life)

    # -- ranking -------------------------------------------------------------------------------------------

    def query_term_ids(self, terms: Sequence[str]) -> list[int]:
        return self.terms.known([stem(t) for t in terms])

    def hits(
        self,
        vector: Vectors | None,
        terms: Sequence[str],
        *,
        weights: tuple[float, float, float],
        owners: Sequence[str] | None,
        now: float,
        floor: float,
        pool: int,
        use_learned: bool,
        support: int = 3,
        familiarity: Familiarity | None = None,
    ) -> list[Hit]:
        """The `pool` tools with the best fused score (description, keyword, learned `weights`, minus the
        weighted unfamiliarity), best first. `owners` limits learned pairs to those users (None: every user
        of the tenant)."""
        n = len(self.names)
        if n == 0:
            return []
        description = np.zeros(n, dtype=np.float32) if vector is None else self.vectors @ vector
        fused = description * np.float32(weights[0])
        keyword: npt.NDArray[np.float32] | None = None
        term_ids = self.query_term_ids(terms)
        if term_ids:
            scores = self.keywords.scores(term_ids)
            if scores is not None and (top := float(scores[:n].max())) > 0:
                keyword = scores[:n] * np.float32(1.0 / top)
                fused += np.float32(weights[1]) * keyword
        learned: npt.NDArray[np.float64] | None = None
        uses: npt.NDArray[np.int64] | None = None
        unfamiliar: npt.NDArray[np.float32] | None = None
        if use_learned and vector is not None and self.pair_count:
            familiar = familiarity if familiarity is not None and familiarity.weight > 0 else None
            lowest = floor if familiar is None else min(floor, familiar.similarity - familiar.margin)
            rows, sims = self._pair_similarities(vector, lowest)
            positions = self.code_position[self.pair_tool[rows]]
            keep = positions >= 0
            codes: npt.NDArray[np.int32] | None = None
            if owners is not None:
                codes = np.asarray([self.owner_codes[o] for o in owners if o in self.owner_codes], dtype=np.int32)
                keep &= np.isin(self.pair_owner[rows], codes)
            rows, sims, positions = rows[keep], sims[keep], positions[keep]
            if familiar is not None:
                unfamiliar = self._unfamiliar(positions, sims, codes, n, familiar)
                fused -= np.float32(familiar.weight) * unfamiliar
            above = sims >= floor
            rows, sims, positions = rows[above], sims[above], positions[above]
            if rows.size:
                scaled = (sims - floor) / max(1e-6, 1.0 - floor)
                values = self._weights(rows, now) * scaled
                learned = _support_mean(positions, values, n, support)
                uses = np.zeros(n, dtype=np.int64)
                np.add.at(uses, positions, self.pair_uses[rows])
                fused += (weights[2] * learned).astype(np.float32)
        k = min(pool, n)
        chosen = np.argpartition(-fused, k - 1)[:k] if k < n else np.arange(n)
        chosen = chosen[np.argsort(-fused[chosen], kind="stable")]
        return [
            Hit(
                int(i),
                float(description[i]),
                0.0 if keyword is None else float(keyword[i]),
                0.0 if learned is None else float(learned[i]),
                0 if uses is None else int(uses[i]),
                0.0 if unfamiliar is None else float(unfamiliar[i]),
            )
            for i in chosen
        ]

    def _unfamiliar(
        self,
        positions: npt.NDArray[np.int32],
        sims: npt.NDArray[np.float32],
        owner_codes: npt.NDArray[np.int32] | None,
        n: int,
        familiar: Familiarity,
    ) -> npt.NDArray[np.float32]:
        """Per catalog position, how far the query lies from the tool's nearest pair (ramp 0..1 below
        `familiar.similarity`), times pairs / (pairs + prior). `positions` and `sims` are the candidate
        pairs (those of `owner_codes` only, when given); a used tool none of whose pairs is among them is
        as unfamiliar as it gets. Beyond `cells_from` pairs only the probed cells are candidates, so a
        faraway cell's pair counts as far, which it almost always is."""
        unfamiliar = self._known_uses(owner_codes, n, familiar.prior).copy()
        if positions.size:
            # Only the few tools with a pair near the query leave the ramp's floor: work on those alone.
            order = np.argsort(positions, kind="stable")
            grouped = positions[order]
            starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
            nearest = np.maximum.reduceat(sims[order], starts)
            ramp = np.clip((familiar.similarity - nearest) / max(1e-6, familiar.margin), 0.0, 1.0)
            unfamiliar[grouped[starts]] *= ramp.astype(np.float32)
        return unfamiliar

    def _known_uses(self, owner_codes: npt.NDArray[np.int32] | None, n: int, prior: float) -> npt.NDArray[np.float32]:
        """Per catalog position, pairs / (pairs + prior): how well the tool's uses are known. For every user
        it only changes with the pairs or the catalog, so it is kept until they do."""
        if owner_codes is None and self._uses_cache is not None and self._uses_cache[:2] == (self._version, prior):
            return self._uses_cache[2]
        if owner_codes is None:
            per_code = self.code_pairs
        else:
            m = self.pair_count
            mine = np.isin(self.pair_owner[:m], owner_codes)
            per_code = np.bincount(self.pair_tool[:m][mine], minlength=len(self.tool_codes))
        counts = np.zeros(n, dtype=np.float32)
        known = self.code_position >= 0
        counts[self.code_position[known]] = per_code[known]
        known_uses = counts / (counts + np.float32(max(1e-6, prior)))
        if owner_codes is None:
            self._uses_cache = (self._version, prior, known_uses)
        return known_uses


def _support_mean(
    positions: npt.NDArray[np.int32], values: npt.NDArray[np.float64], n: int, support: int
) -> npt.NDArray[np.float64]:
    """Per tool, the mean of its `support` best values (missing ones count as 0): one similar past query
    gives a tool a third of the evidence three consistent ones give."""
    order = np.lexsort((-values, positions))
    grouped, ranked = positions[order], values[order]
    starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
    sizes = np.diff(np.r_[starts, grouped.size])
    rank_in_group = np.arange(grouped.size) - np.repeat(starts, sizes)
    keep = rank_in_group < support
    learned = np.zeros(n, dtype=np.float64)
    np.add.at(learned, grouped[keep], ranked[keep] / support)
    return learned
