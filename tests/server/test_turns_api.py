"""A turn in three requests (`/api/turns`): begin, tool calls, finish — scoped by key, checked, idempotent, and
finishable by another process sharing the database."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

import learnloop
from tests.server.conftest import RunningServer, error_of
from tests.tools.conftest import CATALOG

pytestmark = pytest.mark.server

TOP = {"resource": "products", "sort_key": "BEST_SELLING", "limit": 10}


def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def _error(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert error_of(response)["code"] == code, response.text


def test_the_turn_in_three_requests(service: RunningServer) -> None:
    admin = service.key("turns-api", "admin")
    with service.client(admin) as c:
        _ok(c.post("/api/tools/catalog", json={"tools": CATALOG, "server": "shop"}))
        begun = _ok(c.post("/api/turns", json={"message": "top products this month", "user": "alice", "session": "s1"}))
        assert begun["status"] == "open" and begun["tools"] and isinstance(begun["context"], str)
        turn = begun["id"]
        one = _ok(c.post(f"/api/turns/{turn}/tool-calls", json={"name": "shop_analytics", "arguments": TOP, "ms": 80}))
        two = _ok(
            c.post(f"/api/turns/{turn}/tool-calls", json={"name": "send_email", "error": "SMTP timeout", "ms": 3})
        )
        assert (one["tool_calls"], two["tool_calls"]) == (1, 2)
        finished = _ok(c.post(f"/api/turns/{turn}/finish", json={"response": "Here they are."}))
        assert finished["status"] in ("finished", "done")
        again = _ok(c.post(f"/api/turns/{turn}/finish", json={"response": "retried"}))
        assert again["response"] == "Here they are."
        _error(c.post(f"/api/turns/{turn}/tool-calls", json={"name": "late"}), 409, "conflict")
        service.call(service.loop.for_tenant("turns-api").turns.drain())
        record = _ok(c.get(f"/api/turns/{turn}"))
        assert record["status"] == "done" and set(record["steps"]) >= {"signals", "observe", "log"}
        assert [t["id"] for t in _ok(c.get("/api/turns", params={"session": "s1"}))] == [turn]


def test_turns_are_scoped_and_checked(service: RunningServer) -> None:
    admin = service.key("turns-scope", "admin")
    alice, bob = service.key("turns-scope", "user", "alice"), service.key("turns-scope", "user", "bob")
    with service.client(admin) as c:
        _error(c.post("/api/turns", json={"message": "hello"}), 422, "user_required")
        _error(c.post("/api/turns", json={"message": "", "user": "alice"}), 422, "validation_error")
        _error(c.post("/api/turns/nope/finish", json={}), 404, "not_found")
    with service.client(alice) as c:
        turn = _ok(c.post("/api/turns", json={"message": "what did I buy last week?"}))["id"]
    with service.client(bob) as c:
        _error(c.get(f"/api/turns/{turn}"), 404, "not_found")
        _error(c.post(f"/api/turns/{turn}/finish", json={"response": "x"}), 404, "not_found")
    with service.client(service.key("turns-other", "admin")) as c:
        _error(c.get(f"/api/turns/{turn}"), 404, "not_found")
    with service.client(alice) as c:
        assert _ok(c.get(f"/api/turns/{turn}"))["status"] == "open"


def test_another_process_finishes_a_turn_begun_over_http(service: RunningServer) -> None:
    with service.client(service.key("turns-shared", "admin")) as c:
        turn = _ok(c.post("/api/turns", json={"message": "top products", "user": "alice", "session": "s9"}))["id"]

    async def elsewhere() -> str:
        other = learnloop.open(str(service.db)).for_tenant("turns-shared")
        try:
            finished = await other.turns.finish(turn, "Here.", user="alice")
            await other.turns.drain()
            return finished.status
        finally:
            await other.aclose()

    assert asyncio.run(elsewhere()) == "finished"
    with service.client(service.key("turns-shared", "admin")) as c:
        assert _ok(c.get(f"/api/turns/{turn}"))["status"] == "done"


def test_a_repeat_on_another_channel_gets_the_first_answer_and_learns_nothing(service: RunningServer) -> None:
    admin = service.key("turns-dup", "admin")
    start = datetime.now(UTC)
    message = {"message": "Top products this month?", "user": "alice"}
    with service.client(admin) as c:
        first = _ok(c.post("/api/turns", json={**message, "session": "tg-1", "channel": "telegram"}))
        assert first["duplicate_of"] is None and first["response"] is None and first["channel"] == "telegram"
        call = {"name": "shop_analytics", "arguments": TOP, "ms": 80, "call_id": "call_1"}
        assert _ok(c.post(f"/api/turns/{first['id']}/tool-calls", json=call))["tool_calls"] == 1
        assert _ok(c.post(f"/api/turns/{first['id']}/tool-calls", json=call))["tool_calls"] == 1  # a retry
        # While the first is open, a copy is told so: no answer yet.
        early = _ok(c.post("/api/turns", json={**message, "message": "top products  this month?", "session": "w"}))
        assert early["duplicate_of"] == first["id"] and early["response"] is None
        _ok(c.post(f"/api/turns/{first['id']}/finish", json={"response": "Boots and scarves."}))
        again = _ok(c.post("/api/turns", json={**message, "session": "wa-1", "channel": "whatsapp"}))
        assert again["duplicate_of"] == first["id"] and again["response"] == "Boots and scarves."
        assert _ok(c.get(f"/api/turns/{early['id']}"))["response"] == "Boots and scarves."  # polled: now answered
        finished = _ok(c.post(f"/api/turns/{again['id']}/finish", json={"response": "another"}))
        assert finished["response"] == "Boots and scarves." and finished["duplicate_of"] == first["id"]
        service.call(service.loop.for_tenant("turns-dup").turns.drain())
        record = _ok(c.get(f"/api/turns/{first['id']}"))
        assert record["steps"]["signals"]["calls"] == 1
        assert record["tool_calls_json"] == [{"tool": "shop_analytics", "params": TOP, "success": True, "time_ms": 80}]
        # 31 s later (the request's own time) the same message is a turn of its own.
        later = {**message, "session": "wa-1", "at": (start + timedelta(seconds=45)).isoformat()}
        assert _ok(c.post("/api/turns", json=later))["duplicate_of"] is None
        listed = _ok(c.get("/api/turns", params={"user": "alice", "channel": "whatsapp"}))
        assert [t["id"] for t in listed][-1] == again["id"] and {t["channel"] for t in listed} == {"whatsapp"}
        metrics = _ok(c.get("/api/metrics", params={"channel": "telegram"}))
        assert metrics["learning"]["channel"] == "telegram" and metrics["learning"]["tool_calls"] == 1
        assert _ok(c.get("/api/metrics", params={"channel": "whatsapp"}))["learning"]["tool_calls"] == 0
        _error(c.get("/api/metrics", params={"channel": "no spaces"}), 422, "validation_error")
