"""Query templates (seed 001 §4.1, §6.3, §8.2–§8.4): learned from successes, weakened by failures and bad
feedback, seeded for a cold start, settled by confidence → recency → speed, decayed and archived."""

from __future__ import annotations

from datetime import timedelta

import learnloop
from learnloop.tools.templates import (
    call_signature,
    match_template,
    param_similarity,
    rank_templates,
    template_confidence,
)
from tests.tools.conftest import Clock

TOP = {"resource": "products", "sort_key": "BEST_SELLING", "limit": 10}


def test_signature_keeps_enum_values_and_reduces_the_rest_to_their_type() -> None:
    assert call_signature("t", TOP, {}) == call_signature("t", {**TOP, "limit": 25}, {})
    assert call_signature("t", TOP, {}) != call_signature("t", {**TOP, "sort_key": "CREATED_AT"}, {})
    assert call_signature("t", {"q": "top products in May"}, {}) == call_signature("t", {"q": "other text"}, {})
    named = {"t": ["resource"]}
    assert call_signature("t", TOP, named) == call_signature("t", {**TOP, "sort_key": "PRICE"}, named)


def test_confidence_is_successes_over_outcomes_with_feedback_and_prior() -> None:
    assert template_confidence(1, 0, 0, 0, 0) == 1.0
    assert template_confidence(3, 1, 0, 0, 0) == 0.75
    assert template_confidence(0, 0, 0, 0, 1) == 0.5  # a seed template
    assert template_confidence(1, 0, 0, 0.8, 0) == 1 / 1.8


async def test_successes_failures_and_feedback_move_confidence(tools_loop: learnloop.Loop) -> None:
    tools = tools_loop.tools
    await tools.set_context("s1", "top products this month", user="alice", intent="top_products")
    receipt = await tools.record_call("s1", "shop_analytics", TOP, latency_ms=120)
    [template] = await tools.templates(intent="top_products")
    assert template.id == receipt.template_id and template.confidence == 1.0 and template.successes == 1
    assert template.avg_latency_ms == 120.0 and template.user is None  # shared tenant knowledge
    await tools.record_call("s1", "shop_analytics", {**TOP, "limit": 5}, latency_ms=80)
    await tools.record_call("s1", "shop_analytics", TOP, ok=False, error="timed out")
    [template] = await tools.templates(intent="top_products")
    assert (template.successes, template.failures) == (2, 1) and template.avg_latency_ms == 100.0
    assert round(template.confidence, 4) == round(2 / 3, 4)
    [after_praise] = await tools.feedback("s1", 0.8)
    assert after_praise.confidence > template.confidence
    [after_complaint] = await tools.feedback("s1", -1.0)
    assert after_complaint.confidence < after_praise.confidence


async def test_seed_templates_start_at_one_half_and_are_validated_by_use(tools_loop: learnloop.Loop) -> None:
    tools = tools_loop.tools
    seeds = [{"intent": "top_products", "tool": "shop_analytics", "params": TOP, "description": "Top products"}]
    assert await tools.seed_templates(seeds) == 1
    assert await tools.seed_templates(seeds) == 0
    [seed] = await tools.templates(intent="top_products")
    assert seed.origin == "seed" and seed.confidence == 0.5
    # Seed 001 §4.1: a match needs confidence 0.7; a seed is recommended in the prompt (≥ 0.5, §8.4) until then.
    assert await tools.best_template(intent="top_products") is None
    assert await tools.best_template(intent="top_products", min_confidence=0.5) == seed
    await tools.set_context("s1", "best sellers", user="alice", intent="top_products")
    await tools.record_call("s1", "shop_analytics", TOP)
    [promoted] = await tools.templates(intent="top_products")
    assert promoted.id == seed.id and round(promoted.confidence, 4) == round(2 / 3, 4)
    assert await tools.best_template(intent="top_products") is None
    await tools.record_call("s1", "shop_analytics", TOP)
    matched = await tools.best_template(intent="top_products")
    assert matched is not None and matched.id == seed.id and matched.confidence == 0.75


async def test_conflicts_prefer_confidence_then_recency_then_speed(tools_loop: learnloop.Loop, clock: Clock) -> None:
    tools = tools_loop.tools
    await tools.set_context("s1", "orders last week", user="alice", intent="recent_orders")
    slow = {"resource": "orders", "sort_key": "CREATED_AT"}
    fast = {"resource": "orders", "sort_key": "PROCESSED_AT"}
    await tools.record_call("s1", "shop_analytics", slow, latency_ms=900)
    clock.advance(seconds=1)
    await tools.record_call("s1", "shop_analytics", fast, latency_ms=100)
    ranked = rank_templates(await tools.templates(intent="recent_orders"))
    assert [t.params["sort_key"] for t in ranked] == ["PROCESSED_AT", "CREATED_AT"]  # tied: more recent wins
    clock.advance(seconds=1)
    await tools.record_call("s1", "shop_analytics", fast, ok=False, error="invalid field")
    best = await tools.best_template(intent="recent_orders")
    assert best is not None and best.params["sort_key"] == "CREATED_AT"  # higher confidence wins
    templates = await tools.templates(intent="recent_orders")
    same = [t.model_copy(update={"effective_confidence": 1.0, "last_used_at": clock.now}) for t in templates]
    assert rank_templates(same)[0].params["sort_key"] == "PROCESSED_AT"  # tied again: faster wins


