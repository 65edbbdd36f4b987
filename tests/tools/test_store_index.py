"""The in-memory routing index of the SQLite backend: the cell shortcut agrees with the exact scan."""

from __future__ import annotations

import numpy as np

from learnloop.stores.sqlite.tools_index import CatalogRow, PairRow, ToolIndex

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
    agree = 0
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
    assert cells.cells is not None and cells.cells.count == 54
    assert agree >= 196  # at most 2% of top-5 lists differ at all


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
