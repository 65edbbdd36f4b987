"""Settings of the tool layer. Defaults follow seeds 001 and 002; an app changes them with
`loop.tools.configure(...)`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from weakref import WeakKeyDictionary

from .base import Familiarity, LearningPolicy
from .models import PrivacyMode, Strength, ToolSignal

__all__ = ["STRENGTH_WEIGHTS", "RouterWeights", "SectionCaps", "ToolConfig", "configured", "remember_config"]


@dataclass(frozen=True)
class RouterWeights:
    """How the router fuses its evidence (see `learnloop.tools.router`). Chosen on four MetaTool orderings
    (bench/tool_learning.py --seed 0, 1, 2, 7, averaged) for the best last-block recall@5 gain that leaves
    tools nobody used (the tool-disjoint control) no worse at recall@5. `learned_floor=0.55` trades about
    a point of that gain for about three points of the control's recall@1."""

    description: float = 1.0
    keyword: float = 0.1
    learned: float = 1.0
    # Learned queries less similar than this to the current one say nothing for a tool.
    learned_floor: float = 0.5
    # A tool's learned evidence is the mean over its best this-many pairs: it takes repeated, consistent
    # use to move a tool up, which keeps tools nobody used yet (never learned about) in their place.
    learned_support: int = 3
    # What a query far from all of a tool's uses costs that tool.
    familiarity: Familiarity = field(default_factory=Familiarity)


@dataclass(frozen=True)
class SectionCaps:
    """Seed 001 §8.9: at most 5 recovery patterns, 5 templates, 5 past errors, 3 insights."""

    recoveries: int = 5
    templates: int = 5
    errors: int = 5
    insights: int = 3
    # Templates and insights must be about the query: cosine similarity of the template's query direction.
    template_similarity: float = 0.45
    # Seed 001 §6.2: recovery patterns shown up front need confidence 0.8 and two applications.
    recovery_confidence: float = 0.8
    recovery_applied: int = 2
    error_days: float = 30.0


# Seed 002 ranks the classes; the weights are the confidence each gives a learned pair.
STRENGTH_WEIGHTS: dict[Strength, float] = {
    Strength.VERY_STRONG: 1.0,
    Strength.STRONG: 0.9,
    Strength.DISCOVERY: 0.8,
    Strength.WEAK: 0.4,
}


@dataclass(frozen=True)
class ToolConfig:
    k: int = 8  # tools a routed list shows
    search_limit: int = 10
    privacy: PrivacyMode = PrivacyMode.HASHED
    # Learned pairs of every user of the tenant improve everyone's routing; templates and recovery patterns
    # are tenant knowledge. False keeps both per user.
    share_learning: bool = True
    weights: RouterWeights = field(default_factory=RouterWeights)
    strength_weights: Mapping[Strength, float] = field(default_factory=lambda: dict(STRENGTH_WEIGHTS))
    learning: LearningPolicy = field(default_factory=LearningPolicy)
    sections: SectionCaps = field(default_factory=SectionCaps)
    # Weak signals are durable at once and folded into the learned pairs in batches (seed 002's hybrid).
    weak_batch_size: int = 32
    weak_batch_seconds: float = 30.0
    # The insight aggregator runs after this many recorded calls of a tenant (and on demand).
    insight_every: int = 200
    insight_window_days: float = 30.0
    # A failing pattern becomes a "common mistake" insight from this many occurrences (seed 001 §6.6).
    mistake_min_count: int = 3
    # Which arguments identify a call pattern, per tool; others are reduced to their type.
    key_params: Mapping[str, Sequence[str]] = field(default_factory=dict)
    # The app's intent classifier (seed 001 §6.1), used when a context names no intent.
    intent_classifier: Callable[[str], str | None] | None = None
    max_sessions: int = 10_000
    # The lesson shown under a past error (seed 001 §9); None or an empty answer: `tools.lessons.lesson_for`.
    lesson: Callable[[ToolSignal], str | None] | None = None


# The configuration a tenant's `loop.tools` was given, for code that only holds the store (retrieval).
_CONFIGS: WeakKeyDictionary[Any, dict[str, ToolConfig]] = WeakKeyDictionary()


def remember_config(store: Any, tenant: str, config: ToolConfig) -> None:
    _CONFIGS.setdefault(store, {})[tenant] = config


def configured(store: Any, tenant: str) -> ToolConfig:
    found = _CONFIGS.get(store)
    return found.get(tenant, _DEFAULT) if found else _DEFAULT


_DEFAULT = ToolConfig()
