"""Storage of user profiles (`learnloop.profile`): the part a backend offers as `store.profiles`.

Patterns are (kind, value) frequencies per user that decay with a half-life: a write decays the stored weight to
the time of the write and adds the new observations, in one transaction with the user's interaction count."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from ..models import Scope

__all__ = ["PatternRow", "ProfileRecord", "ProfileStore"]


@dataclass(frozen=True)
class PatternRow:
    kind: str
    value: str
    weight: float  # decayed to `last_at`
    count: int
    first_at: datetime
    last_at: datetime


@dataclass(frozen=True)
class ProfileRecord:
    user: str
    interactions: int
    overrides: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    patterns: list[PatternRow] = field(default_factory=list)


class ProfileStore(Protocol):
    async def observe(
        self, scope: Scope, patterns: Sequence[tuple[str, str]], now: datetime, half_life_days: float
    ) -> None:
        """One interaction of `scope.user`: each (kind, value) seen once more, the interaction count + 1."""
        ...

    async def get(self, scope: Scope) -> ProfileRecord | None:
        """The user's profile and every pattern, or None when nothing is known of them."""
        ...

    async def set_overrides(self, scope: Scope, overrides: Mapping[str, Any], now: datetime) -> ProfileRecord:
        """Replace what a person set by hand (an empty mapping clears it)."""
        ...

    async def remove_patterns(self, scope: Scope, kind: str, values: Sequence[str] | None) -> int:
        """Forget some patterns of the user (`values` None: every pattern of `kind`); returns how many went."""
        ...

    async def forget(self, scope: Scope) -> int:
        """Delete the user's profile and patterns; returns how many rows went."""
        ...
