"""A turn in three requests (`/api/turns`): begin, tool calls, finish — scoped by key, checked, idempotent, and
finishable by another process sharing the database."""

from __future__ import annotations

import asyncio
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
