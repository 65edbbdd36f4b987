"""Temporal decay of tool knowledge (seed 001 §4.5) and the thresholds that retire it (§8.4).

Each kind of knowledge ages at its own rate: a user's query patterns change within a month, a template
stays good for two, an error recovery goes stale in two weeks because APIs change, global insights move
slowly. The decayed score is `score × 0.5 ** (days_since_last_use / half_life)`; below 0.5 an item is no
longer recommended, below 0.2 it is archived (templates, recovery patterns) or pruned (learned pairs).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal

__all__ = [
    "ARCHIVE_BELOW",
    "EXCLUDE_BELOW",
    "HALF_LIFE_DAYS",
    "Knowledge",
    "decay_factor",
    "decayed",
    "standing",
]

EXCLUDE_BELOW = 0.5
ARCHIVE_BELOW = 0.2


class Knowledge(StrEnum):
    USER_PATTERN = "user_pattern"  # learned query→tool pairs, per-user statistics, past errors
    TEMPLATE = "template"
    RECOVERY = "recovery"
    INSIGHT = "insight"


HALF_LIFE_DAYS: dict[Knowledge, float] = {
    Knowledge.USER_PATTERN: 30.0,
    Knowledge.TEMPLATE: 60.0,
    Knowledge.RECOVERY: 14.0,
    Knowledge.INSIGHT: 90.0,
}

_DAY = 86_400.0


def decay_factor(last_used: datetime | float, now: datetime | float, kind: Knowledge) -> float:
    """0.5 ** (age / half-life); 1.0 for anything used in the future (clock skew between processes)."""
    last = last_used.timestamp() if isinstance(last_used, datetime) else last_used
    current = now.timestamp() if isinstance(now, datetime) else now
    age_days = max(0.0, (current - last) / _DAY)
    return float(0.5 ** (age_days / HALF_LIFE_DAYS[kind]))


def decayed(score: float, last_used: datetime | float, now: datetime | float, kind: Knowledge) -> float:
    return score * decay_factor(last_used, now, kind)


def standing(effective: float) -> Literal["active", "excluded", "archived"]:
    if effective < ARCHIVE_BELOW:
        return "archived"
    if effective < EXCLUDE_BELOW:
        return "excluded"
    return "active"
