"""One user's tool-call arguments never reach another user: what the tenant shares (templates, recovery
patterns, insights, the prompt section) keeps only call shapes, every stored or shown value passes the write
gate, and forgetting a user leaves nothing of their values behind."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import learnloop
from learnloop.capture.gate import WriteGate
from learnloop.tools import SignalKind
from learnloop.tools.shapes import Redactor, Shaper, schema_constants
from tests.tools.conftest import CATALOG, Clock

EMAIL = "alice@example.com"
API_KEY = "sk-live-4eC39HqLyjWDarjtT1zdp7dc"
NAME = "Alice Liddell"
PRIVATE = (EMAIL, API_KEY, "sk-live", NAME, "Liddell")
ARGS = {"email": EMAIL, "api_key": API_KEY, "customer_name": NAME, "fields": "BILLING_ADDRESS"}
QUERY = "find my customer account and billing address"
LOOKUP = {
    "name": "lookup_customer",
    "description": "Look up a customer's account, billing address and plan by email",
    "input_schema": {"type": "object", "properties": {"email": {"type": "string"}, "fields": {"type": "string"}}},
}


def tool_rows(path: Path, *, shared_only: bool = False) -> str:
    """Every text value of the tool tables (or of their shared rows: user '' and the insights), as one string."""
    conn = sqlite3.connect(path)
    try:
        texts = []
        tables = [
            r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'tool%'")
        ]
        for table in tables:
            columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            where = " WHERE user_id = ''" if shared_only and "user_id" in columns else ""
            if shared_only and table in ("tool_signals", "tool_pairs", "tool_stats", "tool_privacy"):
                continue  # rows of a user, or counts
            for row in conn.execute(f"SELECT * FROM {table}{where}"):
                texts.extend(str(v) for v in row if isinstance(v, str))
        return "\n".join(texts)
    finally:
        conn.close()


def db_path(loop: learnloop.Loop) -> Path:
    return Path(loop.engine.store.path)  # type: ignore[attr-defined]


async def seen_by(loop: learnloop.Loop, user: str) -> str:
    """Everything the tool layer shows `user`: its API reads and the context block of a retrieval."""
    tools = loop.tools
    parts: list[Any] = [
        [t.model_dump(mode="json") for t in await tools.templates(user=user)],
        [r.model_dump(mode="json") for r in await tools.recovery_patterns(user=user)],
        [i.model_dump(mode="json") for i in await tools.insights()],
    ]
    suggestion = await tools.suggest_recovery("lookup_customer", {"fields": "BILLING"}, "Unknown field", user=user)
    parts.append(None if suggestion is None else suggestion.model_dump(mode="json"))
    parts.append((await loop.retrieve_context(user, QUERY, record=False)).block)
    return json.dumps(parts, ensure_ascii=False)


async def alice_looks_herself_up(tools: learnloop.tools.ToolIntelligence) -> None:
    await tools.set_context("a1", QUERY, user="alice", intent="lookup")
    error = f"Unknown field BILLING for {EMAIL} ({NAME})"
    for _ in range(2):  # the fix applied twice: a recovery pattern shown up front (seed 001 §6.2)
        await tools.record_call("a1", "lookup_customer", {**ARGS, "fields": "BILLING"}, ok=False, error=error)
        await tools.record_call("a1", "lookup_customer", ARGS, latency_ms=50)
    await tools.record_call("a1", "lookup_customer", ARGS, latency_ms=50)
    await tools.aggregate_insights()


async def test_review_repro_forgotten_alices_values_are_not_in_bobs_templates(tools_loop: learnloop.Loop) -> None:
    tools = tools_loop.tools
    await tools.register([LOOKUP])
    await tools.set_context("a1", QUERY, user="alice")
    await tools.record_call("a1", "lookup_customer", {"email": EMAIL, "api_key": API_KEY})
    await tools_loop.forget("alice")
    shown = json.dumps([t.model_dump(mode="json") for t in await tools.templates(user="bob")])
    assert "lookup_customer" in shown and EMAIL not in shown and API_KEY not in shown


async def test_one_users_arguments_do_not_leak_to_the_tenant_and_forget_removes_them(
    tools_loop: learnloop.Loop,
) -> None:
    tools = tools_loop.tools
    await tools.register([LOOKUP])
    await alice_looks_herself_up(tools)

    # Alice's own signals keep her call, minus what the write gate refuses: never a key, never an address.
    calls = await tools.signals(user="alice", kind=SignalKind.CALL)
    assert calls[-1].arguments["customer_name"] == NAME
    assert calls[-1].arguments["api_key"].startswith("<redacted:secret.")
    assert calls[-1].arguments["email"] == "<redacted:personal_data.email>"
    assert (
        calls[0].error is not None
        and EMAIL not in calls[0].error
        and "<redacted:personal_data.email>" in calls[0].error
    )
    assert API_KEY not in tool_rows(db_path(tools_loop)) and EMAIL not in tool_rows(db_path(tools_loop))

    # Bob sees what works — the call's shape and the API's constants — and none of Alice's values.
    bob = await seen_by(tools_loop, "bob")
    assert not [p for p in PRIVATE if p in bob]
    [template] = await tools.templates(user="bob", intent="lookup")
    assert template.params == {
        "api_key": "<text>",
        "customer_name": "<text>",
        "email": "<text>",
        "fields": "BILLING_ADDRESS",
    }
    [pattern] = await tools.recovery_patterns(user="bob")
    assert pattern.description == "Changed fields from 'BILLING' to 'BILLING_ADDRESS'"
    assert "Proven query templates" in bob and "Error recovery patterns" in bob
    assert not [p for p in PRIVATE if p in tool_rows(db_path(tools_loop), shared_only=True)]
    # Her past errors are shown to her only, gated like everything else.
    await tools.record_call("a1", "lookup_customer", ARGS, ok=False, error=f"timed out looking up {EMAIL}")
    alice = (await tools_loop.retrieve_context("alice", QUERY, record=False)).block
    assert "- [lookup_customer] timeout: timed out looking up <redacted:personal_data.email>" in alice

    await tools_loop.forget("alice")
    assert not [p for p in PRIVATE if p in tool_rows(db_path(tools_loop))]
    assert not [p for p in PRIVATE if p in await seen_by(tools_loop, "bob")]
    assert [t.params for t in await tools.templates(user="bob", intent="lookup")] == [template.params]


async def test_shared_rows_written_before_shapes_are_scrubbed_before_anyone_reads_them(
    open_loop: Callable[..., learnloop.Loop], clock: Clock
) -> None:
    first = open_loop("legacy.db", clock=clock)
    first.tools.configure(insight_every=0)
    await first.tools.register([*CATALOG, LOOKUP])
    await alice_looks_herself_up(first.tools)
    await first.tools.drain()
    await first.aclose()
    # What the shared rows held before shapes: the first caller's values, verbatim.
    conn = sqlite3.connect(db_path(first))
    with conn:
        conn.execute("UPDATE tool_templates SET params = ? WHERE user_id = ''", (json.dumps(ARGS),))
        conn.execute(
            "UPDATE tool_recoveries SET failed_params = ?, recovery_params = ?, description = ? WHERE user_id = ''",
            (json.dumps({**ARGS, "fields": "BILLING"}), json.dumps(ARGS), f"Changed customer_name to '{NAME}'"),
        )
        lessons = json.dumps({"description": "x", "count": 3, "lessons": [f"Added email='{EMAIL}'"]})
        conn.execute(
            "INSERT INTO tool_insights (tenant, type, key, value, sample_size, confidence, updated_at) "
            "VALUES ('default', 'common_mistake', 'invalid_argument:lookup_customer', ?, 3, 0.5, 0)",
            (lessons,),
        )
        conn.execute(
            "UPDATE tool_insights SET value = json_set(value, '$.params', json(?)) WHERE type = 'best_practice'",
            (json.dumps(ARGS),),
        )
    conn.close()
    assert NAME in tool_rows(db_path(first), shared_only=True)

    second = open_loop("legacy.db", clock=clock)
    try:
        # The retrieval path reads the store directly: it scrubs too, before the first block is built.
        block = (await second.retrieve_context("bob", QUERY, record=False)).block
        assert "Proven query templates" in block and not [p for p in PRIVATE if p in block]
        assert not [p for p in PRIVATE if p in tool_rows(db_path(second), shared_only=True)]
        assert not [p for p in PRIVATE if p in await seen_by(second, "bob")]
        [pattern] = await second.tools.recovery_patterns(user="bob")
        assert pattern.description == "Changed fields from 'BILLING' to 'BILLING_ADDRESS'"
        assert await second.tools.scrub_shared() == 0  # nothing left to change
        assert [i.value["lessons"] for i in await second.tools.insights(type="common_mistake")] == [[]]
    finally:
        await second.aclose()


def test_the_gate_redacts_values_and_texts_and_shapes_keep_only_constants() -> None:
    redactor = Redactor.of(WriteGate())
    assert Redactor.of(WriteGate()) is not redactor and Redactor.default() is Redactor.default()
    raw = {"aws": "AKIAQ7ZKX4J2M5RTWB6N", "sort_key": "BEST_SELLING", "order_id": "A7", "nested": {"to": EMAIL}}
    gated = redactor.arguments(raw)
    assert gated == {
        "aws": "<redacted:secret.ds.aws>",
        "sort_key": "BEST_SELLING",
        "order_id": "A7",  # the user's own row keeps what is not a secret or personal data
        "nested": {"to": "<redacted:personal_data.email>"},
    }
    text = redactor.text(f"No account for {EMAIL}; password: hunter2222 is wrong")
    assert text == "No account for <redacted:personal_data.email> password: <redacted:secret.ds.keyword> is wrong"
    assert redactor.text("Invalid sort key REVENUE for products") == "Invalid sort key REVENUE for products"

    shaper = Shaper(redactor, {}, {"shop": schema_constants({"properties": {"kind": {"enum": ["products"]}}})})
    params = {**raw, "kind": "products", "other": "pickles", "limit": 10, "flag": True}
    shape = shaper.shape("shop", params)
    assert shape == {
        "aws": "<text>",  # an UPPER_SNAKE value the gate refuses is no constant
        "flag": True,
        "kind": "products",  # declared by the tool's schema
        "limit": "<number>",
        "nested": {"to": "<text>"},
        "order_id": "<text>",  # a record id, not a constant
        "other": "<text>",
        "sort_key": "BEST_SELLING",
    }
    # Idempotent, and the same from the gated arguments a store reads back: a recovery is described alike.
    assert shaper.shape("shop", shape) == shape and shaper.shape("shop", redactor.arguments(params)) == shape
    assert shaper.signature("shop", params) == shaper.signature("shop", {**params, "limit": 99, "order_id": "B8"})
    named = Shaper(redactor, {"shop": ["other"]})
    assert named.shape("shop", params)["other"] == "pickles"  # the app named it: identifier-like values stay
