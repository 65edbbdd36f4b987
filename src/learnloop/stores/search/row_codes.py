"""What a partition stores per row besides its vector: small integer codes for filtering, SimHash, BM25
terms and the columns ranking reads."""

from __future__ import annotations

from dataclasses import dataclass

from ...models import Status
from .keywords import IntArray

__all__ = ["STATUS_CODES", "Codebook", "RowCodes"]

STATUS_CODES = {Status.CANDIDATE: 1, Status.VERIFIED: 2}


class Codebook:
    """Interns strings (categories, namespaces, types) to small integers for vectorised filtering."""

    def __init__(self) -> None:
        self._codes: dict[str, int] = {}

    def code(self, value: str | None) -> int:
        if value is None:
            return -1
        return self._codes.setdefault(value, len(self._codes))

    def known(self, value: str) -> int | None:
        return self._codes.get(value)

    def strings(self) -> list[str]:
        """Every interned string, at the index of its code."""
        return list(self._codes)


@dataclass(frozen=True)
class RowCodes:
    status: int
    category: int
    namespace: int
    type: int
    simhash: int
    terms: IntArray
    term_counts: IntArray
    hits: int
    updated_at: float
    tags: tuple[str, ...]
    # When it was said and the span its words name (NaN when none): retrieval favours what a question's
    # time expression points at.
    said_at: float = float("nan")
    event_at: float = float("nan")
    event_until: float = float("nan")
