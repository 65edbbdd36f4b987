"""The insight aggregator (seed 001 §4.3, §6.6): anonymised knowledge across every user of a tenant.

It reads aggregates only — counts per intent and tool, failure counts per error type and tool, shared
templates and recovery patterns, the arguments of recent failed calls — and writes insights that carry no
user identity and no user text: every call in them is reduced to its shape (`shapes.Shaper`), so the
values they name are the API's own constants, never what a user passed:

- `popular_intent`   how often each intent is asked for;
- `tool_preference`  the tool that works best for an intent (success rate, then uses, then speed);
- `common_mistake`   an error type on a tool seen at least `mistake_min_count` times, with known fixes;
- `best_practice`    templates with confidence ≥ 0.9 and at least 3 successes;
- `parameter_values` per tool argument: enum-like values that worked, and those that only ever failed;
- `field_mapping`    per tool: the argument values and query fields that proven calls used (§4.3 item 5);
- `time_pattern`     per intent: the hours (UTC) and weekdays at which the tenant's users ask for it.

A tool that never succeeded for an intent is no tool to prefer: an intent whose every tool has a 0% success
rate gets no `tool_preference` (its failures show up as `common_mistake`s instead).

It runs every `ToolConfig.insight_every` recorded calls or on demand, and also folds in queued weak
signals, prunes insights not refreshed for 90 days (the insight half-life: below 0.5) and archives decayed
templates, recovery patterns and learned pairs.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from ..stores.tools import ToolStore
from .base import InsightDraft, InsightInputs
from .config import ToolConfig
from .decay import HALF_LIFE_DAYS, Knowledge
from .models import AggregationReport, Insight
from .shapes import Redactor, Shaper, query_fields, query_like
from .templates import compact_params

__all__ = ["aggregate", "compute_insights", "insight_line", "insight_tools"]

log = logging.getLogger("learnloop.tools")

_BEST_PRACTICE_CONFIDENCE = 0.9
_BEST_PRACTICE_SUCCESSES = 3


def _rate(successes: int, failures: int) -> float:
    return successes / max(successes + failures, 1)


def _tool_preferences(inputs: InsightInputs) -> list[InsightDraft]:
    by_intent: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for stat in inputs.stats:
        if stat.intent:
            by_intent[stat.intent].append(
                {
                    "tool": stat.tool,
                    "successes": stat.successes,
                    "failures": stat.failures,
                    "success_rate": round(_rate(stat.successes, stat.failures), 4),
                    "avg_time_ms": stat.avg_latency_ms,
                }
            )
    out = []
    for intent, tools in by_intent.items():
        best = max(tools, key=lambda t: (t["success_rate"], t["successes"], -t["avg_time_ms"]))
        if best["successes"] == 0:
            continue
        sample = sum(t["successes"] + t["failures"] for t in tools)
        value = {
            "preferred_tool": best["tool"],
            "success_rate": best["success_rate"],
            "avg_time_ms": best["avg_time_ms"],
            "all_tools": sorted(tools, key=lambda t: -t["success_rate"]),
            "users": inputs.users_per_intent.get(intent, 0),
        }
        out.append(InsightDraft("tool_preference", intent, value, sample, best["success_rate"]))
    return out


def _popular_intents(inputs: InsightInputs) -> list[InsightDraft]:
    counts: dict[str, int] = defaultdict(int)
    for stat in inputs.stats:
        if stat.intent:
            counts[stat.intent] += stat.successes + stat.failures
    total = sum(counts.values())
    return [
        InsightDraft(
            "popular_intent",
            intent,
            {"frequency": n, "pct": round(100 * n / total, 1)},
            n,
            round(n / total, 4),
        )
        for intent, n in counts.items()
    ]


def _common_mistakes(inputs: InsightInputs, min_count: int) -> list[InsightDraft]:
    out = []
    for error_type, tool, count in inputs.failure_groups:
        if count < min_count:
            continue
        lessons = sorted(
            {r.description for r in inputs.recoveries if r.error_type == error_type and r.failed_tool == tool}
        )
        value = {"description": f"{error_type} errors with {tool}", "count": count, "lessons": lessons[:3]}
        out.append(InsightDraft("common_mistake", f"{error_type}:{tool}", value, count, min(count / 20, 1.0)))
    return out


def _best_practices(inputs: InsightInputs, shaper: Shaper) -> list[InsightDraft]:
    out = []
    for t in inputs.templates:
        if t.confidence < _BEST_PRACTICE_CONFIDENCE or t.successes < _BEST_PRACTICE_SUCCESSES:
            continue
        key = f"{t.intent or t.tool}:{t.signature}"
        # A seed's parameters are the app's own; a learned template's are reduced to its shape again, in case
        # it was written under another gate or before shapes.
        params = t.params if t.origin == "seed" else shaper.shape(t.tool, t.params)
        value = {"intent": t.intent, "use": t.tool, "params": params, "successes": t.successes}
        out.append(InsightDraft("best_practice", key, value, t.successes + t.failures, t.confidence))
    return out


def _parameter_values(inputs: InsightInputs, shaper: Shaper) -> list[InsightDraft]:
    def enum_values(tool: str, params: dict[str, Any]) -> dict[str, str]:
        # The failed calls are every user's own arguments: only the constants their shapes keep are named.
        shape = shaper.shape(tool, params)
        return {k: v for k, v in shape.items() if isinstance(v, str) and not v.startswith("<")}

    valid: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for t in inputs.templates:
        if t.successes and t.confidence >= 0.5:
            for key, value in enum_values(t.tool, t.params).items():
                valid[(t.tool, key)][value] += t.successes
    invalid: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for tool, arguments in inputs.failed_arguments:
        for key, value in enum_values(tool, arguments).items():
            if value not in valid.get((tool, key), {}):
                invalid[(tool, key)][value] += 1
    out = []
    for (tool, key), bad in invalid.items():
        good = valid.get((tool, key))
        if not good:
            continue  # nothing is known to work yet: no advice to give
        sample = sum(bad.values()) + sum(good.values())
        values = {
            "tool": tool,
            "parameter": key,
            "valid": sorted(good, key=lambda v: -good[v]),
            "invalid": sorted(bad, key=lambda v: -bad[v]),
        }
        out.append(InsightDraft("parameter_values", f"{tool}:{key}", values, sample, min(1.0, 0.5 + sample / 20)))
    return out


def _field_mappings(inputs: InsightInputs, shaper: Shaper) -> list[InsightDraft]:
    values: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(int)))
    fields: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    samples: dict[str, int] = defaultdict(int)
    for t in inputs.templates:
        if not t.successes or t.confidence < 0.5:
            continue
        shape = t.params if t.origin == "seed" else shaper.shape(t.tool, t.params)
        for key, value in shape.items():
            if isinstance(value, str) and not value.startswith("<") and not query_like(value):
                values[t.tool][key][value] += t.successes
            elif isinstance(value, str):
                for name in query_fields(value):
                    fields[t.tool][name] += t.successes
        samples[t.tool] += t.successes
    out = []
    for tool in sorted(set(values) | set(fields)):
        known = {k: sorted(v, key=lambda x: -v[x]) for k, v in sorted(values[tool].items())}
        used = sorted(fields[tool], key=lambda f: -fields[tool][f])[:20]
        if not known and not used:
            continue
        value = {"tool": tool, "valid_values": known, "fields": used}
        out.append(InsightDraft("field_mapping", tool, value, samples[tool], min(1.0, 0.5 + samples[tool] / 20)))
    return out


_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_TIME_PATTERN_MIN_CALLS = 10


def _time_patterns(inputs: InsightInputs) -> list[InsightDraft]:
    by_intent: dict[str, list[datetime]] = defaultdict(list)
    for intent, stamp in inputs.call_times:
        if intent:
            by_intent[intent].append(datetime.fromtimestamp(stamp, UTC))
    out = []
    for intent, times in sorted(by_intent.items()):
        if len(times) < _TIME_PATTERN_MIN_CALLS:
            continue  # too few calls to say when people ask
        hours = Counter(t.hour for t in times)
        days = Counter(_WEEKDAYS[t.weekday()] for t in times)
        peak_hours = [h for h, _ in hours.most_common(3)]
        value = {
            "by_hour": {str(h): n for h, n in sorted(hours.items())},
            "by_weekday": {d: days[d] for d in _WEEKDAYS if d in days},
            "peak_hours": peak_hours,
            "peak_weekdays": [d for d, _ in days.most_common(2)],
        }
        share = sum(hours[h] for h in peak_hours) / len(times)
        out.append(InsightDraft("time_pattern", intent, value, len(times), round(share, 4)))
    return out


def compute_insights(inputs: InsightInputs, config: ToolConfig, shaper: Shaper | None = None) -> list[InsightDraft]:
    shaper = shaper or Shaper(Redactor.default(), config.key_params)
    return [
        *_popular_intents(inputs),
        *_tool_preferences(inputs),
        *_common_mistakes(inputs, config.mistake_min_count),
        *_best_practices(inputs, shaper),
        *_parameter_values(inputs, shaper),
        *_field_mappings(inputs, shaper),
        *_time_patterns(inputs),
    ]


async def aggregate(
    store: ToolStore, tenant: str, config: ToolConfig, now: datetime, shaper: Shaper | None = None
) -> AggregationReport:
    flushed = 0
    while True:
        batch = await store.flush_weak(tenant, config.learning, now)
        flushed += batch
        if batch == 0:
            break
    inputs = await store.insight_inputs(tenant, now - timedelta(days=config.insight_window_days), now)
    stale = now - timedelta(days=HALF_LIFE_DAYS[Knowledge.INSIGHT])
    drafts = compute_insights(inputs, config, shaper)
    written, pruned = await store.put_insights(tenant, drafts, now, stale_before=stale)
    for draft in drafts:  # seed 001 §11: one event per insight the aggregator wrote
        extra = {"event": "insight_updated", "tenant": tenant, "type": draft.type, "key": draft.key}
        log.info("insight_updated", extra=extra)
    templates, recoveries, pairs = await store.maintain(tenant, now)
    return AggregationReport(
        written=written,
        pruned_insights=pruned,
        archived_templates=templates,
        archived_recoveries=recoveries,
        pruned_pairs=pairs,
        flushed_signals=flushed,
    )


def insight_tools(insight: Insight) -> Sequence[str]:
    """The tools an insight is about, to judge its relevance to a query."""
    value = insight.value
    if insight.type == "tool_preference":
        return [t["tool"] for t in value.get("all_tools", [])]
    if insight.type == "common_mistake":
        return [insight.key.split(":", 1)[-1]]
    if insight.type == "best_practice":
        return [str(value.get("use", ""))]
    if insight.type in ("parameter_values", "field_mapping"):
        return [str(value.get("tool", ""))]
    return []


def insight_line(insight: Insight) -> str | None:
    value = insight.value
    if insight.type == "tool_preference":
        return (
            f"For {insight.key} requests: prefer {value.get('preferred_tool')} "
            f"({float(value.get('success_rate', 0)):.0%} success rate)"
        )
    if insight.type == "common_mistake":
        lessons = value.get("lessons") or []
        fix = f"; what worked: {lessons[0]}" if lessons else ""
        return f"Common mistake: {value.get('description', insight.key)} ({value.get('count')}×){fix}"
    if insight.type == "parameter_values":
        invalid = ", ".join(f"'{v}'" for v in value.get("invalid", [])[:3])
        valid = ", ".join(str(v) for v in value.get("valid", [])[:5])
        return f"{value.get('tool')}: {invalid} is not a valid {value.get('parameter')}; use {valid}"
    if insight.type == "field_mapping":
        parts = [f"{k}: {', '.join(str(v) for v in vs[:5])}" for k, vs in (value.get("valid_values") or {}).items()]
        if value.get("fields"):
            parts.append("fields: " + ", ".join(str(f) for f in value["fields"][:8]))
        return f"{value.get('tool')} calls that worked used " + "; ".join(parts)
    if insight.type == "time_pattern":
        hours = ", ".join(f"{int(h):02d}:00" for h in value.get("peak_hours", []))
        days = ", ".join(value.get("peak_weekdays", []))
        return f"{insight.key} requests come mostly at {hours} UTC, on {days}"
    if insight.type == "best_practice":
        params = value.get("params") or {}
        label = value.get("intent") or "this tool"
        return f"For {label}: {value.get('use')}({compact_params(params, 120)}) works reliably"
    return None
