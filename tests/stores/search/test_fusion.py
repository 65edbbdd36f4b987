"""The join of keyword hits to vector hits (`fusion._positions`): the same answer as a dict of first positions."""

from __future__ import annotations

import numpy as np

from learnloop.stores.search.fusion import _positions


def _by_dict(haystack: list[int], needles: list[int]) -> list[int]:
    first: dict[int, int] = {}
    for index, value in enumerate(haystack):
        first.setdefault(value, index)
    return [first.get(n, -1) for n in needles]


def test_positions_are_first_occurrences_or_minus_one() -> None:
    rng = np.random.default_rng(7)
    for size in (1, 2, 5, 50, 120):
        haystack = rng.integers(0, size * 2, size=size).astype(np.int64)  # repeats included
        needles = rng.integers(0, size * 3, size=size + 3).astype(np.int64)  # misses past the end too
        assert _positions(haystack, needles).tolist() == _by_dict(haystack.tolist(), needles.tolist())


def test_positions_of_keys_above_32_bits() -> None:
    haystack = np.array([(1 << 40) | 5, 5, (2 << 40) | 5], dtype=np.int64)
    needles = np.array([5, (2 << 40) | 5, (3 << 40) | 5], dtype=np.int64)
    assert _positions(haystack, needles).tolist() == [1, 2, -1]
