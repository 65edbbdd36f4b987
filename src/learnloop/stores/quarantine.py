"""The storage contract of the write gate's quarantine (`learnloop.capture.quarantine`): which learnings a
recheck put aside, and which gate version last checked the whole database. Moving a learning's status is the
governed write's job; this store keeps the list. A backend offers it as `StoreParts.quarantine`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["QuarantineRow", "QuarantineStore", "StoredText"]


@dataclass(frozen=True, slots=True)
class StoredText:
    """A live learning's texts, as the recheck reads them."""

    tenant: str
    user: str | None
    id: int
    status: str
    text: str
    topic: str
    tags: str
    context: str


@dataclass(frozen=True, slots=True)
class QuarantineRow:
    tenant: str
    learning_id: int
    previous_status: str
    rule: str
    kind: str
    gate_version: str
    at: float
    released_at: float | None
    released_by: str | None


@runtime_checkable
class QuarantineStore(Protocol):
    """The review list of learnings a gate recheck put aside, and the gate version that last checked the
    whole database. `live_texts` reads across tenants, in id order: the recheck is a maintenance pass."""

    async def gate_version(self) -> str | None: ...

    async def set_gate_version(self, version: str) -> None: ...

    async def live_texts(self, after_id: int, limit: int, *, unchecked_by: str | None = None) -> list[StoredText]:
        """Live learnings of every tenant with an id above `after_id`, in id order; with `unchecked_by`, only
        those that gate version has not accepted yet."""
        ...

    async def mark_checked(self, texts: Sequence[StoredText], version: str) -> None:
        """Record that gate `version` accepted these learnings as read (one whose text changed since is left)."""
        ...

    async def add(
        self, tenant: str, learning_id: int, previous_status: str, rule: str, kind: str, version: str
    ) -> None: ...

    async def listed(self, tenant: str | None, include_released: bool = False) -> list[QuarantineRow]: ...

    async def get(self, tenant: str, learning_id: int) -> QuarantineRow | None: ...

    async def mark_released(self, tenant: str, learning_id: int, actor: str) -> None: ...
