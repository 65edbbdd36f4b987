"""The router: fusion of description, keyword and learned evidence; learning, dedupe, pruning, privacy."""

from __future__ import annotations

import pytest

import learnloop
from learnloop.tools import PrivacyMode, RouterWeights, Strength
from learnloop.tools.base import ToolEvidence
from learnloop.tools.router import fuse
from tests.tools.conftest import Clock


def evidence(name: str, description: float, keyword: float = 0.0, learned: float = 0.0) -> ToolEvidence:
    return ToolEvidence(name, "", "", {}, description, keyword, learned, 3 if learned else 0)


def test_fusion_weights_each_kind_of_evidence_and_breaks_ties_by_name() -> None:
    weights = RouterWeights(description=1.0, keyword=0.1, learned=1.0)
    ranked = fuse(
        [evidence("b", 0.40), evidence("a", 0.40), evidence("c", 0.30, keyword=1.0), evidence("d", 0.10, learned=0.5)],
        weights,
        k=3,
    )
    assert [r.name for r in ranked] == ["d", "a", "b"]
    assert ranked[0].why == "description 0.10; learned 0.50 from 3 uses"
    baseline = fuse([evidence("d", 0.10, learned=0.5), evidence("a", 0.40)], weights, k=1, use_learned=False)
    assert [r.name for r in baseline] == ["a"] and baseline[0].learned == 0.0


def test_unfamiliarity_demotes_a_used_tool_and_learning_off_ignores_it() -> None:
    used = ToolEvidence("used", "", "", {}, 0.50, 0.0, 0.0, 0, unfamiliar=0.5)
    fresh = evidence("fresh", 0.45)
    ranked = fuse([used, fresh], RouterWeights(), k=2)  # 0.50 - 0.2 × 0.5 < 0.45
    assert [r.name for r in ranked] == ["fresh", "used"]
    assert ranked[1].unfamiliar == 0.5 and ranked[1].why == "description 0.50; unlike its past uses 0.50"
    baseline = fuse([used, fresh], RouterWeights(), k=2, use_learned=False)
    assert [r.name for r in baseline] == ["used", "fresh"] and baseline[0].unfamiliar == 0.0


QUERIES = [
    "do I have any meetings tomorrow morning?",
    "do I have meetings on Thursday?",
    "what meetings do I have this afternoon?",
    "list my meetings for Monday",
]


async def test_use_teaches_the_router_for_similar_queries_only(tools_loop: learnloop.Loop) -> None:
    tools = tools_loop.tools
    # A tool whose description says nothing useful: only use can tell the router what it is for.
    await tools.register([{"name": "endpoint_x7", "description": "Internal endpoint, version 2"}])
    probe = "do I have any meetings on Friday morning?"
    before = [t.name for t in await tools.route(probe, 9, user="alice")]
    unrelated_before = [t.name for t in await tools.route("convert 20 dollars to yen", 9, user="alice")]
    assert before.index("endpoint_x7") > 1
    for n, query in enumerate(QUERIES * 2):
        await tools.set_context(f"s{n}", query, user="alice", k=1)
        await tools.record_search(f"s{n}", query, ["endpoint_x7"])
        receipt = await tools.record_call(f"s{n}", "endpoint_x7", {"day": "friday"})
        assert receipt.strength in (Strength.DISCOVERY, Strength.VERY_STRONG)
    after = await tools.route(probe, 9, user="alice")
    assert after[0].name == "endpoint_x7" and after[0].learned > 0 and "learned" in after[0].why
    assert [t.name for t in await tools.route(probe, 9, user="alice", learned=False)] == before
    unrelated = await tools.route("convert 20 dollars to yen", 9, user="alice")
    unrelated_after = [t.name for t in unrelated]
    # Use never lifts the tool for a query unlike its uses; having been used only for meetings, it goes down.
    assert unrelated_after.index("endpoint_x7") > unrelated_before.index("endpoint_x7")
    assert [t for t in unrelated_after if t != "endpoint_x7"] == [t for t in unrelated_before if t != "endpoint_x7"]
    [x7] = [t for t in unrelated if t.name == "endpoint_x7"]
    assert x7.learned == 0 and x7.unfamiliar > 0 and "unlike its past uses" in x7.why


async def test_the_same_query_reinforces_one_pair(tools_loop: learnloop.Loop) -> None:
    tools = tools_loop.tools
    for n in range(3):
        await tools.set_context(f"s{n}", "Translate 'good morning' to Spanish", user="alice", k=8)
        await tools.record_call(f"s{n}", "translate_text", {"to": "es"})
    [pair] = await tools.learned_pairs(user="alice", tool="translate_text")
    assert pair.uses == 3 and pair.strength is Strength.STRONG
    assert round(pair.confidence, 3) == round(1 - (1 - 0.9) ** 3, 3)  # noisy-or of three strong signals


async def test_pairs_beyond_the_cap_are_pruned_weakest_first(tools_loop: learnloop.Loop) -> None:
    tools = tools_loop.tools
    tools.configure(learning=tools.config.learning.__class__(max_pairs_per_tool=2, merge_similarity=0.99))
    queries = ["send mail to Ann", "email the invoice to the accountant", "write to support about my refund"]
    for n, query in enumerate(queries):
        await tools.set_context(f"s{n}", query, user="alice", k=8)
        await tools.record_call(f"s{n}", "send_email", {})
    pairs = await tools.learned_pairs(user="alice", tool="send_email")
    assert len(pairs) == 2


