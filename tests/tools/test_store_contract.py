"""The `ToolStore` contract. A second backend runs this same suite by adding itself to `make_tool_store`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from learnloop.models import Scope, utcnow
from learnloop.stores.base import Store
from learnloop.stores.parts import parts_of
from learnloop.stores.tools import ToolStore
from learnloop.tools.base import (
    CallRecord,
    CatalogEntry,
    EvidenceRequest,
    InsightDraft,
    LearningPolicy,
    ObservationRecord,
)
from learnloop.tools.models import PrivacyMode, SeedTemplate, SignalKind, Strength
from tests.conftest import BACKENDS, make_store, unit_vector

ALICE = Scope(tenant="t1", user="alice")
BOB = Scope(tenant="t1", user="bob")
TENANT = Scope(tenant="t1")
MODEL = "test:model"
POLICY = LearningPolicy()
NAMES = ["forecast", "refund", "translate"]


def entry(name: str, description: str = "", vector: np.ndarray | None = None, **fields: object) -> CatalogEntry:
    return CatalogEntry(
        name=name,
        server=str(fields.get("server", "")),
        description=description or f"the {name} tool",
        input_schema={},
        digest=f"d-{name}-{description}",
        vector=unit_vector(name) if vector is None else vector,
        embedding_model=MODEL,
        keep_vector=bool(fields.get("keep_vector", False)),
    )


def call(
    tool: str, *, query: str = "q", ok: bool = True, strength: Strength = Strength.STRONG, **fields: object
) -> CallRecord:
    values: dict[str, object] = {
        "session": "s1",
        "tool": tool,
        "arguments": {},
        "ok": ok,
        "signature": f"sig-{tool}",
        "strength": strength,
        "weight": 0.9,
        "apply_now": strength is not Strength.WEAK,
        "query_hash": f"h-{query}",
        "vector": unit_vector(query),
        "embedding_model": MODEL,
    }
    values.update(fields)
    return CallRecord(**values)  # type: ignore[arg-type]


def request(vector: np.ndarray | None, terms: list[str] | None = None, share: bool = True) -> EvidenceRequest:
    return EvidenceRequest(
        vector=vector, terms=terms or [], now=utcnow(), share=share, learned_floor=0.5, learned_support=1
    )


async def open_pair(backend: str, folder: Path) -> tuple[Store, ToolStore]:
    store = make_store(backend, folder)
    await store.start()
    tools = parts_of(store).tools
    if tools is None:  # as the other parts' contract does (tests/stores/test_parts_contract.py)
        await store.aclose()
        pytest.skip(f"{backend} offers no ToolStore")
    return store, tools


@pytest.fixture
async def both(backend: str, tmp_path: Path) -> AsyncIterator[tuple[Store, ToolStore]]:
    store, tools = await open_pair(backend, tmp_path)
    await tools.put_tools("t1", [entry(n) for n in NAMES], utcnow())
    yield store, tools
    await store.aclose()


@pytest.fixture
def tools(both: tuple[Store, ToolStore]) -> ToolStore:
    return both[1]


def test_backends_list() -> None:
    assert BACKENDS  # the suite runs once per backend through the `backend` fixture


async def test_catalog_round_trip(tools: ToolStore) -> None:
    listed = await tools.list_tools("t1", embedding_model=MODEL)
    assert [t.name for t in listed] == NAMES and all(t.embedded for t in listed)
    await tools.put_tools("t1", [entry("refund", "refunds orders", vector=None, keep_vector=True)], utcnow())
    refund = next(t for t in await tools.list_tools("t1") if t.name == "refund")
    assert refund.description == "refunds orders" and refund.embedded
    assert await tools.remove_tools("t1", ["translate"]) == 1
    assert [t.name for t in await tools.list_tools("t1")] == ["forecast", "refund"]
    assert await tools.list_tools("t2") == []


async def test_evidence_fuses_description_keywords_and_learned_pairs(tools: ToolStore) -> None:
    hits = {h.name: h for h in await tools.evidence(ALICE, request(unit_vector("forecast"), ["refund"]))}
    assert hits["forecast"].description_similarity == pytest.approx(1.0, abs=1e-5)
    assert hits["refund"].keyword == 1.0 and hits["forecast"].keyword == 0.0
    await tools.record_call(ALICE, call("translate", query="bonjour"), POLICY, utcnow())
    learned = {h.name: h for h in await tools.evidence(BOB, request(unit_vector("bonjour")))}
    assert learned["translate"].learned == pytest.approx(0.9, abs=1e-4) and learned["translate"].learned_uses == 1
    private = {h.name: h for h in await tools.evidence(BOB, request(unit_vector("bonjour"), share=False))}
    assert private["translate"].learned == 0.0


def basis(axis: int) -> np.ndarray:
    vector = np.zeros(16, dtype=np.float32)
    vector[axis] = 1.0
    return vector


async def test_evidence_says_how_unlike_every_use_of_a_tool_the_query_is(tools: ToolStore) -> None:
    for axis in (1, 2, 3):
        await tools.record_call(ALICE, call("translate", query=f"q{axis}", vector=basis(axis)), POLICY, utcnow())
    far = {h.name: h for h in await tools.evidence(BOB, request(basis(0)))}
    # Three uses, none like the query: fully unfamiliar, times 3 / (3 + 5) for how well its uses are known.
    assert far["translate"].unfamiliar == pytest.approx(3 / 8) and far["translate"].learned == 0.0
    assert far["forecast"].unfamiliar == 0.0  # never used: nothing known against it
    near = {h.name: h for h in await tools.evidence(BOB, request(basis(2)))}
    assert near["translate"].unfamiliar == 0.0 and near["translate"].learned > 0
    private = {h.name: h for h in await tools.evidence(BOB, request(basis(0), share=False))}
    assert private["translate"].unfamiliar == 0.0  # alice's uses are not bob's
    off = EvidenceRequest(vector=basis(0), terms=[], now=utcnow(), use_learned=False)
    assert all(h.unfamiliar == 0.0 for h in await tools.evidence(BOB, off))


async def test_a_call_is_one_durable_transaction(backend: str, tmp_path: Path) -> None:
    store, tools = await open_pair(backend, tmp_path)
    await tools.put_tools("t1", [entry(n) for n in NAMES], utcnow())
    receipt = await tools.record_call(ALICE, call("refund"), POLICY, utcnow())
    assert receipt.applied and receipt.strength is Strength.STRONG and receipt.template_id is not None
    await store.aclose()
    store, tools = await open_pair(backend, tmp_path)
    [signal] = await tools.signals(ALICE)
    assert signal.id == receipt.id and signal.kind is SignalKind.CALL and signal.tool == "refund"
    [pair] = await tools.learned_pairs(ALICE, utcnow())
    assert pair.tool == "refund" and pair.query_hash == "h-q" and pair.query is None
    hits = {h.name: h for h in await tools.evidence(ALICE, request(unit_vector("q")))}
    assert hits["refund"].learned > 0
    await store.aclose()


async def test_weak_signals_are_stored_now_and_learned_in_batches(tools: ToolStore) -> None:
    receipt = await tools.record_call(ALICE, call("refund", strength=Strength.WEAK, weight=0.4), POLICY, utcnow())
    assert not receipt.applied and await tools.pending_weak("t1") == 1
    assert await tools.learned_pairs(ALICE, utcnow()) == []
    assert await tools.flush_weak("t1", POLICY, utcnow()) == 1
    assert await tools.pending_weak("t1") == 0
    [pair] = await tools.learned_pairs(ALICE, utcnow())
    assert pair.strength is Strength.WEAK and pair.confidence == pytest.approx(0.4)


async def test_pairs_merge_by_query_and_are_capped_per_tool(tools: ToolStore) -> None:
    policy = LearningPolicy(max_pairs_per_tool=2)
    for query in ("a", "a", "b", "c"):
        await tools.record_call(ALICE, call("refund", query=query), policy, utcnow())
    pairs = await tools.learned_pairs(ALICE, utcnow())
    assert len(pairs) == 2 and max(p.uses for p in pairs) == 2


async def test_observations_are_signals_too(tools: ToolStore) -> None:
    record = ObservationRecord(session="s1", kind=SignalKind.SEARCH, tools=("refund",), query_hash="h")
    signal_id = await tools.record_observation(ALICE, record, utcnow())
    [signal] = await tools.signals(ALICE, kind=SignalKind.SEARCH)
    assert signal.id == signal_id and signal.tools == ["refund"] and signal.tool is None


async def test_templates_recoveries_and_statistics(tools: ToolStore) -> None:
    now = utcnow()
    failed = call(
        "refund",
        ok=False,
        error="bad id",
        error_type="invalid_argument",
        fingerprint="fp1",
        arguments={"id": "x"},
        signature="sig-bad",
    )
    await tools.record_call(ALICE, failed, POLICY, now)
    fixed = await tools.record_call(ALICE, call("refund", arguments={"id": 7}, pattern={"id": "<number>"}), POLICY, now)
    # Shared rows keep shapes: the pattern given for the call, and `CallRecord.shape` of the failed one read back.
    assert fixed.recovery is not None and fixed.recovery.description == "Changed id from '<text>' to '<number>'"
    assert (fixed.recovery.failed_params, fixed.recovery.recovery_params) == ({"id": "<text>"}, {"id": "<number>"})
    again = await tools.record_call(BOB, failed, POLICY, now)
    assert again.suggestion is not None and again.suggestion.recovery_params == {"id": "<number>"}
    [template] = await tools.templates(ALICE, now, tool="refund")
    assert template.successes == 1 and template.user is None and template.params == {"id": "<number>"}
    [signal] = await tools.signals(ALICE, kind=SignalKind.CALL, limit=1)
    assert signal.arguments == {"id": "x"}  # the user's own row keeps the call as given
    await tools.record_call(
        ALICE, call("refund", ok=False, error="timeout", error_type="timeout", fingerprint="fp2"), POLICY, now
    )
    [template] = await tools.templates(ALICE, now, tool="refund")
    assert template.failures == 1
    [better] = await tools.template_feedback(ALICE, [template.id], 1.0, now)
    assert better.confidence > template.confidence
    assert await tools.seed_templates("t1", [(SeedTemplate(intent="i", tool="forecast"), "sig-f")], now) == 1
    [seed] = await tools.templates(ALICE, now, intent="i")
    assert seed.confidence == 0.5 and seed.origin == "seed"
    [pattern] = await tools.recovery_patterns(BOB, now, fingerprint="fp1")
    assert pattern.times_succeeded == 1
    [alice_stats] = await tools.tool_stats(ALICE)
    assert (alice_stats.successes, alice_stats.failures) == (1, 2)
    [tenant_stats] = await tools.tool_stats(TENANT)
    assert (tenant_stats.successes, tenant_stats.failures) == (1, 3)
    knowledge = await tools.knowledge(ALICE, unit_vector("q"), now, failures_since=now - timedelta(days=1))
    assert knowledge.templates and knowledge.recoveries and len(knowledge.failures) == 2
    assert [t.similarity for t in knowledge.templates if t.tool == "refund"] == [pytest.approx(1.0, abs=1e-5)]


async def test_insights_privacy_and_maintenance(tools: ToolStore) -> None:
    now = utcnow()
    draft = InsightDraft("tool_preference", "orders", {"preferred_tool": "refund"}, 3, 0.9)
    assert await tools.put_insights("t1", [draft], now, stale_before=now - timedelta(days=90)) == (1, 0)
    [insight] = await tools.insights("t1", now)
    assert insight.value == {"preferred_tool": "refund"} and await tools.insights("t2", now) == []
    later = now + timedelta(days=100)
    assert await tools.put_insights("t1", [], later, stale_before=later - timedelta(days=90)) == (0, 1)
    assert await tools.privacy("t1", "alice") is None
    await tools.set_privacy("t1", "alice", PrivacyMode.OPT_OUT, now)
    assert await tools.privacy("t1", "alice") is PrivacyMode.OPT_OUT
    await tools.record_call(BOB, call("refund"), POLICY, now)
    assert await tools.maintain("t1", now) == (0, 0, 0)
    assert await tools.maintain("t1", now + timedelta(days=365)) == (1, 0, 1)


async def test_forgetting_a_user_removes_their_tool_data(both: tuple[Store, ToolStore]) -> None:
    store, tools = both
    now = utcnow()
    await tools.record_call(ALICE, call("translate", query="bonjour"), POLICY, now)
    await tools.set_privacy("t1", "alice", PrivacyMode.FULL, now)
    await tools.record_call(BOB, call("refund", query="money back"), POLICY, now)
    removed = await store.forget_user("t1", "alice")
    assert removed["tool_signals"] == 1 and removed["tool_pairs"] == 1 and removed["tool_privacy"] == 1
    assert await tools.signals(ALICE) == [] and await tools.learned_pairs(ALICE, now) == []
    hits = {h.name: h for h in await tools.evidence(BOB, request(unit_vector("bonjour")))}
    assert hits["translate"].learned == 0.0  # gone from the in-memory index too
    assert [s.tool for s in await tools.signals(BOB)] == ["refund"]
    assert await tools.templates(BOB, now, tool="translate")  # shared knowledge stays, with no user on it


async def test_forgetting_keeps_a_users_failed_calls_anonymised(both: tuple[Store, ToolStore]) -> None:
    """Seed 001 §8.10: error logs lose the user and stay for system learning, on every backend."""
    store, tools = both
    now = utcnow()
    failed = call("refund", ok=False, error="no order 7 for Alice", error_type="not_found", fingerprint="fp")
    await tools.record_call(ALICE, replace(failed, arguments={"order_id": "7", "mode": "FULL_REFUND"}), POLICY, now)
    await tools.record_call(ALICE, call("translate", query="bonjour", intent="translation"), POLICY, now)
    removed = await store.forget_user("t1", "alice")
    assert removed["anonymised_failures"] == 1 and removed["tool_signals"] == 1
    assert await tools.signals(ALICE) == []
    [kept] = await tools.signals(Scope(tenant="t1"))
    assert kept.user is None and kept.session == "" and kept.error is None and kept.error_type == "not_found"
    assert kept.arguments == {"mode": "FULL_REFUND", "order_id": "<text>"}
    inputs = await tools.insight_inputs("t1", now - timedelta(days=1), now + timedelta(seconds=1))
    assert inputs.failure_groups == [("not_found", "refund", 1)] and inputs.call_times == []


async def test_another_process_sees_learned_pairs_and_deletions(backend: str, tmp_path: Path) -> None:
    first, first_tools = await open_pair(backend, tmp_path)
    await first_tools.put_tools("t1", [entry(n) for n in NAMES], utcnow())
    second, second_tools = await open_pair(backend, tmp_path)
    vector = unit_vector("bonjour")
    assert {h.name: h.learned for h in await second_tools.evidence(BOB, request(vector))}["translate"] == 0.0
    await first_tools.record_call(ALICE, call("translate", query="bonjour"), POLICY, utcnow())
    assert {h.name: h.learned for h in await second_tools.evidence(BOB, request(vector))}["translate"] > 0
    await first_tools.put_tools("t1", [entry("weather", "new tool")], utcnow())
    assert "weather" in {h.name for h in await second_tools.evidence(BOB, request(unit_vector("weather")))}
    await first.forget_user("t1", "alice")
    assert {h.name: h.learned for h in await second_tools.evidence(BOB, request(vector))}["translate"] == 0.0
    since = utcnow() - timedelta(days=1)
    carol = Scope(tenant="t9", user="carol")
    assert not await second_tools.knowledge(carol, vector, utcnow(), failures_since=since)  # remembered empty
    failed = call("refund", ok=False, error="boom", error_type="error", fingerprint="fp")
    await first_tools.record_call(carol, failed, POLICY, utcnow())
    assert len((await second_tools.knowledge(carol, vector, utcnow(), failures_since=since)).failures) == 1
    dave = Scope(tenant="t8", user="dave")
    assert not await second_tools.knowledge(dave, vector, utcnow(), failures_since=since)
    await second_tools.record_call(dave, failed, POLICY, utcnow())  # and its own writes, of course
    assert len((await second_tools.knowledge(dave, vector, utcnow(), failures_since=since)).failures) == 1
    await first.aclose()
    await second.aclose()
