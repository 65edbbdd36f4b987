"""Figures about how the loop is learning (seed 001 §11 where it applies), from the event log and the
persisted write counters: learnings by status and origin, saves, merges, skips, new versions, refusals by
rule, retrieval hit rate, promotions and deprecations — in total and over time."""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel

from ..learning_metrics import LearningMetrics
from ..models import Scope
from ..stores.service import MetricRows, ServiceStore

__all__ = ["Metrics", "compute_metrics", "prometheus_text"]

_STATUSES = ("candidate", "verified", "deprecated")
Bucket = Literal["hour", "day"]
_SECONDS = {"hour": 3600, "day": 86_400}


class Metrics(BaseModel):
    tenant: str
    user: str | None
    since: datetime
    bucket: Bucket
    learnings: dict[str, Any]
    totals: dict[str, Any]
    series: list[dict[str, Any]]
    # Seed 001 §11: is the agent getting better (templates, recoveries, first tries, feedback, cold start).
    learning: LearningMetrics | None = None


def _totals(rows: MetricRows) -> dict[str, Any]:
    actions = dict(rows.action_totals)
    counters = dict(rows.counter_totals)
    refusals = {k.removeprefix("save.refused."): v for k, v in counters.items() if k.startswith("save.refused.")}
    retrievals, hits = rows.retrieval_totals
    return {
        "saves": actions.get("created", 0),
        "merges": actions.get("merged", 0),
        "skips": counters.get("save.skipped", 0),
        "new_versions": actions.get("superseded", 0),
        "imports": actions.get("imported", 0),
        "refusals": sum(refusals.values()),
        "refusals_by_rule": refusals,
        "promotions": actions.get("promoted", 0),
        "demotions": actions.get("demoted", 0),
        "deprecations": actions.get("deprecated", 0),
        "restores": actions.get("restored", 0),
        "edits": actions.get("edited", 0),
        "deletions": actions.get("deleted", 0),
        "retrievals": retrievals,
        "retrieval_hits": hits,
        "retrieval_hit_rate": round(hits / retrievals, 4) if retrievals else None,
        "events_by_action": actions,
    }


