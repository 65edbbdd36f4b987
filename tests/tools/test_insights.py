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


async def test_a_tool_that_never_worked_is_not_preferred(tools_loop: learnloop.Loop) -> None:
    """Seed 001 §4.3/§6.6: the preferred tool is the one that works; before, an intent whose only tool always
    failed got "prefer it (0% success rate)"."""
    tools = tools_loop.tools
    await tools.set_context("s1", "refund my order", user="alice", intent="refund")
    for _ in range(3):
        await tools.record_call("s1", "refund_order", {"order_id": "7"}, ok=False, error="order not found")
    await tools.aggregate_insights()
    assert [i for i in await tools.insights(type="tool_preference") if i.key == "refund"] == []
    assert await tools.insights(type="common_mistake")  # the failures are still known, as mistakes


async def test_field_mappings_name_what_proven_calls_used(tools_loop: learnloop.Loop) -> None:
    """Seed 001 §3.1 `global_insights` types and §4.3 item 5: valid field names discovered from successful calls."""
    tools = tools_loop.tools
    query = '{ orders(first: 10, query: "created_at:>2026-05-01") { edges { node { id totalPriceSet } } } }'
    await tools.set_context("s1", "revenue last month", user="alice", intent="revenue")
    for _ in range(2):
        await tools.record_call("s1", "shop_analytics", TOP)
        await tools.record_call("s1", "translate_text", {"query": query})
    await tools.aggregate_insights()
    found = {i.key: i for i in await tools.insights(type="field_mapping")}
    assert found["shop_analytics"].value["valid_values"] == {"resource": ["products"], "sort_key": ["BEST_SELLING"]}
    assert found["translate_text"].value["fields"] == ["orders", "edges", "node", "id", "totalPriceSet"]
    assert "2026" not in json.dumps(found["translate_text"].value)


async def test_time_patterns_say_when_an_intent_is_asked_for(tools_loop: learnloop.Loop, clock: Clock) -> None:
    """Seed 001 §3.1 `global_insights` type `time_pattern` (missing before)."""
    tools = tools_loop.tools
    clock.now = clock.now.replace(year=2026, month=11, day=23, hour=9, minute=0)  # a Monday
    for n in range(12):
        await tools.set_context(f"s{n}", "revenue this week", user=f"u{n % 3}", intent="revenue")
        await tools.record_call(f"s{n}", "shop_analytics", TOP)
        clock.advance(seconds=60)
    await tools.aggregate_insights()
    [pattern] = await tools.insights(type="time_pattern")
    assert pattern.key == "revenue" and pattern.value["peak_hours"] == [9]
    assert pattern.value["peak_weekdays"] == ["Mon"] and pattern.sample_size == 12
    block = (await tools_loop.retrieve_context("dave", "revenue this week", record=False)).block
    assert "revenue requests come mostly at 09:00 UTC, on Mon" not in block  # only shown for its intent
    sections = await tools.context_sections("dave", "revenue this week", intent="revenue")
    assert any("revenue requests come mostly at 09:00 UTC, on Mon" in line for s in sections for line in s.lines)


async def test_a_forgotten_users_failures_still_count_for_everyone(tools_loop: learnloop.Loop) -> None:
    """Seed 001 §8.10: error logs of a forgotten user lose the user and stay for system learning (before:
    deleted, and the common mistake they showed was gone)."""
    tools = tools_loop.tools
    await _activity(tools)
    await tools_loop.forget("alice")
    assert await tools.signals(user="alice") == []
    await tools.aggregate_insights()
    found = {(i.type, i.key): i for i in await tools.insights()}
    assert found[("common_mistake", "invalid_argument:shop_analytics")].value["count"] == 3
    anonymous = [s for s in await tools.signals(kind="call") if s.user is None and s.ok is False]
    assert len(anonymous) == 2 and all(s.error is None and s.session == "" for s in anonymous)
    assert {s.arguments.get("sort_key") for s in anonymous} == {"REVENUE", None}
    assert "secret project" not in json.dumps([s.model_dump(mode="json") for s in await tools.signals()])