async def test_decayed_pairs_weigh_less_and_are_pruned(tools_loop: learnloop.Loop, clock: Clock) -> None:
    tools = tools_loop.tools
    await tools.set_context("s1", "how humid will it be in Oslo?", user="alice", k=8)
    await tools.record_call("s1", "get_forecast", {"city": "Oslo"})
    [fresh] = await tools.learned_pairs(user="alice")
    clock.advance(days=30)
    [older] = await tools.learned_pairs(user="alice")
    assert round(older.weight, 4) == round(fresh.weight / 2, 4)  # user patterns: 30-day half-life
    clock.advance(days=60)
    report = await tools.aggregate_insights()
    assert report.pruned_pairs == 1 and await tools.learned_pairs(user="alice") == []


async def test_privacy_modes(tools_loop: learnloop.Loop) -> None:
    tools = tools_loop.tools
    await tools.set_privacy("carol", "full")
    await tools.set_privacy("dave", PrivacyMode.OPT_OUT)
    for user in ("alice", "carol", "dave"):
        await tools.set_context(f"s-{user}", "Convert 100 euros to dollars", user=user, k=8)
        await tools.record_call(f"s-{user}", "currency_convert", {"amount": 100})
    [hashed] = await tools.learned_pairs(user="alice")
    assert hashed.query is None and len(hashed.query_hash) == 32
    [full] = await tools.learned_pairs(user="carol")
    assert full.query == "Convert 100 euros to dollars"
    assert await tools.learned_pairs(user="dave") == []
    [dave_call] = [s for s in await tools.signals(user="dave") if s.kind == "call"]
    assert dave_call.query_hash is None and dave_call.query is None
    await tools.set_privacy("carol", "hashed")  # a stricter choice also applies to what is stored
    [now_hashed] = await tools.learned_pairs(user="carol")
    assert now_hashed.query is None


async def test_unshared_learning_stays_with_its_user(tools_loop: learnloop.Loop) -> None:
    tools = tools_loop.tools
    tools.configure(share_learning=False)
    probe = "which of my meetings overlap on Monday?"
    baseline = await tools.route(probe, 8, user="bob")
    for n, query in enumerate(QUERIES * 2):
        await tools.set_context(f"s{n}", query, user="alice", k=1)
        await tools.record_search(f"s{n}", query, ["calendar_events"])
        await tools.record_call(f"s{n}", "calendar_events", {})
    assert [t.name for t in await tools.route(probe, 8, user="bob")] == [t.name for t in baseline]
    assert (await tools.route(probe, 1, user="alice"))[0].learned > 0


async def test_no_context_lists_the_most_used_tools(tools_loop: learnloop.Loop) -> None:
    tools = tools_loop.tools
    for n in range(2):
        await tools.record_call(f"s{n}", "refund_order", {"order_id": str(n)})
    top = await tools.route(None, 2)
    assert top[0].name == "refund_order" and top[0].learned_uses == 2


async def test_registering_again_embeds_only_what_changed(tools_loop: learnloop.Loop) -> None:
    tools = tools_loop.tools
    report = await tools.register(
        [
            {
                "name": "get_forecast",
                "description": "Weather forecast for a city for the next days: rain, wind, temperature",
            },
            {
                "name": "air_quality",
                "description": "Air quality index for a zip code",
                "inputSchema": {"type": "object"},
            },
            {"name": "new_tool", "description": "Something new"},
        ]
    )
    assert report.unchanged == ["get_forecast"] and report.changed == ["air_quality"] and report.added == ["new_tool"]
    assert "new_tool" in [t.name for t in await tools.route("something new", 3)]
    await tools.unregister(["new_tool"])
    assert "new_tool" not in [t.name for t in await tools.catalog()]


def test_the_sync_face_routes_too(tmp_path, embedder) -> None:  # type: ignore[no-untyped-def]
    from learnloop.factory import build_engine
    from learnloop.stores.sqlite import SQLiteStore
    from tests.conftest import _Shared

    store = SQLiteStore(tmp_path / "sync.db", embedding_model=embedder.model_id, dimension=embedder.dimension)
    loop = learnloop.Loop(build_engine(store, _Shared(embedder)))  # type: ignore[arg-type]
    sync = loop.sync
    sync.tools.register([{"name": "get_forecast", "description": "Weather forecast for a city"}])
    assert [t.name for t in sync.tools.route("rain tomorrow?", 1)] == ["get_forecast"]
    assert sync.tools.set_context("s1", "rain tomorrow?")[0].name == "get_forecast"
    assert sync.tools.record_call("s1", "get_forecast", {"city": "Oslo"}).strength is Strength.STRONG
    sync.close()


async def test_route_context_is_the_deprecated_name_of_query(tools_loop) -> None:  # type: ignore[no-untyped-def]
    tools = tools_loop.tools
    await tools.register([{"name": "get_forecast", "description": "Weather forecast for a city"}])
    with pytest.warns(DeprecationWarning, match="query"):
        old = await tools.route(context="rain tomorrow?", k=1)
    assert [t.name for t in old] == [t.name for t in await tools.route(query="rain tomorrow?", k=1)]