def _series(rows: MetricRows, since: float, now: float, step: int, current: Counter[str]) -> list[dict[str, Any]]:
    first = int(since) // step * step
    buckets = list(range(first, int(now) // step * step + 1, step))
    per: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    delta: dict[int, Counter[str]] = defaultdict(Counter)
    names = {
        "created": "saves",
        "merged": "merges",
        "superseded": "new_versions",
        "promoted": "promotions",
        "deprecated": "deprecations",
    }
    for bucket, action, count in rows.actions:
        if action in names:
            per[bucket][names[action]] += count
    for bucket, name, value in rows.counters:
        if name == "save.skipped":
            per[bucket]["skips"] += value
        elif name.startswith("save.refused."):
            per[bucket]["refusals"] += value
    for bucket, total, hit in rows.retrievals:
        per[bucket]["retrievals"] += total
        per[bucket]["retrieval_hits"] += hit
    for bucket, source, target, count in rows.status_moves:
        if source:
            delta[bucket][source] -= count
        if target:
            delta[bucket][target] += count
    for bucket, count in rows.purged:
        delta[bucket]["deprecated"] -= count
    # Walk back from today's counts: the count at the end of a bucket minus what changed in it is the count
    # at the end of the bucket before.
    level = Counter({s: current.get(s, 0) for s in _STATUSES})
    levels: dict[int, dict[str, int]] = {}
    for bucket in reversed(buckets):
        levels[bucket] = {s: max(0, level[s]) for s in _STATUSES}
        level.subtract(delta.get(bucket, Counter()))
    out = []
    for bucket in buckets:
        figures = per.get(bucket, {})
        retrievals = int(figures.get("retrievals", 0))
        hits = int(figures.get("retrieval_hits", 0))
        row: dict[str, Any] = {"t": datetime.fromtimestamp(bucket, UTC).isoformat(), **levels[bucket]}
        for key in ("saves", "merges", "skips", "new_versions", "refusals", "promotions", "deprecations"):
            row[key] = int(figures.get(key, 0))
        row |= {
            "retrievals": retrievals,
            "retrieval_hits": hits,
            "hit_rate": round(hits / retrievals, 4) if retrievals else None,
        }
        out.append(row)
    return out


async def compute_metrics(
    store: ServiceStore, scope: Scope, *, now: datetime, days: float, bucket: Bucket | None, counters: bool
) -> Metrics:
    chosen: Bucket = bucket or ("hour" if days <= 2 else "day")
    step = _SECONDS[chosen]
    since = now - timedelta(days=days)
    rows = await store.metric_rows(scope, since, step, counters)
    by_status: Counter[str] = Counter()
    by_origin: Counter[str] = Counter()
    for status, origin, count in rows.learnings:
        by_status[status] += count
        by_origin[origin] += count
    learnings = {
        "total": sum(by_status.values()),
        "by_status": {s: by_status.get(s, 0) for s in _STATUSES},
        "by_origin": dict(by_origin),
        "by_status_origin": [{"status": s, "origin": o, "count": c} for s, o, c in rows.learnings],
    }
    return Metrics(
        tenant=scope.tenant,
        user=scope.user,
        since=since,
        bucket=chosen,
        learnings=learnings,
        totals=_totals(rows),
        series=_series(rows, since.timestamp(), now.timestamp(), step, by_status),
    )


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def prometheus_text(metrics: Metrics) -> str:
    """The all-time figures in the Prometheus text exposition format (version 0.0.4)."""
    tenant = f'tenant="{_label(metrics.tenant)}"'
    lines: list[str] = []

    def family(name: str, kind: str, help_text: str, samples: list[tuple[str, float | int]]) -> None:
        lines.append(f"# HELP {name} {help_text}")
        lines.append(f"# TYPE {name} {kind}")
        for labels, value in samples:
            lines.append(f"{name}{{{tenant}{labels}}} {value}")

    totals = metrics.totals
    family(
        "learnloop_learnings",
        "gauge",
        "Learnings stored, by status and origin.",
        [
            (f',status="{_label(r["status"])}",origin="{_label(r["origin"])}"', r["count"])
            for r in metrics.learnings["by_status_origin"]
        ],
    )
    family(
        "learnloop_events_total",
        "counter",
        "Events in the learning event log, by action.",
        [(f',action="{_label(a)}"', n) for a, n in sorted(totals["events_by_action"].items())],
    )
    outcomes = [("created", totals["saves"]), ("merged", totals["merges"]), ("skipped", totals["skips"])]
    outcomes += [("new_version", totals["new_versions"]), ("refused", totals["refusals"])]
    family(
        "learnloop_save_outcomes_total",
        "counter",
        "Outcomes of governed writes.",
        [(f',outcome="{o}"', n) for o, n in outcomes],
    )
    family(
        "learnloop_save_refusals_total",
        "counter",
        "Writes refused by the write gate, by rule.",
        [(f',rule="{_label(r)}"', n) for r, n in sorted(totals["refusals_by_rule"].items())],
    )
    family("learnloop_retrievals_total", "counter", "Retrievals recorded.", [("", totals["retrievals"])])
    family(
        "learnloop_retrieval_hits_total",
        "counter",
        "Retrievals that returned at least one learning.",
        [("", totals["retrieval_hits"])],
    )
    rate = totals["retrieval_hit_rate"]
    family(
        "learnloop_retrieval_hit_ratio", "gauge", "Retrieval hits / retrievals.", [("", 0 if rate is None else rate)]
    )
    if metrics.learning is not None:
        lines += learning_families(metrics.learning, tenant)
    return "\n".join(lines) + "\n"


# Seed 001 §11's figures as gauges: (name, help, attribute of LearningMetrics).
_LEARNING_GAUGES = (
    (
        "template_hit_ratio",
        "Successful tool calls whose query template existed / those with a template.",
        "template_hit_rate",
    ),
    ("template_confidence", "Mean confidence of the active query templates.", "template_confidence"),
    ("error_recovery_ratio", "Recovery patterns' times succeeded / times applied.", "error_recovery_rate"),
    ("first_try_success_ratio", "Successful tool calls / tool calls.", "first_try_success_rate"),
    ("response_quality", "Mean feedback score of answers (-1 to 1).", "average_response_quality"),
    (
        "tool_selection_accuracy",
        "Calls with the intent's preferred tool / calls for the intent.",
        "tool_selection_accuracy",
    ),
    ("cold_start_turns", "Turns a user took until their first template hit (mean).", "cold_start_queries"),
    ("correction_ratio", "Feedback records that are corrections / feedback records.", "correction_rate"),
)


def learning_families(learning: LearningMetrics, tenant: str) -> list[str]:
    """Seed 001 §11's metrics; a figure with nothing to measure yet is left out (no sample, not a zero)."""
    lines: list[str] = []
    for name, help_text, attribute in _LEARNING_GAUGES:
        value = getattr(learning, attribute)
        if value is None:
            continue
        lines += [f"# HELP learnloop_{name} {help_text}", f"# TYPE learnloop_{name} gauge"]
        lines.append(f"learnloop_{name}{{{tenant}}} {value}")
    lines += ["# HELP learnloop_feedback_total Feedback records, by type.", "# TYPE learnloop_feedback_total counter"]
    for kind, count in sorted(learning.feedback_by_type.items()):
        lines.append(f'learnloop_feedback_total{{{tenant},type="{_label(kind)}"}} {count}')
    return lines
