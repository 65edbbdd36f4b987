"""Reads for seed 001 §11's metrics and the feedback records (`learnloop.server.learning_metrics`): the part a
backend offers as `store.learning_metrics`. Nothing here writes; every read is scoped by tenant, and by user
where the table keeps one (templates, recovery patterns and tool statistics are the tenant's shared knowledge)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol

from ..models import Scope

__all__ = ["FeedbackRecord", "LearningMetricRows", "LearningMetricsStore"]


@dataclass(frozen=True)
class FeedbackRecord:
    """One verdict on an answer (seed 001 §3.1's response_feedback): from the user's next message, or from
    their silence (no follow-up within the window)."""

    user: str | None
    session: str
    type: str
    score: float
    at: datetime
    source: Literal["message", "silence"]
    turn: str  # the observer's turn number in the session, or the id of the turn() that got the silence verdict


@dataclass(frozen=True)
class LearningMetricRows:
    """Raw aggregates; buckets are epoch seconds at the start of the bucket."""

    feedback: list[tuple[int, str, int, float]] = field(default_factory=list)  # bucket, type, count, score sum
    calls: list[tuple[int, int, int]] = field(default_factory=list)  # bucket, calls, successful calls
    calls_total: tuple[int, int] = (0, 0)  # all time
    recoveries: tuple[int, int] = (0, 0)  # times applied, times succeeded (active and archived)
    # origin, successes, count of templates (learned templates' first success created them: a miss)
    templates: list[tuple[str, int, int]] = field(default_factory=list)
    tool_uses: list[tuple[str, str, int]] = field(default_factory=list)  # intent, tool, calls
    preferred: dict[str, str] = field(default_factory=dict)  # intent -> preferred tool (tool_preference insights)
    # Per user, their turns in order: whether each had a template hit (cold start: turns until the first).
    user_turns: dict[str, list[bool]] = field(default_factory=dict)
    counters: list[tuple[int, str, int]] = field(default_factory=list)  # bucket, "template.*" counter, value
    # Cut to one channel: the template hits and misses of that channel's turns (the hourly counters are the
    # tenant's), per bucket: hits, misses, the hit templates' confidence summed.
    turn_templates: list[tuple[int, int, int, float]] | None = None


class LearningMetricsStore(Protocol):
    async def feedback_records(
        self, scope: Scope, *, since: datetime, types: tuple[str, ...] = (), limit: int = 100
    ) -> list[FeedbackRecord]:
        """The newest verdicts first."""
        ...

    async def learning_metric_rows(
        self, scope: Scope, since: datetime, bucket_seconds: int, channel: str | None = None
    ) -> LearningMetricRows:
        """`channel`: the figures of that channel's turns only — feedback, tool calls (from the conversation
        records), template hits and cold start; the shared knowledge (templates, recoveries, tool statistics)
        is not cut."""
        ...
