"""The holdback report: for each experiment that ran (holdback, or the A/A check), the difference between the
memory arm and the holdback arm in each outcome with a 95% confidence interval, a learning curve (outcome by the
user's turn number), both arms over time, and a verdict in plain words that claims no effect the interval does
not support.

The interval is a percentile bootstrap over users: users, not turns, are resampled (a user's turns are not
independent of each other), each arm on its own, with a fixed seed so that the same data gives the same report.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel

from ..stores.holdback import Arm, Mode
from .outcomes import OUTCOMES, Outcome, TurnOutcome

__all__ = [
    "CURVE_BUCKETS",
    "ExperimentReport",
    "HoldbackReport",
    "OutcomeDifference",
    "build_report",
    "difference",
]

Effect = Literal["better", "worse", "none", "unknown"]
ARMS: tuple[Arm, Arm] = ("memory", "holdback")
# A user's turn numbers, grouped so that every group has a share of users in it: 1, 2, 3-4, 5-8, ...
CURVE_BUCKETS = ((1, 1), (2, 2), (3, 4), (5, 8), (9, 16), (17, 32), (33, 64), (65, None))
MIN_USERS = 2  # per arm, for an interval at all
# A bound this close to zero is zero: sums of scores such as 0.8 and -0.5 leave rounding dust behind.
_ZERO = 1e-9


class OutcomeDifference(BaseModel):
    outcome: str
    label: str
    higher_is_better: bool
    memory: float | None  # the arm's mean over its turns (or sessions, for turns to resolution)
    holdback: float | None
    difference: float | None  # memory - holdback
    low: float | None  # the 95% interval of the difference
    high: float | None
    users: dict[str, int]
    samples: dict[str, int]
    effect: Effect
    verdict: str


class CurvePoint(BaseModel):
    turns: str  # the bucket of the user's turn number: "1", "3-4", "65+"
    first: int
    memory: float | None  # mean feedback score at that turn number
    holdback: float | None
    memory_corrections: float | None
    holdback_corrections: float | None
    samples: dict[str, int]


class SeriesPoint(BaseModel):
    t: datetime
    memory: float | None  # mean feedback score of the day's turns
    holdback: float | None
    memory_corrections: float | None  # the share of the day's judged turns that were corrected
    holdback_corrections: float | None
    samples: dict[str, int]


class ExperimentReport(BaseModel):
    experiment: Mode
    users: dict[str, int]
    turns: dict[str, int]
    outcomes: list[OutcomeDifference]
    curve: list[CurvePoint]
    series: list[SeriesPoint]
    verdict: str


class HoldbackReport(BaseModel):
    tenant: str
    generated_at: datetime
    since: datetime | None
    resamples: int
    seed: int
    settings: list[dict[str, Any]]
    experiments: list[ExperimentReport]
    verdict: str


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if values else None


def difference(
    per_user: dict[Arm, dict[str, list[float]]], resamples: int, seed: int
) -> tuple[float | None, float | None, float | None]:
    """memory − holdback of the pooled means, and its 95% percentile-bootstrap interval over users."""
    sums: dict[Arm, np.ndarray] = {}
    counts: dict[Arm, np.ndarray] = {}
    for arm in ARMS:
        users = [values for values in per_user[arm].values() if values]
        sums[arm] = np.array([sum(v) for v in users], dtype=float)
        counts[arm] = np.array([len(v) for v in users], dtype=float)
    if not (len(sums["memory"]) and len(sums["holdback"])):
        return None, None, None
    point = sums["memory"].sum() / counts["memory"].sum() - sums["holdback"].sum() / counts["holdback"].sum()
    if min(len(sums["memory"]), len(sums["holdback"])) < MIN_USERS:
        return float(point), None, None
    rng = np.random.default_rng(seed)
    means = {}
    for arm in ARMS:
        n = len(sums[arm])
        picks = rng.integers(0, n, size=(resamples, n))
        means[arm] = sums[arm][picks].sum(axis=1) / counts[arm][picks].sum(axis=1)
    low, high = np.percentile(means["memory"] - means["holdback"], [2.5, 97.5])
    return float(point), float(low), float(high)


def _fmt(outcome: Outcome, value: float) -> str:
    if outcome.unit == "rate":
        return f"{value * 100:+.1f} points"
    return f"{value:+.2f}"


def _verdict(outcome: Outcome, diff: float | None, low: float | None, high: float | None) -> tuple[Effect, str]:
    if diff is None:
        return "unknown", f"{outcome.label}: no turns with this outcome in both arms yet."
    if low is None or high is None:
        return "unknown", f"{outcome.label}: too few users in an arm to say anything (at least {MIN_USERS} each)."
    interval = f"95% CI {_fmt(outcome, low)} to {_fmt(outcome, high)}"
    if low <= _ZERO and high >= -_ZERO:
        return "none", (
            f"{outcome.label}: no effect shown — the difference ({_fmt(outcome, diff)}) could be chance ({interval})."
        )
    ahead = (low > 0) == outcome.higher_is_better
    side: Effect = "better" if ahead else "worse"
    return side, f"{outcome.label}: memory makes it {side}, {_fmt(outcome, diff)} ({interval})."


def _per_user(turns: Sequence[TurnOutcome], outcome: str) -> dict[Arm, dict[str, list[float]]]:
    found: dict[Arm, dict[str, list[float]]] = {"memory": defaultdict(list), "holdback": defaultdict(list)}
    for turn in turns:
        value = turn.value(outcome)
        if value is not None:
            found[turn.arm][turn.user].append(value)
    return found


def _bucket(number: int) -> tuple[int, int | None]:
    return next(b for b in CURVE_BUCKETS if b[1] is None or b[0] <= number <= b[1])


def _curve(turns: Sequence[TurnOutcome]) -> list[CurvePoint]:
    scores: dict[tuple[int, int | None], dict[Arm, list[float]]] = defaultdict(lambda: defaultdict(list))
    corrections: dict[tuple[int, int | None], dict[Arm, list[float]]] = defaultdict(lambda: defaultdict(list))
    for turn in turns:
        bucket = _bucket(turn.user_turn)
        if turn.feedback is not None:
            scores[bucket][turn.arm].append(turn.feedback)
        if turn.correction is not None:
            corrections[bucket][turn.arm].append(turn.correction)
    points = []
    for first, last in CURVE_BUCKETS:
        got, fixed = scores.get((first, last)), corrections.get((first, last))
        if not got:
            continue
        fixed = fixed or {}
        name = f"{first}+" if last is None else (str(first) if first == last else f"{first}-{last}")
        points.append(
            CurvePoint(
                turns=name,
                first=first,
                memory=_mean(got.get("memory", [])),
                holdback=_mean(got.get("holdback", [])),
                memory_corrections=_mean(fixed.get("memory", [])),
                holdback_corrections=_mean(fixed.get("holdback", [])),
                samples={arm: len(got.get(arm, [])) for arm in ARMS},
            )
        )
    return points


def _series(turns: Sequence[TurnOutcome]) -> list[SeriesPoint]:
    scores: dict[datetime, dict[Arm, list[float]]] = defaultdict(lambda: defaultdict(list))
    corrections: dict[datetime, dict[Arm, list[float]]] = defaultdict(lambda: defaultdict(list))
    for turn in turns:
        if turn.feedback is None:
            continue
        day = turn.started_at.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        scores[day][turn.arm].append(turn.feedback)
        if turn.correction is not None:
            corrections[day][turn.arm].append(turn.correction)
    return [
        SeriesPoint(
            t=day,
            memory=_mean(arms.get("memory", [])),
            holdback=_mean(arms.get("holdback", [])),
            memory_corrections=_mean(corrections[day].get("memory", [])),
            holdback_corrections=_mean(corrections[day].get("holdback", [])),
            samples={arm: len(arms.get(arm, [])) for arm in ARMS},
        )
        for day, arms in sorted(scores.items())
    ]


def _experiment(experiment: Mode, turns: Sequence[TurnOutcome], resamples: int, seed: int) -> ExperimentReport:
    outcomes = []
    for outcome in OUTCOMES:
        per_user = _per_user(turns, outcome.name)
        diff, low, high = difference(per_user, resamples, seed)
        effect, verdict = _verdict(outcome, diff, low, high)
        outcomes.append(
            OutcomeDifference(
                outcome=outcome.name,
                label=outcome.label,
                higher_is_better=outcome.higher_is_better,
                memory=_mean([v for values in per_user["memory"].values() for v in values]),
                holdback=_mean([v for values in per_user["holdback"].values() for v in values]),
                difference=diff,
                low=low,
                high=high,
                users={arm: sum(1 for values in per_user[arm].values() if values) for arm in ARMS},
                samples={arm: sum(len(values) for values in per_user[arm].values()) for arm in ARMS},
                effect=effect,
                verdict=verdict,
            )
        )
    users = {arm: len({t.user for t in turns if t.arm == arm}) for arm in ARMS}
    return ExperimentReport(
        experiment=experiment,
        users=users,
        turns={arm: sum(1 for t in turns if t.arm == arm) for arm in ARMS},
        outcomes=outcomes,
        curve=_curve(turns),
        series=_series(turns),
        verdict=_summary(experiment, outcomes),
    )


def _summary(experiment: Mode, outcomes: Sequence[OutcomeDifference]) -> str:
    better = [o.label for o in outcomes if o.effect == "better"]
    worse = [o.label for o in outcomes if o.effect == "worse"]
    measured = [o for o in outcomes if o.effect != "unknown"]
    if experiment == "aa":
        if not measured:
            return "A/A check: not enough data yet."
        if better or worse:
            return (
                "A/A check FAILED: both arms get memory, yet the intervals exclude zero for "
                f"{', '.join(better + worse)}. Do not trust the holdback report until this is understood."
            )
        return "A/A check passed: both arms get memory and every interval contains zero, as it should."
    if not measured:
        return "Not enough data yet to say whether memory helps: each arm needs turns with verdicts from a few users."
    if better and not worse:
        return f"Memory helps: better {', '.join(better)}, with 95% intervals that exclude zero."
    if worse and not better:
        return f"Memory hurts: worse {', '.join(worse)}, with 95% intervals that exclude zero."
    if better and worse:
        return f"Mixed: memory is better on {', '.join(better)} but worse on {', '.join(worse)}."
    return "No effect shown: every interval contains zero, so the data do not show memory helping or hurting."


def build_report(
    tenant: str,
    turns: Sequence[TurnOutcome],
    *,
    now: datetime,
    since: datetime | None,
    settings: list[dict[str, Any]],
    resamples: int,
    seed: int,
) -> HoldbackReport:
    by_experiment: dict[Mode, list[TurnOutcome]] = defaultdict(list)
    for turn in turns:
        by_experiment[turn.experiment].append(turn)
    experiments = [
        _experiment(mode, by_experiment[mode], resamples, seed) for mode in ("holdback", "aa") if mode in by_experiment
    ]
    main = next((e for e in experiments if e.experiment == "holdback"), None)
    if main is not None:
        verdict = main.verdict
    elif experiments:
        verdict = experiments[0].verdict
    else:
        verdict = "No turns under a holdback experiment yet: switch one on with `loop.holdback.configure(share=0.1)`."
    return HoldbackReport(
        tenant=tenant,
        generated_at=now,
        since=since,
        resamples=resamples,
        seed=seed,
        settings=settings,
        experiments=experiments,
        verdict=verdict,
    )
