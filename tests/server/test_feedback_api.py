"""`GET /api/feedback` (the feedback records) and seed 001 §11's metrics in `/api/metrics` and Prometheus."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.server.conftest import RunningServer, error_of
from tests.tools.conftest import CATALOG

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def service(service_on_each_backend: RunningServer) -> RunningServer:
    """SQLite and PostgreSQL: the profile and metrics tables are in the shared SQL layer."""
    return service_on_each_backend


TOP = {"resource": "products", "sort_key": "BEST_SELLING", "limit": 10}


def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def _turn(c: httpx.Client, user: str, message: str, *, call: bool = True) -> None:
    begun = _ok(c.post("/api/turns", json={"message": message, "user": user, "session": user}))
    if call:
        _ok(c.post(f"/api/turns/{begun['id']}/tool-calls", json={"name": "shop_analytics", "arguments": TOP}))
    _ok(c.post(f"/api/turns/{begun['id']}/finish", json={"response": "Here they are."}))


def test_feedback_records_and_the_learning_metrics_over_http(service: RunningServer) -> None:
    tenant = "feedback-api"
    admin = service.key(tenant, "admin")
    with service.client(admin) as c:
        _ok(c.post("/api/tools/catalog", json={"tools": CATALOG, "server": "shop"}))
        _turn(c, "alice", "top products by revenue last month")
        _turn(c, "alice", "perfect, thanks! now top products this month")
        _turn(c, "alice", "no, I meant top products by revenue last week")
        _turn(c, "bob", "top products today")
        service.call(service.loop.for_tenant(tenant).turns.drain())

        records = _ok(c.get("/api/feedback"))
        assert [r["type"] for r in records] == ["follow_up_correction", "explicit_positive"]
        assert records[0]["user"] == "alice" and records[0]["score"] == -0.5 and records[0]["source"] == "message"
        assert [r["type"] for r in _ok(c.get("/api/feedback", params={"type": "explicit_positive"}))] == [
            "explicit_positive"
        ]
        assert _ok(c.get("/api/feedback", params={"user": "bob"})) == []
        assert error_of(c.get("/api/feedback", params={"type": "DROP TABLE"}))["code"] == "validation_error"

        learning = _ok(c.get("/api/metrics", params={"days": 1}))["learning"]
        assert learning["tool_calls"] == 4 and learning["first_try_success_rate"] == 1.0
        assert learning["template_hit_rate"] == 0.75  # one template, made by the first call, reused three times
        assert learning["correction_rate"] == 0.5 and learning["average_response_quality"] == 0.15
        assert learning["cold_start_queries"] == 1.5  # alice's first hit on her 2nd turn, bob's on his 1st
        assert any(p["template_hits"] for p in learning["series"])

        text = c.get("/metrics").text
        assert f'learnloop_template_hit_ratio{{tenant="{tenant}"}} 0.75' in text
        assert f'learnloop_feedback_total{{tenant="{tenant}",type="follow_up_correction"}} 1' in text
        assert "learnloop_first_try_success_ratio" in text and "learnloop_correction_ratio" in text
    bob = service.key(tenant, "user", "bob")
    with service.client(bob) as theirs:
        assert _ok(theirs.get("/api/feedback")) == []  # a user-bound key reads only its own user's
        assert _ok(theirs.get("/api/metrics"))["learning"]["tool_calls"] == 1
