"""The tool-intelligence API (`/api/tools/...`) on a real server: catalog, routing, signals, templates,
recovery, statistics, evidence, insights, privacy, feedback — their error paths, and who may see what.

Each test uses tenants of its own on the shared server, so they do not see each other's tools.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.server.conftest import RunningServer, error_of
from tests.tools.conftest import CATALOG

pytestmark = pytest.mark.server

FAILED = {"resource": "products", "sort_key": "REVENUE", "limit": 10}
FIXED = {"resource": "products", "sort_key": "BEST_SELLING", "limit": 10}
ERROR = "Invalid sort key REVENUE for products"


def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def _error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error = error_of(response)
    assert error["code"] == code, error
    return error


def _tenant(service: RunningServer, tenant: str) -> str:
    """An admin key of `tenant`, with the test catalog registered."""
    key = service.key(tenant, "admin")
    with service.client(key) as c:
        _ok(c.post("/api/tools/catalog", json={"tools": CATALOG, "server": "shop"}))
    return key


def test_catalog_register_list_get_remove(service: RunningServer) -> None:
    admin = service.key("tools-catalog", "admin")
    with service.client(admin) as c:
        report = _ok(c.post("/api/tools/catalog", json={"tools": CATALOG, "server": "shop"}))
        assert sorted(report["added"]) == sorted(t["name"] for t in CATALOG)
        again = _ok(c.post("/api/tools/catalog", json={"tools": CATALOG, "server": "shop"}))
        assert again["added"] == [] and len(again["unchanged"]) == len(CATALOG)
        listed = _ok(c.get("/api/tools/catalog"))
        assert sorted(t["name"] for t in listed) == sorted(t["name"] for t in CATALOG) and all(
            t["embedded"] for t in listed
        )
        assert _ok(c.get("/api/tools/catalog", params={"server": "other"})) == []
        one = _ok(c.get("/api/tools/catalog/get_forecast"))
        assert one["server"] == "shop" and one["description"].startswith("Weather forecast")

        # Names may hold "/" and "&" (MCP names in the wild do); the path still finds them.
        _ok(c.post("/api/tools/catalog", json={"tools": [{"name": "ns/PDF&URLTool", "description": "Read a PDF"}]}))
        assert _ok(c.get("/api/tools/catalog/ns/PDF&URLTool"))["name"] == "ns/PDF&URLTool"
        assert _ok(c.delete("/api/tools/catalog/ns/PDF&URLTool")) == {"name": "ns/PDF&URLTool", "removed": True}

        # replace: the server's tools not listed go.
        kept = [t for t in CATALOG if t["name"] != "send_email"]
        replaced = _ok(c.post("/api/tools/catalog", json={"tools": kept, "server": "shop", "replace": True}))
        assert replaced["removed"] == ["send_email"]

        _error(c.get("/api/tools/catalog/send_email"), 404, "not_found")
        _error(c.delete("/api/tools/catalog/send_email"), 404, "not_found")
        _error(c.get("/api/tools/catalog/bad name"), 422, "validation_error")
        _error(c.post("/api/tools/catalog", json={"tools": [{"name": "has space"}]}), 422, "validation_error")
        _error(c.post("/api/tools/catalog", json={"tools": [], "extra": 1}), 422, "validation_error")
        deep: dict[str, Any] = {}
        for _ in range(40):
            deep = {"a": deep}
        too_deep = {"tools": [{"name": "deep", "input_schema": deep}]}
        _error(c.post("/api/tools/catalog", json=too_deep), 422, "validation_error")

    app = service.key("tools-catalog", "app")
    with service.client(app) as c:
        _ok(c.post("/api/tools/catalog", json={"tools": [CATALOG[-1]], "server": "shop"}))
    with service.client(service.key("tools-catalog", "user", "alice")) as c:
        assert len(_ok(c.get("/api/tools/catalog"))) == len(CATALOG)  # reading is fine
        _error(c.post("/api/tools/catalog", json={"tools": CATALOG}), 403, "permission_denied")
        _error(c.delete("/api/tools/catalog/get_forecast"), 403, "permission_denied")


def test_route_and_search(service: RunningServer) -> None:
    key = _tenant(service, "tools-route")
    with service.client(key) as c:
        routed = _ok(c.post("/api/tools/route", json={"query": "will it rain in Paris tomorrow?", "k": 3}))
        assert len(routed) == 3 and routed[0]["name"] == "get_forecast"
        assert routed[0]["score"] >= routed[1]["score"] >= routed[2]["score"]
        assert routed[0]["why"].startswith("description ") and routed[0]["description_similarity"] > 0
        baseline = _ok(c.post("/api/tools/route", json={"query": "rain tomorrow?", "k": 3, "learned": False}))
        assert baseline[0]["learned"] == 0.0
        popular = _ok(c.post("/api/tools/route", json={"k": 2}))
        assert len(popular) == 2 and popular[0]["why"].startswith("no context yet")

        found = _ok(c.post("/api/tools/search", json={"query": "convert euros to dollars", "limit": 2}))
        assert found[0]["name"] == "currency_convert" and len(found) == 2

        _error(c.post("/api/tools/route", json={"query": "x", "k": 0}), 422, "validation_error")
        _error(c.post("/api/tools/route", json={"query": "x", "k": 101}), 422, "validation_error")
        _error(c.post("/api/tools/search", json={"query": ""}), 422, "validation_error")
        _error(c.post("/api/tools/route", json={"query": "x", "user": "no spaces allowed"}), 422, "validation_error")


def test_signals_are_classified_by_the_session_window(service: RunningServer) -> None:
    key = _tenant(service, "tools-signals")
    with service.client(key) as c:
        context = {"session": "s1", "query": "rain in Paris?", "user": "ann", "k": 3}
        shown = _ok(c.post("/api/tools/context", json=context))
        listed = [t["name"] for t in shown]
        assert "get_forecast" in listed
        strong = _ok(c.post("/api/tools/calls", json={"session": "s1", "tool": "get_forecast", "user": "ann"}))
        assert strong["strength"] == "strong" and strong["applied"] is True
        unlisted = next(t["name"] for t in CATALOG if t["name"] not in listed)
        _ok(c.post("/api/tools/search", json={"query": "anything", "session": "s1", "user": "ann", "limit": 10}))
        found = _ok(c.post("/api/tools/calls", json={"session": "s1", "tool": unlisted, "user": "ann"}))
        assert found["strength"] == "discovery"
        again = _ok(c.post("/api/tools/calls", json={"session": "s1", "tool": "get_forecast", "user": "ann"}))
        assert again["strength"] == "very_strong"  # listed and found by the search
        # Used although neither listed nor searched: weak, stored now and learned from in the next batch.
        listed = [t["name"] for t in _ok(c.post("/api/tools/context", json={**context, "session": "s3"}))]
        other = next(t["name"] for t in CATALOG if t["name"] not in listed)
        weak = _ok(c.post("/api/tools/calls", json={"session": "s3", "tool": other, "user": "ann"}))
        assert weak["strength"] == "weak" and weak["applied"] is False

        list_id = _ok(c.post("/api/tools/lists", json={"session": "s2", "tools": ["send_email"], "user": "ann"}))["id"]
        body = {"session": "s2", "query": "mail", "results": ["send_email"], "user": "ann"}
        search_id = _ok(c.post("/api/tools/searches", json=body))["id"]
        assert search_id > list_id
        signals = _ok(c.get("/api/tools/signals", params={"session": "s2"}))
        assert [(s["kind"], s["tools"]) for s in signals] == [("list", ["send_email"]), ("search", ["send_email"])]
        calls = _ok(c.get("/api/tools/signals", params={"kind": "call", "user": "ann"}))
        assert [s["tool"] for s in calls] == ["get_forecast", unlisted, "get_forecast", other]

        for path, payload in (
            ("/api/tools/calls", {"session": "s1", "tool": "no_such_tool"}),
            ("/api/tools/lists", {"session": "s1", "tools": ["get_forecast", "no_such_tool"]}),
            ("/api/tools/searches", {"session": "s1", "query": "q", "results": ["no_such_tool"]}),
        ):
            assert _error(c.post(path, json=payload), 404, "not_found")["tools"] == ["no_such_tool"]
        _error(c.post("/api/tools/calls", json={"session": "", "tool": "get_forecast"}), 422, "validation_error")
        _error(
            c.post("/api/tools/calls", json={"session": "s", "tool": "x", "latency_ms": -1}), 422, "validation_error"
        )
        _error(c.post("/api/tools/context", json={"session": "s", "query": ""}), 422, "validation_error")
        _error(c.get("/api/tools/signals", params={"kind": "dance"}), 422, "validation_error")


def test_seed_001_recovery_flow(service: RunningServer) -> None:
    """Fail with the REVENUE sort key, succeed with BEST_SELLING: the fix is suggested the next time, to
    another user too, and shows in the context block."""
    _tenant(service, "tools-recovery")
    app = service.key("tools-recovery", "app")
    with service.client(app) as c:
        context = {"session": "s1", "query": "top products by revenue this month", "user": "alice"}
        _ok(c.post("/api/tools/context", json=context))
        failed = {"session": "s1", "tool": "shop_analytics", "arguments": FAILED, "ok": False, "error": ERROR}
        first = _ok(c.post("/api/tools/calls", json=failed | {"user": "alice"}))
        assert first["suggestion"] is None
        fixed = {"session": "s1", "tool": "shop_analytics", "arguments": FIXED, "latency_ms": 120, "user": "alice"}
        recovery = _ok(c.post("/api/tools/calls", json=fixed))["recovery"]
        assert recovery["description"] == "Changed sort_key from 'REVENUE' to 'BEST_SELLING'"
        [pattern] = _ok(c.get("/api/tools/recoveries"))
        assert pattern["fingerprint"] == recovery["fingerprint"] and pattern["confidence"] == 1.0

        _ok(
            c.post(
                "/api/tools/context", json={"session": "s2", "query": "which products earned the most?", "user": "bob"}
            )
        )
        again = _ok(c.post("/api/tools/calls", json=failed | {"session": "s2", "user": "bob"}))
        assert again["suggestion"]["recovery_params"] == {**FIXED, "limit": "<number>"}  # bob sees the shape only
        asked = {"tool": "shop_analytics", "arguments": FAILED, "error": ERROR, "user": "carol"}
        suggestion = _ok(c.post("/api/tools/recoveries/suggest", json=asked))["suggestion"]
        assert suggestion["description"] == pattern["description"] and suggestion["confidence"] == 1.0
        other = {"tool": "shop_analytics", "arguments": FAILED, "error": "connection refused"}
        assert _ok(c.post("/api/tools/recoveries/suggest", json=other)) == {"suggestion": None}
        block = _ok(c.post("/api/retrieve", json={"query": "top products by revenue", "user": "bob"}))["block"]
        assert "Error recovery patterns" not in block  # applied once: not a pattern to show yet (seed 001 §6.2)
        _ok(c.post("/api/tools/calls", json=fixed | {"session": "s2", "user": "bob"}))
        block = _ok(c.post("/api/retrieve", json={"query": "top products by revenue", "user": "bob"}))["block"]
        assert (
            "If invalid_argument occurs with shop_analytics: Changed sort_key from 'REVENUE' to 'BEST_SELLING'" in block
        )

        [stat] = _ok(c.get("/api/tools/stats", params={"user": "alice"}))
        assert (stat["tool"], stat["successes"], stat["failures"]) == ("shop_analytics", 1, 1)
        detail = _ok(c.get("/api/tools/evidence/shop_analytics"))
        assert detail["evidence"]["pairs"] >= 1 and detail["recoveries"][0]["id"] == pattern["id"]
        assert detail["evidence"]["examples"] == []  # default privacy keeps hashes, not queries
        _error(c.get("/api/tools/evidence/no_such_tool"), 404, "not_found")


def test_templates_best_seed_feedback_and_stats(service: RunningServer) -> None:
    admin = _tenant(service, "tools-templates")
    with service.client(admin) as c:
        context = {"session": "t1", "query": "top products this month", "user": "dan", "intent": "top_products"}
        _ok(c.post("/api/tools/context", json=context))
        call = {"session": "t1", "tool": "shop_analytics", "arguments": FIXED, "latency_ms": 90, "user": "dan"}
        for _ in range(2):
            _ok(c.post("/api/tools/calls", json=call))
        [template] = _ok(c.get("/api/tools/templates", params={"intent": "top_products"}))
        assert (template["successes"], template["failures"], template["confidence"]) == (2, 0, 1.0)
        assert template["avg_latency_ms"] == 90.0 and template["origin"] == "learned"
        best = _ok(c.get("/api/tools/templates/best", params={"intent": "top_products"}))["template"]
        assert best["id"] == template["id"]
        assert _ok(c.get("/api/tools/templates/best", params={"intent": "nothing"})) == {"template": None}

        moved = _ok(c.post("/api/tools/feedback", json={"session": "t1", "score": -1.0}))["templates"]
        assert moved[0]["id"] == template["id"] and moved[0]["confidence"] < 1.0
        assert _ok(c.post("/api/tools/feedback", json={"session": "none", "score": 1.0}))["templates"] == []
        _error(c.post("/api/tools/feedback", json={"session": "t1", "score": 2}), 422, "validation_error")

        [stat] = _ok(c.get("/api/tools/stats", params={"intent": "top_products"}))
        assert (stat["tool"], stat["successes"], stat["success_rate"]) == ("shop_analytics", 2, 1.0)

        seeds = {"templates": [{"intent": "weather", "tool": "get_forecast", "params": {"days": 1}}]}
        assert _ok(c.post("/api/tools/templates/seed", json=seeds)) == {"added": 1}
        assert _ok(c.post("/api/tools/templates/seed", json=seeds)) == {"added": 0}
        [seeded] = _ok(c.get("/api/tools/templates", params={"tool": "get_forecast"}))
        assert seeded["origin"] == "seed" and seeded["confidence"] == 0.5
        _error(c.post("/api/tools/templates/seed", json={"templates": []}), 422, "validation_error")

        # Seed 001 §8.3: when the chosen template fails, the next best is offered and the session skips it.
        context = {"session": "t2", "query": "orders last week", "user": "dan", "intent": "recent_orders"}
        _ok(c.post("/api/tools/context", json=context))
        created = {"resource": "orders", "sort_key": "CREATED_AT"}
        processed = {"resource": "orders", "sort_key": "PROCESSED_AT"}
        for arguments in (processed, created, created):  # tied at 1.0: the more recent leads
            _ok(c.post("/api/tools/calls", json={"session": "t2", "tool": "shop_analytics", "arguments": arguments}))
        best = _ok(c.get("/api/tools/templates/best", params={"intent": "recent_orders"}))["template"]
        down = {"session": "t2", "tool": "shop_analytics", "arguments": created, "ok": False, "error": "unavailable"}
        failed = _ok(c.post("/api/tools/calls", json=down))
        assert failed["template_id"] == best["id"] and best["params"]["sort_key"] == "CREATED_AT"
        assert failed["fallback"]["params"]["sort_key"] == "PROCESSED_AT"
        asked = {"intent": "recent_orders", "session": "t2"}
        assert _ok(c.get("/api/tools/templates/best", params=asked))["template"]["id"] == failed["fallback"]["id"]
    with service.client(service.key("tools-templates", "user", "dan")) as c:
        _error(c.post("/api/tools/templates/seed", json=seeds), 403, "permission_denied")


def test_privacy_evidence_and_insights(service: RunningServer) -> None:
    admin = _tenant(service, "tools-privacy")
    with service.client(admin) as c:
        assert _ok(c.get("/api/tools/privacy/erin")) == {"user": "erin", "mode": "hashed"}
        assert _ok(c.put("/api/tools/privacy/erin", json={"mode": "full"})) == {"user": "erin", "mode": "full"}
        _error(c.put("/api/tools/privacy/erin", json={"mode": "everything"}), 422, "validation_error")
        _ok(c.post("/api/tools/context", json={"session": "p1", "query": "rain in Paris tomorrow?", "user": "erin"}))
        _ok(c.post("/api/tools/calls", json={"session": "p1", "tool": "get_forecast", "user": "erin"}))
        evidence = {e["tool"]: e for e in _ok(c.get("/api/tools/evidence"))}
        assert next(iter(evidence)) == "get_forecast" and len(evidence) == len(CATALOG)
        forecast = evidence["get_forecast"]
        assert forecast["pairs"] == 1 and forecast["examples"] == ["rain in Paris tomorrow?"]
        assert forecast["strengths"] == {"strong": 1} and forecast["successes"] == 1
        assert evidence["send_email"]["pairs"] == 0 and evidence["send_email"]["success_rate"] is None
        # A stricter choice erases the query texts already kept.
        _ok(c.put("/api/tools/privacy/erin", json={"mode": "hashed"}))
        assert _ok(c.get("/api/tools/evidence", params={"user": "erin"}))[0]["examples"] == []

        for n in range(3):  # three failures of one kind make a "common mistake" insight
            failed = {"session": f"f{n}", "tool": "refund_order", "ok": False, "error": "order not found"}
            _ok(c.post("/api/tools/calls", json=failed | {"user": f"u{n}"}))
        report = _ok(c.post("/api/tools/insights/aggregate"))
        assert report["written"] >= 1
        insights = _ok(c.get("/api/tools/insights", params={"type": "common_mistake"}))
        assert [i["key"] for i in insights] == ["not_found:refund_order"]
    with service.client(service.key("tools-privacy", "app")) as c:
        _error(c.post("/api/tools/insights/aggregate"), 403, "permission_denied")
        assert len(_ok(c.get("/api/tools/insights"))) >= 1


def test_keys_reach_only_their_tenant_and_user(service: RunningServer) -> None:
    admin = _tenant(service, "tools-iso-a")
    alice = service.key("tools-iso-a", "user", "alice")
    secret = "bob's secret quarterly ranking"
    with service.client(admin) as c:
        _ok(c.put("/api/tools/privacy/bob", json={"mode": "full"}))
        _ok(c.post("/api/tools/context", json={"session": "bob-s", "query": secret, "user": "bob"}))
        _ok(c.post("/api/tools/calls", json={"session": "bob-s", "tool": "shop_analytics", "user": "bob"}))
        failed = {"session": "bob-s", "tool": "shop_analytics", "arguments": FAILED, "ok": False, "error": ERROR}
        _ok(c.post("/api/tools/calls", json=failed | {"user": "bob"}))
    with service.client(alice) as c:
        # Another user's data, named or reached through their session, is not found.
        for response in (
            c.get("/api/tools/signals", params={"user": "bob"}),
            c.get("/api/tools/templates", params={"user": "bob"}),
            c.get("/api/tools/recoveries", params={"user": "bob"}),
            c.get("/api/tools/stats", params={"user": "bob"}),
            c.get("/api/tools/evidence", params={"user": "bob"}),
            c.get("/api/tools/privacy/bob"),
            c.put("/api/tools/privacy/bob", json={"mode": "opt_out"}),
            c.post("/api/tools/context", json={"session": "bob-s", "query": "hijack"}),
            c.post("/api/tools/calls", json={"session": "bob-s", "tool": "shop_analytics"}),
            c.post("/api/tools/lists", json={"session": "bob-s", "tools": ["send_email"]}),
            c.post("/api/tools/searches", json={"session": "bob-s", "query": "q", "results": ["send_email"]}),
            c.post("/api/tools/search", json={"query": "q", "session": "bob-s"}),
            c.post("/api/tools/feedback", json={"session": "bob-s", "score": -1}),
            c.post("/api/tools/route", json={"query": "q", "user": "bob"}),
            c.post("/api/tools/calls", json={"session": "x", "tool": "send_email", "user": "bob"}),
        ):
            _error(response, 404, "not_found")
        assert _ok(c.get("/api/tools/signals")) == [] and _ok(c.get("/api/tools/stats")) == []
        for params in ({}, {"user": "bob"}):  # the page shows a user-bound key its own view, whatever it asks
            page = c.get("/tools", params=params)
            assert page.status_code == 200 and "shop_analytics" in page.text and "secret quarterly" not in page.text
        # Its own user works, and the session names of other users stay theirs.
        _ok(c.post("/api/tools/context", json={"session": "alice-s", "query": "rain tomorrow?"}))
        mine = _ok(c.post("/api/tools/calls", json={"session": "alice-s", "tool": "get_forecast"}))
        assert mine["strength"] == "strong"
        assert [s["user"] for s in _ok(c.get("/api/tools/signals"))] == ["alice", "alice"]
        _error(c.post("/api/tools/insights/aggregate"), 403, "permission_denied")
    with service.client(admin) as c:
        [bob_call, *_] = _ok(c.get("/api/tools/signals", params={"user": "bob", "kind": "call"}))
        assert bob_call["strength"] == "strong"  # Alice's attempts did not replace Bob's window
        assert "secret quarterly" in c.get("/tools", params={"user": "bob"}).text  # bob's privacy is "full"

    other = service.key("tools-iso-b", "admin")
    with service.client(other) as c:
        assert _ok(c.get("/api/tools/catalog")) == []
        for response in (
            c.get("/api/tools/catalog/shop_analytics"),
            c.delete("/api/tools/catalog/shop_analytics"),
            c.get("/api/tools/evidence/shop_analytics"),
            c.post("/api/tools/calls", json={"session": "bob-s", "tool": "shop_analytics"}),
        ):
            _error(response, 404, "not_found")
        assert _ok(c.get("/api/tools/recoveries")) == [] and _ok(c.get("/api/tools/signals")) == []
        assert _ok(c.post("/api/tools/feedback", json={"session": "bob-s", "score": 1}))["templates"] == []
    with service.client(admin) as c:
        assert len(_ok(c.get("/api/tools/recoveries"))) == 0  # bob failed, then never fixed it
        assert len(_ok(c.get("/api/tools/catalog"))) == len(CATALOG)


def test_observe_feedback_reaches_the_previous_turns_templates(service: RunningServer) -> None:
    """`POST /api/observe` judges the previous turn; the tool templates that turn's calls used move with it."""
    app = _tenant(service, "tools-observe")
    with service.client(app) as c:
        _ok(c.post("/api/tools/context", json={"session": "o1", "query": "top products", "user": "fay"}))
        call = {"session": "o1", "tool": "shop_analytics", "arguments": FIXED, "user": "fay"}
        _ok(c.post("/api/tools/calls", json=call))
        turn = {"user_message": "top products", "assistant_message": "Here.", "user": "fay", "session": "o1"}
        _ok(c.post("/api/observe", json=turn))
        _ok(c.post("/api/tools/context", json={"session": "o1", "query": "and refunds?", "user": "fay"}))
        rated = {**turn, "user_message": "perfect, thanks!", "meta": {"feedback_score": 0.9}}
        outcome = _ok(c.post("/api/observe", json=rated))["feedback"]
        [template] = _ok(c.get("/api/tools/templates", params={"tool": "shop_analytics"}))
        assert outcome["templates"] == [template["id"]] and template["feedback_positive"] == outcome["score"] > 0


def test_route_takes_query_and_context_as_its_deprecated_alias(service: RunningServer) -> None:
    """Issue 17: /route took `context` where /context, /search and the proxy take `query`."""
    key = service.key("tools-route-alias", "admin")
    with service.client(key) as c:
        _ok(c.post("/api/tools/catalog", json={"tools": [{"name": "get_forecast", "description": "Weather"}]}))
        new = c.post("/api/tools/route", json={"query": "rain tomorrow?", "k": 1})
        assert new.status_code == 200 and "Warning" not in new.headers
        old = c.post("/api/tools/route", json={"context": "rain tomorrow?", "k": 1})
        assert old.status_code == 200 and old.json() == new.json()
        assert "deprecated" in old.headers["Warning"] and old.headers["Deprecation"] == "true"
        _error(c.post("/api/tools/route", json={"query": "a", "context": "b"}), 422, "validation_error")
