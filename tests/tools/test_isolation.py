"""Tool data is scoped like learnings: no tenant sees another's; a user sees their own rows and the
tenant's shared knowledge, never another user's rows."""

from __future__ import annotations

import learnloop
from tests.tools.conftest import CATALOG

FAILED = {"resource": "products", "sort_key": "REVENUE"}
FIXED = {"resource": "products", "sort_key": "BEST_SELLING"}
QUERY = "top products by revenue this week"


async def _teach(tools: learnloop.tools.ToolIntelligence, user: str) -> None:
    await tools.set_context(f"{user}-s", QUERY, user=user, intent="top_products")
    await tools.record_call(f"{user}-s", "shop_analytics", FAILED, ok=False, error="Invalid sort key REVENUE")
    await tools.record_call(f"{user}-s", "shop_analytics", FIXED)


async def test_tenants_share_nothing(tools_loop: learnloop.Loop) -> None:
    acme = tools_loop.tools
    await _teach(acme, "alice")
    await acme.aggregate_insights()
    other = tools_loop.for_tenant("globex").tools
    assert await other.catalog() == []
    assert await other.route(QUERY, 5) == []
    await other.register(CATALOG)
    routed = await other.route(QUERY, 8, user="alice")
    assert all(r.learned == 0.0 for r in routed)
    assert await other.signals() == [] and await other.learned_pairs() == []
    assert await other.templates() == [] and await other.recovery_patterns() == []
    assert await other.stats() == [] and await other.insights() == []
    assert await other.suggest_recovery("shop_analytics", FAILED, "Invalid sort key REVENUE") is None
    block = (await tools_loop.for_tenant("globex").retrieve_context("alice", QUERY, record=False)).block
    assert block == ""


async def test_users_see_their_own_rows_and_the_shared_knowledge(tools_loop: learnloop.Loop) -> None:
    tools = tools_loop.tools
    await _teach(tools, "alice")
    assert await tools.signals(user="bob") == [] and await tools.learned_pairs(user="bob") == []
    assert await tools.stats(user="bob") == []
    assert {s.tool for s in await tools.signals(user="alice")} == {None, "shop_analytics"}
    assert len(await tools.templates(user="bob")) == 1  # shared: learned from anyone, names no one
    assert len(await tools.recovery_patterns(user="bob")) == 1
    assert len(await tools.signals()) == 3  # a tenant-wide scope sees everyone's


async def test_unshared_knowledge_stays_with_the_user(tools_loop: learnloop.Loop) -> None:
    tools = tools_loop.tools
    tools.configure(share_learning=False)
    await _teach(tools, "alice")
    assert await tools.templates(user="bob") == [] and await tools.recovery_patterns(user="bob") == []
    [template] = await tools.templates(user="alice")
    assert template.user == "alice"
    block = (await tools_loop.retrieve_context("bob", QUERY, record=False)).block
    assert "Error recovery" not in block


async def test_forget_removes_a_users_tool_data(tools_loop: learnloop.Loop) -> None:
    tools = tools_loop.tools
    tools.configure(share_learning=False)
    await _teach(tools, "alice")
    await _teach(tools, "bob")
    removed = await tools_loop.forget("alice")
    assert removed["tool_signals"] == 2 and removed["tool_templates"] == 1 and removed["tool_recoveries"] == 1
    assert removed["anonymised_failures"] == 1  # seed 001 §8.10: error logs lose the user, stay for learning
    assert await tools.signals(user="alice") == [] and await tools.templates(user="alice") == []
    assert len(await tools.signals(user="bob")) == 3 and len(await tools.templates(user="bob")) == 1
    routed = await tools.route(QUERY, 8, user="alice")
    assert all(r.learned == 0.0 for r in routed)
