"""`loop.observe()` → tool knowledge: the verdict the next user message gives on a turn reaches the query
templates that turn's tool calls reinforced (seed 001 §4.4), and only those."""

from __future__ import annotations

import learnloop
from learnloop.tools.intelligence import live_tools
from tests.tools.conftest import Clock

TOP = {"resource": "products", "sort_key": "BEST_SELLING", "limit": 10}
RAIN = {"city": "Paris", "days": 2}


async def _template(loop: learnloop.Loop, tool: str) -> learnloop.tools.QueryTemplate:
    [template] = await loop.tools.templates(tool=tool)
    return template


async def test_the_verdict_reaches_the_templates_of_the_turn_it_judges(
    tools_loop: learnloop.Loop, clock: Clock
) -> None:
    tools = tools_loop.tools
    # Turn 1: a context, a successful call (a template), then the turn is observed.
    await tools.set_context("s1", "top products this month", user="alice", intent="top_products")
    await tools.record_call("s1", "shop_analytics", TOP, latency_ms=80)
    first = await tools_loop.observe("top products this month", "Here they are.", user="alice", session="s1")
    assert first.feedback is None  # nothing before turn 1 to judge

    # Turn 2 sets its own context and uses another tool before it is observed (the usual order).
    clock.advance(minutes=1)
    await tools.set_context("s1", "will it rain in Paris tomorrow?", user="alice", intent="weather")
    await tools.record_call("s1", "get_forecast", RAIN, latency_ms=40)
    second = await tools_loop.observe("perfect, thanks!", "Glad it helped.", user="alice", session="s1")
    assert second.feedback is not None and second.feedback.score == 0.8
    top, rain = await _template(tools_loop, "shop_analytics"), await _template(tools_loop, "get_forecast")
    assert second.feedback.templates == [top.id]
    assert top.feedback_positive == 0.8 and rain.feedback_positive == 0.0  # not the window opened since

    # Turn 3's message judges turn 2: its template, not turn 1's again.
    clock.advance(minutes=1)
    third = await tools_loop.observe("no, that's wrong", "Sorry.", user="alice", session="s1")
    assert third.feedback is not None and third.feedback.score < 0
    assert third.feedback.templates == [rain.id]
    top, rain = await _template(tools_loop, "shop_analytics"), await _template(tools_loop, "get_forecast")
    assert (top.feedback_positive, top.feedback_negative) == (0.8, 0.0)
    assert rain.feedback_negative == -third.feedback.score and rain.confidence < 1.0


async def test_only_the_sessions_own_user_and_window(tools_loop: learnloop.Loop, clock: Clock) -> None:
    tools = tools_loop.tools
    await tools.set_context("s1", "top products this month", user="alice")
    await tools.record_call("s1", "shop_analytics", TOP)
    await tools_loop.observe("top products this month", "Here.", user="bob", session="s1")
    clock.advance(minutes=1)
    # Bob's turns in a session of the same name do not judge Alice's tool calls.
    judged = await tools_loop.observe("perfect, thanks!", "Glad.", user="bob", session="s1")
    assert judged.feedback is not None and judged.feedback.templates == []
    # A session without a window is observed as before.
    await tools_loop.observe("hello", "Hi.", user="alice", session="elsewhere")
    clock.advance(minutes=1)
    other = await tools_loop.observe("perfect, thanks!", "Glad.", user="alice", session="elsewhere")
    assert other.feedback is not None and other.feedback.templates == []
    assert (await _template(tools_loop, "shop_analytics")).feedback_positive == 0.0


async def test_every_view_of_a_loop_shares_one_tool_layer_per_tenant(tools_loop: learnloop.Loop) -> None:
    same = tools_loop.for_tenant(tools_loop.tenant)
    assert same.tools is tools_loop.tools is live_tools(tools_loop.engine, tools_loop.tenant)
    other = tools_loop.for_tenant("elsewhere")
    assert live_tools(tools_loop.engine, "elsewhere") is None  # observe() never creates one
    assert other.tools is not tools_loop.tools and other.tools.tenant == "elsewhere"
    # What one view's set_context opened, another view's record_call sees: a strong signal, not a weak one.
    await tools_loop.tools.set_context("s9", "will it rain in Paris tomorrow?", user="alice")
    receipt = await same.tools.record_call("s9", "get_forecast", RAIN, user="alice")
    assert receipt.strength == "strong"
