"""The insight aggregator (seed 001 §4.3, §6.6): anonymised, cross-user, every N calls or on demand."""

from __future__ import annotations

import json

import learnloop
from tests.tools.conftest import Clock

TOP = {"resource": "products", "sort_key": "BEST_SELLING"}
WRONG = {"resource": "products", "sort_key": "REVENUE"}


async def _activity(tools: learnloop.tools.ToolIntelligence) -> None:
    for n, user in enumerate(["alice", "bob", "carol"]):
        await tools.set_context(f"s{n}", f"secret project {user}: top products", user=user, intent="top_products")
        await tools.record_call(f"s{n}", "shop_analytics", WRONG, ok=False, error="Invalid sort key REVENUE")
        for _ in range(2):
            await tools.record_call(f"s{n}", "shop_analytics", TOP, latency_ms=100)
        await tools.record_call(f"s{n}", "refund_order", {"order_id": "7"}, ok=False, error="order not found")


async def test_insights_are_aggregated_across_users_without_them(tools_loop: learnloop.Loop) -> None:
    tools = tools_loop.tools
    await tools.set_privacy("alice", "full")
    await _activity(tools)
    report = await tools.aggregate_insights()
    assert report.written >= 4
    found = {(i.type, i.key): i for i in await tools.insights()}
    preference = found[("tool_preference", "top_products")]
    assert preference.value["preferred_tool"] == "shop_analytics"
    shop = next(t for t in preference.value["all_tools"] if t["tool"] == "shop_analytics")
    assert (shop["successes"], shop["failures"]) == (6, 3) and preference.value["users"] == 3
    mistake = found[("common_mistake", "invalid_argument:shop_analytics")]
    assert mistake.value["count"] == 3
    assert mistake.value["lessons"] == ["Changed sort_key from 'REVENUE' to 'BEST_SELLING'"]
    values = found[("parameter_values", "shop_analytics:sort_key")].value
    assert values["valid"] == ["BEST_SELLING"] and values["invalid"] == ["REVENUE"]
    assert ("best_practice", f"top_products:{(await tools.templates(intent='top_products'))[0].signature}") in found
    text = json.dumps([i.model_dump(mode="json") for i in found.values()])
    for private in ("alice", "bob", "carol", "secret project"):
        assert private not in text
    block = (await tools_loop.retrieve_context("dave", "top products", record=False)).block
    assert "Global insights:" in block
    assert "shop_analytics: 'REVENUE' is not a valid sort_key; use BEST_SELLING" in block


async def test_the_aggregator_runs_every_n_calls(tools_loop: learnloop.Loop) -> None:
    tools = tools_loop.tools
    tools.configure(insight_every=4)
    await _activity(tools)  # 12 calls: three runs in the background
    await tools.drain()
    assert await tools.insights(type="common_mistake")


async def test_insights_not_refreshed_for_90_days_are_pruned(tools_loop: learnloop.Loop, clock: Clock) -> None:
    tools = tools_loop.tools
    await _activity(tools)
    await tools.aggregate_insights()
    clock.advance(days=31)  # the failures leave the 30-day window, nothing refreshes the mistake insight
    await tools.aggregate_insights()
    clock.advance(days=91)
    report = await tools.aggregate_insights()
    assert report.pruned_insights >= 1
    assert await tools.insights(type="common_mistake") == []