async def test_stale_templates_are_excluded_then_archived(tools_loop: learnloop.Loop, clock: Clock) -> None:
    tools = tools_loop.tools
    await tools.set_context("s1", "top products", user="alice", intent="top_products")
    await tools.record_call("s1", "shop_analytics", TOP)
    for _ in range(2):  # the API changed: the template now fails
        await tools.record_call("s1", "shop_analytics", TOP, ok=False, error="unknown field sort_key")
    assert await tools.best_template(intent="top_products") is None  # 1/3 < 0.5: excluded
    [template] = await tools.templates(intent="top_products")
    assert template.status == "active"
    assert (await tools.aggregate_insights()).archived_templates == 0  # 1/3 is not below 0.2
    clock.advance(days=45)
    report = await tools.aggregate_insights()
    assert report.archived_templates == 1  # 1/3 × 0.5^(45/60) = 0.198 < 0.2
    assert await tools.templates(intent="top_products") == []
    [archived] = await tools.templates(intent="top_products", include_archived=True)
    assert archived.status == "archived"
    await tools.record_call("s1", "shop_analytics", TOP)  # it works again: back in use
    [revived] = await tools.templates(intent="top_products")
    assert revived.status == "active"


async def test_template_confidence_halves_at_its_half_life(tools_loop: learnloop.Loop, clock: Clock) -> None:
    tools = tools_loop.tools
    await tools.set_context("s1", "top products", user="alice", intent="top_products")
    await tools.record_call("s1", "shop_analytics", TOP)
    clock.now += timedelta(days=60)
    [template] = await tools.templates(intent="top_products")
    assert template.confidence == 1.0 and template.effective_confidence == 0.5


async def test_examples_are_kept_only_with_full_privacy_and_only_for_their_author(
    tools_loop: learnloop.Loop,
) -> None:
    tools = tools_loop.tools
    await tools.set_privacy("carol", "full")
    await tools.set_context("s1", "top products this week", user="carol", intent="top_products")
    await tools.record_call("s1", "shop_analytics", TOP)
    await tools.set_context("s2", "best sellers please", user="alice", intent="top_products")
    await tools.record_call("s2", "shop_analytics", TOP)
    [for_carol] = await tools.templates(user="carol", intent="top_products")
    [for_alice] = await tools.templates(user="alice", intent="top_products")
    assert for_carol.examples == ["top products this week"] and for_alice.examples == []
    assert for_carol.id == for_alice.id and for_carol.successes == 2


async def test_matching_follows_seed_001_section_4_1(tools_loop: learnloop.Loop) -> None:
    """§4.1: intent + tool at confidence ≥ 0.7 with parameter similarity > 0.8, else the intent alone at ≥ 0.9
    (before: any template of the intent at 0.5)."""
    tools = tools_loop.tools
    await tools.set_context("s1", "top products", user="alice", intent="top_products")
    for _ in range(3):
        await tools.record_call("s1", "shop_analytics", TOP)
    await tools.record_call("s1", "shop_analytics", TOP, ok=False, error="timed out")  # 3/4 = 0.75
    same = await tools.best_template(intent="top_products", tool="shop_analytics", arguments={**TOP, "limit": 50})
    assert same is not None and same.params["sort_key"] == "BEST_SELLING"  # limit is a number either way: 1.0
    other = {**TOP, "sort_key": "CREATED_AT"}  # 2 of 3 arguments alike: 0.67, not > 0.8
    assert await tools.best_template(intent="top_products", tool="shop_analytics", arguments=other) is None
    for _ in range(6):
        await tools.record_call("s1", "shop_analytics", TOP)  # 9/10: good enough by intent alone
    fallback = await tools.best_template(intent="top_products", tool="shop_analytics", arguments=other)
    assert fallback is not None and fallback.confidence == 0.9
    templates = await tools.templates(intent="top_products")
    assert match_template(templates, "top_products", tool="shop_analytics", params=other) == templates[0]
    assert param_similarity({"a": 1, "b": 2}, {"a": 1, "b": 3}) == 0.5


async def test_a_failed_template_makes_way_for_the_next_best(tools_loop: learnloop.Loop, clock: Clock) -> None:
    """§8.3: if the chosen template fails, automatically try the next best (before: the same one again)."""
    tools = tools_loop.tools
    created = {"resource": "orders", "sort_key": "CREATED_AT"}
    processed = {"resource": "orders", "sort_key": "PROCESSED_AT"}
    await tools.set_context("s0", "orders last week", user="alice", intent="recent_orders")
    for _ in range(9):
        await tools.record_call("s0", "shop_analytics", created)
    for _ in range(3):
        await tools.record_call("s0", "shop_analytics", processed)
    await tools.record_call("s0", "shop_analytics", processed, ok=False, error="timed out")  # 3/4
    best = await tools.best_template(intent="recent_orders")
    assert best is not None and best.params["sort_key"] == "CREATED_AT"
    clock.advance(seconds=1)
    await tools.set_context("s1", "orders this week", user="bob", intent="recent_orders")
    failed = await tools.record_call("s1", "shop_analytics", created, ok=False, error="Service Unavailable")
    assert failed.template_id == best.id
    assert failed.fallback is not None and failed.fallback.params["sort_key"] == "PROCESSED_AT"
    after = await tools.best_template(intent="recent_orders", session="s1")
    assert after is not None and after.id == failed.fallback.id
    still = await tools.best_template(intent="recent_orders")  # 9/10: elsewhere it is still the best
    assert still is not None and still.id == best.id
    await tools.record_call("s1", "shop_analytics", created)  # it worked again: back in the running
    again = await tools.best_template(intent="recent_orders", session="s1")
    assert again is not None and again.id == best.id
