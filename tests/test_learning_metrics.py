"""Seed 001 §11: each metric computed from a scripted history of turns, and each structured log event emitted
once where the seed says (§4.1 template hit or miss on a successful call, §4.2 a known recovery applied, §7
step 3 feedback saved, §4.3 an insight written)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from datetime import timedelta

import pytest

import learnloop
from learnloop.learning_metrics import compute_learning_metrics, feedback_records
from learnloop.models import Scope
from learnloop.turns import TurnConfig
from tests.support.clock import Clock
from tests.tools.conftest import CATALOG

TOP = {"resource": "products", "sort_key": "BEST_SELLING", "limit": 10}
WRONG = {"resource": "products", "sort_key": "REVENUE"}


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def metrics_loop(open_loop: Callable[..., learnloop.Loop], clock: Clock) -> AsyncIterator[learnloop.Loop]:
    loop = open_loop("metrics.db", clock=clock)
    loop.tools.configure(insight_every=0)
    await loop.tools.register(CATALOG)
    loop.turns.configure(TurnConfig(agent=False))
    yield loop
    await loop.tools.drain()
    await loop.aclose()


Call = tuple[str, dict[str, object], str | None]


async def _turn(loop: learnloop.Loop, clock: Clock, user: str, message: str, calls: list[Call]) -> None:
    clock.advance(minutes=2)
    async with loop.turn(user, message, session=user) as turn:
        for tool, arguments, error in calls:
            await turn.tool_call(tool, arguments, result=None if error else "rows", error=error)
        await turn.finish("Here you are.")
    await loop.turns.drain()
    await loop.tools.drain()


def _events(caplog: pytest.LogCaptureFixture, name: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.getMessage() == name]


async def test_each_metric_from_a_scripted_history_and_each_event_once(
    metrics_loop: learnloop.Loop, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    loop = metrics_loop
    caplog.set_level(logging.INFO)
    ok: Call = ("shop_analytics", TOP, None)
    failed: Call = ("shop_analytics", WRONG, "Field 'REVENUE' is not a valid sort key")
    other: Call = ("currency_convert", {"amount": 10}, "rate service unavailable")
    # alice: a new template (miss), then two turns that reuse it (hits); the second and fourth messages judge
    # the answers before them.
    await _turn(loop, clock, "alice", "top products by revenue last month", [ok])
    await _turn(loop, clock, "alice", "perfect, thanks! top products by revenue this month", [ok])
    await _turn(loop, clock, "alice", "no, I meant top products by revenue last week", [failed, ok])
    await _turn(loop, clock, "alice", "top products by revenue yesterday", [failed, ok])
    # bob: no template of his own is needed, the shared one is hit on his second turn.
    await _turn(loop, clock, "bob", "what are my store's settings?", [])
    await _turn(loop, clock, "bob", "top products by revenue today", [other, ok])
    report = await loop.tools.aggregate_insights()

    # -- log events, once each where the seed says ---------------------------------------------------
    assert len(_events(caplog, "template_miss")) == 1  # alice's first success created the template
    hits = _events(caplog, "template_hit")
    assert len(hits) == 4 and all(getattr(h, "intent", None) == "products" for h in hits)
    assert all(0 < getattr(h, "confidence", 0) <= 1 for h in hits)
    # The failed→successful pair was learned on alice's third turn and applied again on her fourth.
    [applied] = _events(caplog, "recovery_applied")
    assert getattr(applied, "error_type", None)
    records = await feedback_records(loop.engine, Scope(tenant="default"), since=clock.now - timedelta(days=1))
    # One feedback_recorded per verdict saved, in the order saved.
    logged = [getattr(f, "type", None) for f in _events(caplog, "feedback_recorded")]
    assert logged == [r.type for r in reversed(records)] and len(logged) == 4
    assert len(_events(caplog, "insight_updated")) == report.written > 0

    # -- the metrics -----------------------------------------------------------------------------------
    metrics = await compute_learning_metrics(
        loop.engine, Scope(tenant="default"), now=clock.now, days=1, bucket_seconds=3600
    )
    # 5 successful calls on one template: 1 created it, 4 reused it.
    assert metrics.template_hit_rate == 0.8
    # 8 calls, 3 failed.
    assert metrics.first_try_success_rate == 0.625 and metrics.tool_calls == 8
    # One recovery pattern, applied twice, succeeded twice.
    assert metrics.error_recovery_rate == 1.0
    # Feedback: explicit positive (0.8) on alice's 1st answer, a correction (-0.5) on her 2nd, and whatever
    # the other follow-ups were judged.
    scores = [r.score for r in records]
    assert {"explicit_positive", "follow_up_correction"} <= {r.type for r in records}
    assert metrics.feedback_count == len(records)
    assert metrics.average_response_quality == round(sum(scores) / len(scores), 4)
    corrections = sum(r.type in ("follow_up_correction", "outdated") for r in records)
    assert metrics.correction_rate == round(corrections / len(records), 4)
    # Every call was for the "products" intent, where shop_analytics is preferred (5 of 7 succeeded, against
    # 0 of 1 for currency_convert): 7 of the 8 calls chose it.
    assert metrics.tool_selection_accuracy == 0.875
    # alice's first hit came on her 2nd turn, bob's on his 2nd.
    assert metrics.cold_start_queries == 2.0 and metrics.users_with_template_hit == 2
    assert metrics.template_confidence is not None and 0 < metrics.template_confidence <= 1
    # Over time (the history may straddle an hour): the hits and misses add up; each bucket's rates are of it.
    busy = [row for row in metrics.series if row["template_hits"] or row["template_misses"]]
    assert sum(r["template_hits"] for r in busy) == 4 and sum(r["template_misses"] for r in busy) == 1
    assert sum(r["tool_calls"] for r in metrics.series) == 8
    assert all(
        r["template_hit_rate"] == round(r["template_hits"] / (r["template_hits"] + r["template_misses"]), 4)
        for r in busy
    )
    assert all(0 < r["template_confidence"] <= 1 for r in busy if r["template_hits"])

    # A user's figures: their own calls and feedback; their turns only.
    mine = await compute_learning_metrics(
        loop.engine, Scope(tenant="default", user="bob"), now=clock.now, days=1, bucket_seconds=3600
    )
    assert mine.tool_calls == 2 and mine.first_try_success_rate == 0.5 and mine.users_with_template_hit == 1

    # The same from the SDK.
    sdk = await loop.learning_metrics(days=1, bucket="hour")
    assert sdk.template_hit_rate == 0.8 and sdk.tool_selection_accuracy == 0.875
    corrected = await loop.feedback(types=["follow_up_correction"])
    assert corrected and {r.type for r in corrected} == {"follow_up_correction"}
    assert len(corrected) == sum(r.type == "follow_up_correction" for r in records)
    assert len(await loop.feedback(user="bob")) == 1


async def test_the_figures_cut_per_channel(metrics_loop: learnloop.Loop, clock: Clock) -> None:
    loop = metrics_loop
    ok: Call = ("shop_analytics", TOP, None)
    other: Call = ("currency_convert", {"amount": 10}, "rate service unavailable")

    async def turn(user: str, channel: str, message: str, calls: list[Call]) -> None:
        clock.advance(minutes=2)
        async with loop.turn(user, message, session=f"{user}-{channel}", channel=channel) as begun:
            for tool, arguments, error in calls:
                await begun.tool_call(tool, arguments, result=None if error else "rows", error=error)
            await begun.finish("Here you are.")
        await loop.turns.drain()

    # alice on Telegram: a new template (miss), then its reuse (hit), whose message judges the first answer.
    await turn("alice", "telegram", "top products by revenue last month", [ok])
    await turn("alice", "telegram", "perfect, thanks! top products by revenue this month", [ok])
    # The same message again from the web a few seconds later: a duplicate, counted nowhere.
    async with loop.turn("alice", "perfect, thanks! top products by revenue this month", channel="web") as copy:
        assert copy.duplicate_of is not None
        await copy.tool_call("currency_convert", {"amount": 10}, error="rate service unavailable")
        await copy.finish("ignored")
    # bob on the web: a failed call, then the shared template hit.
    await turn("bob", "web", "top products by revenue today", [other, ok])
    await loop.turns.drain()

    telegram = await loop.learning_metrics(channel="telegram", bucket="hour")
    assert telegram.channel == "telegram"
    assert (telegram.tool_calls, telegram.first_try_success_rate, telegram.template_hit_rate) == (2, 1.0, 0.5)
    assert telegram.feedback_count == 1  # the second message judged the first answer
    assert sum(b["template_hits"] for b in telegram.series) == 1
    assert sum(b["template_misses"] for b in telegram.series) == 1
    web = await loop.learning_metrics(channel="web")
    assert (web.tool_calls, web.first_try_success_rate, web.template_hit_rate) == (2, 0.5, 1.0)
    assert web.feedback_count == 0 and web.users_with_template_hit == 1
    silent = await loop.learning_metrics(channel="whatsapp")
    assert (silent.tool_calls, silent.first_try_success_rate, silent.template_hit_rate) == (0, None, None)
    every = await loop.learning_metrics()
    assert every.channel is None and every.tool_calls == 4 and every.feedback_count == 1
