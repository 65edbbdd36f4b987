"""Seed 002's signal classes and session correlation, through `loop.tools`."""

from __future__ import annotations

import numpy as np

import learnloop
from learnloop.tools import SignalKind, Strength
from learnloop.tools.signals import SessionWindow, SessionWindows, classify, query_hash
from tests.tools.conftest import CATALOG


def test_classification_is_seed_002_verbatim() -> None:
    assert classify(was_retrieved=True, was_searched=True) is Strength.VERY_STRONG
    assert classify(was_retrieved=True, was_searched=False) is Strength.STRONG
    assert classify(was_retrieved=False, was_searched=True) is Strength.DISCOVERY
    assert classify(was_retrieved=False, was_searched=False) is Strength.WEAK


def test_query_hash_ignores_case_and_spacing_but_not_tenant() -> None:
    assert query_hash("t", "Will it  rain?") == query_hash("t", "will it rain?")
    assert query_hash("t", "will it rain?") != query_hash("u", "will it rain?")


def test_session_windows_drop_the_least_recently_used() -> None:
    windows = SessionWindows(limit=2)
    for name in ("a", "b"):
        windows.open(SessionWindow(session=name, user=None))
    windows.get("a")
    windows.open(SessionWindow(session="c", user=None))
    assert windows.get("b") is None and windows.get("a") is not None and len(windows) == 2


async def test_signal_strength_follows_what_the_window_showed(tools_loop: learnloop.Loop) -> None:
    tools = tools_loop.tools
    shown = await tools.set_context("s1", "will it rain in Paris tomorrow?", user="alice", k=3)
    assert "get_forecast" in [t.name for t in shown]
    strong = await tools.record_call("s1", "get_forecast", {"city": "Paris"}, latency_ms=80)
    assert strong.strength is Strength.STRONG and strong.applied
    found = await tools.search("convert money into euros", limit=1, user="alice", session="s1")
    assert "currency_convert" in [t.name for t in found]
    discovery = await tools.record_call("s1", "currency_convert", {"amount": 5})
    assert discovery.strength is Strength.DISCOVERY and discovery.applied
    await tools.record_search("s1", "forecast", ["get_forecast"], user="alice")
    very = await tools.record_call("s1", "get_forecast", {"city": "Lyon"})
    assert very.strength is Strength.VERY_STRONG
    seen = {t.name for t in shown} | {t.name for t in found} | {"get_forecast"}
    unseen = next(t["name"] for t in CATALOG if t["name"] not in seen)
    weak = await tools.record_call("s1", unseen, {})
    assert weak.strength is Strength.WEAK and not weak.applied


async def test_signals_are_recorded_with_their_session_and_kind(tools_loop: learnloop.Loop) -> None:
    tools = tools_loop.tools
    await tools.set_context("s1", "translate this into German", user="alice", k=2)
    await tools.record_call("s1", "translate_text", {"to": "de"}, ok=False, error="timed out after 30s")
    signals = await tools.signals(user="alice", session="s1")
    assert [s.kind for s in signals] == [SignalKind.LIST, SignalKind.CALL]
    call = signals[1]
    assert call.ok is False and call.error_type == "timeout" and call.fingerprint
    assert call.query is None and call.query_hash  # hashed privacy by default: no query text kept


async def test_weak_signals_wait_for_the_batch(tools_loop: learnloop.Loop) -> None:
    tools = tools_loop.tools
    [shown] = await tools.set_context("s1", "email the quarterly report to Bob", user="alice", k=1)
    tool = "calendar_events" if shown.name != "calendar_events" else "send_email"
    receipt = await tools.record_call("s1", tool, {"to": "bob"})
    assert receipt.strength is Strength.WEAK and not receipt.applied
    assert await tools.store.pending_weak(tools.tenant) == 1
    assert await tools.learned_pairs(user="alice", tool=tool) == []
    assert await tools.flush() == 1
    [pair] = await tools.learned_pairs(user="alice", tool=tool)
    assert pair.strength is Strength.WEAK and pair.confidence == 0.4
    assert await tools.store.pending_weak(tools.tenant) == 0


async def test_recording_never_calls_the_embedder(tools_loop: learnloop.Loop) -> None:
    tools = tools_loop.tools
    await tools.set_context("s1", "pollen levels near 94103", user="alice")
    engine = tools_loop.engine
    calls: list[int] = []
    original = engine.embedder.embed

    async def counting(texts, *, purpose="document"):  # type: ignore[no-untyped-def]
        calls.append(len(texts))
        return await original(texts, purpose=purpose)

    engine.embedder.embed = counting  # type: ignore[method-assign]
    try:
        await tools.record_call("s1", "air_quality", {"zip_code": "94103"})
        await tools.record_call("s1", "air_quality", {"zip_code": "94103"}, ok=False, error="rate limit")
        await tools.record_list("s1", ["air_quality"])
    finally:
        engine.embedder.embed = original  # type: ignore[method-assign]
    assert calls == []


async def test_a_given_query_vector_is_used_as_is(tools_loop: learnloop.Loop) -> None:
    vector = (await tools_loop.engine.embedder.embed(["rain tomorrow in Paris"], purpose="query"))[0]
    routed = await tools_loop.tools.route("ignored words", 3, query_vector=np.asarray(vector, dtype=np.float32))
    assert routed[0].name == "get_forecast"
