"""The in-memory routing index of the SQLite backend: the cell shortcut agrees with the exact scan; how
unfamiliar a query is to each used tool."""

from __future__ import annotations

import numpy as np

from learnloop.stores.search.tool_index import CatalogRow, PairRow, ToolIndex
from learnloop.tools.base import Familiarity

DIM = 32


def unit(rng: np.random.Generator, count: int) -> np.ndarray:
    vectors = rng.standard_normal((count, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def near(rng: np.random.Generator, vector: np.ndarray, noise: float) -> np.ndarray:
    moved = vector + noise * rng.standard_normal(DIM).astype(np.float32)
    return (moved / np.linalg.norm(moved)).astype(np.float32)


def test_cells_find_the_same_learned_evidence_as_a_full_scan() -> None:
    rng = np.random.default_rng(3)
    tools, topics = unit(rng, 300), unit(rng, 40)
    exact, cells = ToolIndex(DIM, cells_from=10**9), ToolIndex(DIM, cells_from=500)
    for index in (exact, cells):
        index.load_catalog([CatalogRow(f"t{i}", "", f"tool {i}", {}, v) for i, v in enumerate(tools)])
    for pair_id in range(3000):
        topic = pair_id % 40
        pair = PairRow(pair_id, "u", f"t{topic * 7}", f"h{pair_id}", near(rng, topics[topic], 0.3), 0.9, 1, 0.0)
        exact.upsert_pair(pair)
        cells.upsert_pair(pair)
    agree = agree_familiar = top_familiar = 0
    for n in range(200):
        query = near(rng, topics[n % 40], 0.3)
        options = {
            "weights": (1.0, 0.1, 1.0),
            "owners": None,
            "now": 0.0,
            "floor": 0.55,
            "pool": 5,
            "use_learned": True,
        }
        full = exact.hits(query, [], **options)  # type: ignore[arg-type]
        fast = cells.hits(query, [], **options)  # type: ignore[arg-type]
        agree += [h.position for h in full] == [h.position for h in fast]
        # Unfamiliarity reads a pair in a cell not probed as far from the query: on random vectors the lists
        # agree less often (on MetaTool, bench/tool_learning.py's figures move by 0.2 points at most).
        full = exact.hits(query, [], familiarity=Familiarity(), **options)  # type: ignore[arg-type]
        fast = cells.hits(query, [], familiarity=Familiarity(), **options)  # type: ignore[arg-type]
        agree_familiar += [h.position for h in full] == [h.position for h in fast]
        top_familiar += full[0].position == fast[0].position
    assert cells.cells is not None and cells.cells.count == 54
    assert agree >= 196  # at most 2% of top-5 lists differ at all
    assert agree_familiar >= 170 and top_familiar >= 194


def test_removed_pairs_leave_no_evidence_behind() -> None:
    index = ToolIndex(DIM, cells_from=2)
    vector = unit(np.random.default_rng(1), 1)[0]
    index.load_catalog([CatalogRow("a", "", "a", {}, vector)])
    for pair_id in range(3):
        index.upsert_pair(PairRow(pair_id, "u", "a", f"h{pair_id}", vector, 0.9, 1, 0.0))
    options = {"weights": (1.0, 0.1, 1.0), "owners": None, "now": 0.0, "floor": 0.55, "pool": 1, "use_learned": True}
    assert index.hits(vector, [], **options)[0].learned > 0  # type: ignore[arg-type]
    for pair_id in range(3):
        index.remove_pair(pair_id)
    assert index.hits(vector, [], **options)[0].learned == 0.0  # type: ignore[arg-type]
    assert index.pair_for("u", "a", "h0") is None


def at_similarity(cosine: float, axis: int = 1) -> np.ndarray:
    """A unit vector whose cosine with the first basis vector is `cosine`."""
    vector = np.zeros(DIM, dtype=np.float32)
    vector[0], vector[axis] = cosine, np.sqrt(1.0 - cosine**2)
    return vector


def test_unfamiliarity_grows_with_distance_from_every_use_and_with_the_number_of_uses() -> None:
    familiarity = Familiarity(weight=0.2, similarity=0.45, margin=0.1, prior=5.0)
    index = ToolIndex(DIM)
    index.load_catalog([CatalogRow(name, "", name, {}, at_similarity(0.3, 2 + i)) for i, name in enumerate("abcd")])
    pairs = [("a", "u", 0.30)] * 5 + [("b", "v", 0.40), ("d", "u", 0.20), ("d", "u", 0.90)]
    for pair_id, (tool, owner, cosine) in enumerate(pairs):
        index.upsert_pair(PairRow(pair_id, owner, tool, f"h{pair_id}", at_similarity(cosine), 0.9, 1, 0.0))
    query = at_similarity(1.0)
    options = {"weights": (1.0, 0.1, 1.0), "now": 0.0, "floor": 0.5, "pool": 4, "use_learned": True}

    def unfamiliar(owners: list[str] | None) -> dict[str, float]:
        hits = index.hits(query, [], owners=owners, familiarity=familiarity, **options)  # type: ignore[arg-type]
        return {index.names[h.position]: round(h.unfamiliar, 4) for h in hits}

    # a: 5 uses, all far (ramp 1) → 5/10; b: 1 use, half-way down the ramp → 0.5 × 1/6; c: never used;
    # d: one use close to the query, so the query is familiar however far its other use is.
    assert unfamiliar(None) == {"a": 0.5, "b": 0.0833, "c": 0.0, "d": 0.0}
    assert unfamiliar(["", "v"]) == {"a": 0.0, "b": 0.0833, "c": 0.0, "d": 0.0}  # only these users' pairs count
    index.remove_pair(0)
    index.remove_pair(1)
    index.upsert_pair(PairRow(2, "u", "a", "h2", at_similarity(0.30), 0.9, 2, 0.0))  # reinforced: still one pair
    assert unfamiliar(None)["a"] == round(3 / 8, 4)
    hits = index.hits(query, [], owners=None, **options)  # type: ignore[arg-type]
    assert all(h.unfamiliar == 0.0 for h in hits)  # no familiarity asked for: none computed
    fused = {index.names[h.position]: h for h in index.hits(query, [], owners=None, familiarity=familiarity, **options)}  # type: ignore[arg-type]
    assert list(fused)[-1] == "a"  # the same description as b and c, but demoted
