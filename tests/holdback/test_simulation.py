"""The report on scripted runs through `loop.turn()` with the real embedder: memory ahead when it can help, no
effect in the A/A check of the same population, and no effect where memory cannot help."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import learnloop
from learnloop.holdback import HoldbackReport
from learnloop.holdback.simulation import Population, simulate


async def _run(loop: learnloop.Loop, advance: Callable[[timedelta], None], *, mode: str, helps: bool) -> HoldbackReport:
    await loop.holdback.configure(share=0.5, mode=mode)
    await simulate(loop, Population(memory_helps=helps), advance=advance)
    return await loop.holdback.report(seed=1)


def _by_outcome(report: HoldbackReport) -> dict[str, learnloop.holdback.OutcomeDifference]:
    [experiment] = report.experiments
    return {o.outcome: o for o in experiment.outcomes}


async def test_memory_that_can_help_puts_the_memory_arm_ahead(
    held_loop: learnloop.Loop, advance: Callable[[timedelta], None]
) -> None:
    report = await _run(held_loop, advance, mode="holdback", helps=True)
    outcomes = _by_outcome(report)
    corrections, feedback = outcomes["correction"], outcomes["feedback"]
    assert corrections.high is not None and corrections.high < 0  # fewer corrections, the interval excludes zero
    assert feedback.low is not None and feedback.low > 0
    assert corrections.effect == feedback.effect == "better"
    assert report.verdict.startswith("Memory helps")
    [experiment] = report.experiments
    assert experiment.users["memory"] >= 5 and experiment.users["holdback"] >= 5
    # The learning curve: the held-back users are corrected as often later as at first; memory users less.
    assert experiment.curve[0].turns == "1" and experiment.curve[0].samples["holdback"] > 0
    # The same data give the same report.
    assert await held_loop.holdback.report(seed=1, now=report.generated_at) == report


async def test_the_aa_check_of_the_same_population_finds_no_effect(
    held_loop: learnloop.Loop, advance: Callable[[timedelta], None]
) -> None:
    report = await _run(held_loop, advance, mode="aa", helps=True)
    for outcome in _by_outcome(report).values():
        assert outcome.effect in ("none", "unknown"), outcome.verdict
        if outcome.low is not None and outcome.high is not None:
            assert outcome.low <= 1e-9 and outcome.high >= -1e-9
    assert report.verdict.startswith("A/A check passed")


async def test_memory_that_cannot_help_shows_no_effect(
    held_loop: learnloop.Loop, advance: Callable[[timedelta], None]
) -> None:
    report = await _run(held_loop, advance, mode="holdback", helps=False)
    outcomes = _by_outcome(report)
    assert all(o.effect in ("none", "unknown") for o in outcomes.values()), [o.verdict for o in outcomes.values()]
    assert outcomes["correction"].low is not None and outcomes["correction"].low < 0 < outcomes["correction"].high
    assert report.verdict.startswith("No effect shown")
