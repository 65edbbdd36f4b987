"""Seed 001 §11's metrics — is the agent getting better? — computed from what the loop keeps:

| metric | from |
|---|---|
| template hit rate | successful calls whose template existed / all successful calls that have a template |
| template confidence trend | the mean confidence of the templates hit, per bucket; now: of the active templates |
| error-recovery rate | recovery patterns' times succeeded / times applied |
| first-try success rate | successful tool calls / tool calls |
| average response quality | the mean score of the feedback records |
| tool-selection accuracy | calls with the intent's preferred tool (tool_preference insights) / calls for the intent |
| cold-start time | turns a user took until their first template hit (mean over users who had one) |
| correction rate | feedback records that are corrections / feedback records |

Templates, recovery patterns and tool statistics are the tenant's shared knowledge: a user's figures show the
tenant's for those. The over-time series of template hits come from hourly write counters the turns' work keeps.

Cut to one `channel` (the channel each turn came on, seed 001 §3.2), the figures are of that channel's turns:
feedback and correction rate, first-try success (their tool calls, as the tool layer counted them), template hit
rate and its series (the hits and misses their work recorded) and cold start; template confidence, error recovery
and tool-selection accuracy stay the tenant's (shared knowledge has no channel).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from .errors import ConfigurationError
from .models import Scope
from .stores.learning_metrics import FeedbackRecord, LearningMetricRows, LearningMetricsStore
from .turns.work import TEMPLATE_CONFIDENCE_MILLI, TEMPLATE_HITS, TEMPLATE_MISSES

if TYPE_CHECKING:
    from .engine import Engine

__all__ = ["CORRECTION_TYPES", "LearningMetrics", "compute_learning_metrics", "feedback_records", "learning_store"]

# "The agent was wrong": the user corrected it, or said what it used is out of date.
CORRECTION_TYPES = ("follow_up_correction", "outdated")


class LearningMetrics(BaseModel):
    template_hit_rate: float | None
    template_confidence: float | None
    error_recovery_rate: float | None
    first_try_success_rate: float | None
    average_response_quality: float | None
    tool_selection_accuracy: float | None
    cold_start_queries: float | None
    correction_rate: float | None
    feedback_count: int
    tool_calls: int
    users_with_template_hit: int
    users_without_template_hit: int
    feedback_by_type: dict[str, int]
    series: list[dict[str, Any]]
    channel: str | None = None  # the channel the figures are cut to; None: every channel


def learning_store(engine: Engine) -> LearningMetricsStore:
    store = engine.learning_metrics
    if store is None:
        raise ConfigurationError(f"{engine.store!r} keeps no metrics: they need a backend that does")
    return store


def _ratio(part: float, whole: float) -> float | None:
    return round(part / whole, 4) if whole else None


async def compute_learning_metrics(
    engine: Engine, scope: Scope, *, now: datetime, days: float, bucket_seconds: int, channel: str | None = None
) -> LearningMetrics:
    since = now - timedelta(days=days)
    rows = await learning_store(engine).learning_metric_rows(scope, since, bucket_seconds, channel)
    confidence = None
    if engine.tools is not None:
        active = [t for t in await engine.tools.templates(Scope(tenant=scope.tenant), now) if t.status == "active"]
        confidence = round(sum(t.confidence for t in active) / len(active), 4) if active else None
    figures = _figures(rows, since, now, bucket_seconds, confidence)
    return figures if channel is None else figures.model_copy(update={"channel": channel})


def _figures(
    rows: LearningMetricRows, since: datetime, now: datetime, step: int, confidence: float | None
) -> LearningMetrics:
    # A learned template was created by its first success (a miss); every later success, and every success of
    # a seed template, reused it (a hit).
    successes = sum(s for _, s, _ in rows.templates)
    created = sum(n for origin, s, n in rows.templates if origin == "learned")
    applied, succeeded = rows.recoveries
    calls, ok = rows.calls_total
    by_type: dict[str, int] = defaultdict(int)
    score_sum = 0.0
    for _, kind, count, score in rows.feedback:
        by_type[kind] += count
        score_sum += score
    feedback_count = sum(by_type.values())
    corrections = sum(by_type.get(t, 0) for t in CORRECTION_TYPES)
    with_preference = [(intent, tool, n) for intent, tool, n in rows.tool_uses if intent in rows.preferred]
    chosen = sum(n for intent, tool, n in with_preference if rows.preferred[intent] == tool)
    firsts = [turns.index(True) + 1 for turns in rows.user_turns.values() if True in turns]
    hit_rate = _ratio(max(successes - created, 0), successes)
    if rows.turn_templates is not None:  # one channel's turns: the hits and misses they recorded
        hits = sum(h for _, h, _, _ in rows.turn_templates)
        hit_rate = _ratio(hits, hits + sum(m for _, _, m, _ in rows.turn_templates))
    return LearningMetrics(
        template_hit_rate=hit_rate,
        template_confidence=confidence,
        error_recovery_rate=_ratio(succeeded, applied),
        first_try_success_rate=_ratio(ok, calls),
        average_response_quality=_ratio(score_sum, feedback_count),
        tool_selection_accuracy=_ratio(chosen, sum(n for _, _, n in with_preference)),
        cold_start_queries=_ratio(sum(firsts), len(firsts)),
        correction_rate=_ratio(corrections, feedback_count),
        feedback_count=feedback_count,
        tool_calls=calls,
        users_with_template_hit=len(firsts),
        users_without_template_hit=len(rows.user_turns) - len(firsts),
        feedback_by_type=dict(by_type),
        series=_series(rows, since, now, step),
    )


def _series(rows: LearningMetricRows, since: datetime, now: datetime, step: int) -> list[dict[str, Any]]:
    first = int(since.timestamp()) // step * step
    buckets = range(first, int(now.timestamp()) // step * step + 1, step)
    per: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for bucket, calls, ok in rows.calls:
        per[bucket]["calls"] += calls
        per[bucket]["ok"] += ok
    for bucket, kind, count, score in rows.feedback:
        per[bucket]["feedback"] += count
        per[bucket]["score"] += score
        if kind in CORRECTION_TYPES:
            per[bucket]["corrections"] += count
    for bucket, name, value in rows.counters:
        per[bucket // step * step][name] += value
    for bucket, hits, misses, confidence in rows.turn_templates or []:
        per[bucket][TEMPLATE_HITS] += hits
        per[bucket][TEMPLATE_MISSES] += misses
        per[bucket][TEMPLATE_CONFIDENCE_MILLI] += confidence * 1000
    out = []
    for bucket in buckets:
        f = per.get(bucket, {})
        hits, misses = int(f.get(TEMPLATE_HITS, 0)), int(f.get(TEMPLATE_MISSES, 0))
        out.append(
            {
                "t": datetime.fromtimestamp(bucket, UTC).isoformat(),
                "template_hits": hits,
                "template_misses": misses,
                "template_hit_rate": _ratio(hits, hits + misses),
                "template_confidence": _ratio(f.get(TEMPLATE_CONFIDENCE_MILLI, 0) / 1000, hits),
                "tool_calls": int(f.get("calls", 0)),
                "first_try_success_rate": _ratio(f.get("ok", 0), f.get("calls", 0)),
                "feedback": int(f.get("feedback", 0)),
                "response_quality": _ratio(f.get("score", 0), f.get("feedback", 0)),
                "correction_rate": _ratio(f.get("corrections", 0), f.get("feedback", 0)),
            }
        )
    return out


async def feedback_records(
    engine: Engine, scope: Scope, *, since: datetime, types: tuple[str, ...] = (), limit: int = 100
) -> list[FeedbackRecord]:
    """The verdicts on answers in `scope` (newest first): from the user's next message, or their silence."""
    return await learning_store(engine).feedback_records(scope, since=since, types=types, limit=limit)
