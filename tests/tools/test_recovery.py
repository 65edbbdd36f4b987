"""Error recovery (seed 001 §4.2, §6.4): fail with the REVENUE sort key, succeed with BEST_SELLING, and the
fix is suggested the next time."""

from __future__ import annotations

import learnloop
from learnloop.tools.recovery import classify_error, describe_change, error_fingerprint
from tests.tools.conftest import Clock

FAILED = {"resource": "products", "sort_key": "REVENUE", "limit": 10}
FIXED = {"resource": "products", "sort_key": "BEST_SELLING", "limit": 10}
ERROR = "Invalid sort key REVENUE for products"


def test_error_types_and_fingerprints() -> None:
    assert classify_error(ERROR) == "invalid_argument"
    assert classify_error("GraphQLError: field totalPrice not found") == "graph_ql_error"
    assert classify_error("503 Service Unavailable") == "unavailable"
    assert classify_error(None) == "error"
    same = error_fingerprint("invalid_argument", "shop", FAILED, {})
    assert same == error_fingerprint("invalid_argument", "shop", {**FAILED, "limit": 50}, {})
    assert same != error_fingerprint("invalid_argument", "shop", {**FAILED, "sort_key": "PRICE"}, {})


def test_the_change_is_described_in_words() -> None:
    assert describe_change("shop", FAILED, "shop", FIXED) == "Changed sort_key from 'REVENUE' to 'BEST_SELLING'"
    assert describe_change("shop", FAILED, "graphql", {}) == "Switched from shop to graphql"
    assert describe_change("shop", {"a": 1}, "shop", {"b": 2}) == "Removed a; Added b='2'"
    assert describe_change("shop", FIXED, "shop", FIXED) == "Retried with the same parameters"


async def test_fail_then_succeed_becomes_a_pattern_suggested_next_time(tools_loop: learnloop.Loop) -> None:
    tools = tools_loop.tools
    await tools.set_context("s1", "top products by revenue this month", user="alice")
    failed = await tools.record_call("s1", "shop_analytics", FAILED, ok=False, error=ERROR)
    assert failed.suggestion is None  # nothing learned yet
    fixed = await tools.record_call("s1", "shop_analytics", FIXED)
    pattern = fixed.recovery
    assert pattern is not None and pattern.description == "Changed sort_key from 'REVENUE' to 'BEST_SELLING'"
    assert (pattern.times_applied, pattern.times_succeeded, pattern.confidence) == (1, 1, 1.0)
    assert pattern.error_type == "invalid_argument" and pattern.user is None

    # Next time, in another session and for another user, the same mistake meets the fix.
    await tools.set_context("s2", "which products earned the most?", user="bob")
    again = await tools.record_call("s2", "shop_analytics", {**FAILED, "limit": 3}, ok=False, error=ERROR)
    # Bob sees the fix, not Alice's call: the tenant's pattern keeps names, types and the API's constants.
    assert again.suggestion is not None
    assert again.suggestion.recovery_params == {"resource": "products", "sort_key": "BEST_SELLING", "limit": "<number>"}
    suggestion = await tools.suggest_recovery("shop_analytics", FAILED, ERROR, user="carol")
    assert suggestion is not None and suggestion.description == pattern.description
    # Seed 001 §6.2: shown up front only once applied twice.
    assert "Error recovery patterns" not in (await tools_loop.retrieve_context("bob", "top products by revenue")).block
    await tools.record_call("s2", "shop_analytics", FIXED)
    block = (await tools_loop.retrieve_context("bob", "top products by revenue")).block
    assert "Error recovery patterns (apply these if errors occur):" in block
    assert "If invalid_argument occurs with shop_analytics: Changed sort_key from 'REVENUE' to 'BEST_SELLING'" in block


async def test_reusing_the_fix_moves_its_confidence(tools_loop: learnloop.Loop) -> None:
    tools = tools_loop.tools
    await tools.set_context("s1", "top products", user="alice")
    await tools.record_call("s1", "shop_analytics", FAILED, ok=False, error=ERROR)
    await tools.record_call("s1", "shop_analytics", FIXED)
    await tools.record_call("s1", "shop_analytics", FAILED, ok=False, error=ERROR)
    await tools.record_call("s1", "shop_analytics", FIXED, ok=False, error="timed out")  # the fix failed
    [pattern] = await tools.recovery_patterns()
    assert (pattern.times_applied, pattern.times_succeeded) == (2, 1) and pattern.confidence == 0.5
    assert await tools.suggest_recovery("shop_analytics", FAILED, ERROR) is None  # below 0.7
    await tools.record_call("s1", "shop_analytics", FIXED)  # the timeout, then the retry worked
    await tools.record_call("s1", "shop_analytics", FAILED, ok=False, error=ERROR)
    await tools.record_call("s1", "shop_analytics", FIXED)
    [pattern, retried] = sorted(await tools.recovery_patterns(), key=lambda p: p.error_type != "invalid_argument")
    assert (pattern.times_applied, pattern.times_succeeded) == (3, 2)
    assert retried.error_type == "timeout" and retried.description == "Retried with the same parameters"


async def test_a_success_long_after_the_failure_is_not_its_recovery(tools_loop: learnloop.Loop, clock: Clock) -> None:
    tools = tools_loop.tools
    await tools.record_call("s1", "shop_analytics", FAILED, ok=False, error=ERROR, user="alice")
    clock.advance(hours=2)
    receipt = await tools.record_call("s1", "shop_analytics", FIXED, user="alice")
    assert receipt.recovery is None and await tools.recovery_patterns() == []


async def test_recovery_confidence_halves_in_fourteen_days(tools_loop: learnloop.Loop, clock: Clock) -> None:
    tools = tools_loop.tools
    await tools.record_call("s1", "shop_analytics", FAILED, ok=False, error=ERROR, user="alice")
    await tools.record_call("s1", "shop_analytics", FIXED, user="alice")
    clock.advance(days=14)
    [pattern] = await tools.recovery_patterns()
    assert pattern.confidence == 1.0 and pattern.effective_confidence == 0.5
    clock.advance(days=20)
    assert (await tools.aggregate_insights()).archived_recoveries == 1
    assert await tools.recovery_patterns() == []
