"""What a user profile says (seed 001 §2 layer 2, §9's `[USER PROFILE]`), and how it is edited."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

__all__ = ["PatternShare", "ProfileEdit", "ProfilePattern", "UserProfile"]


class ProfilePattern(BaseModel):
    kind: str  # query_type, intent, metric, time_range, complexity
    value: str
    weight: float  # frequency decayed to now (30-day half-life by default)
    count: int  # times seen in all
    share: float  # of the decayed weight of its kind
    last_at: datetime


class PatternShare(BaseModel):
    value: str
    share: float


class UserProfile(BaseModel):
    user: str
    interactions: int
    favourite_metrics: list[str]
    preferred_time_range: str | None
    query_types: list[PatternShare]
    intents: list[PatternShare]
    complexity: str | None
    patterns: list[ProfilePattern]
    # What a person set by hand (`favourite_metrics`, `preferred_time_range`): it wins over the patterns.
    overrides: dict[str, Any] = Field(default_factory=dict)
    updated_at: datetime


class ProfileEdit(BaseModel):
    """A hand edit: a field left out stays as it is; null clears a hand-set value (the patterns speak again)."""

    favourite_metrics: list[str] | None = Field(default=None, max_length=10)
    preferred_time_range: str | None = Field(default=None, max_length=100)
