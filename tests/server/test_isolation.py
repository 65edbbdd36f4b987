"""Two tenants and user-bound keys: no key can read, change or stream another tenant's or user's data.

Everything outside a key's reach answers 404, exactly like an id that does not exist; only role limits
(a user key changing the tenant's vocabulary) are 403.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import httpx
import pytest

from tests.server.conftest import RunningServer, error_of

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def service(service_on_each_backend: RunningServer) -> RunningServer:
    return service_on_each_backend


A, B = "iso-a", "iso-b"


@pytest.fixture(scope="module")
def world(service: RunningServer) -> dict[str, Any]:
    keys = {
        "a_app": service.key(A, "app"),
        "a_alice": service.key(A, "user", "alice"),
        "a_bob": service.key(A, "user", "bob"),
        "b_admin": service.key(B, "admin"),
        "b_alice": service.key(B, "user", "alice"),
    }
    ids = {
        "alice": service.save(keys["a_app"], "Alice's kettle boils off 3 L/hr", "equipment", "alice")["learning_id"],
        "bob": service.save(keys["a_app"], "Bob's secret recipe uses 40 g of Citra", "recipe", "bob")["learning_id"],
        "global": service.save(keys["a_app"], "The club's mill gap is 1.0 mm", "equipment", None)["learning_id"],
        "other_tenant": service.save(keys["b_admin"], "Alice (tenant B) mashes at 69 °C", "technique", "alice")[
            "learning_id"
        ],
    }
    return {"keys": keys, "ids": ids}


def _ids(response: httpx.Response) -> set[int]:
    assert response.status_code == 200, response.text
    return {item["id"] for item in response.json()["items"]}


def test_user_key_reads_only_its_own_and_global(service: RunningServer, world: dict[str, Any]) -> None:
    ids = world["ids"]
    with service.client(world["keys"]["a_alice"]) as c:
        assert _ids(c.get("/api/learnings")) == {ids["alice"], ids["global"]}
        assert c.get(f"/api/learnings/{ids['global']}").status_code == 200
        for hidden in (ids["bob"], ids["other_tenant"]):
            for path in (f"/api/learnings/{hidden}", f"/api/learnings/{hidden}/history"):
                response = c.get(path)
                assert response.status_code == 404 and error_of(response)["code"] == "not_found", path
        assert c.get("/api/learnings", params={"user": "bob"}).status_code == 404
        assert c.get("/api/learnings/recent", params={"user": "bob"}).status_code == 404
        assert c.get("/api/export", params={"user": "bob"}).status_code == 404
        assert c.post("/api/retrieve", json={"query": "recipe", "user": "bob"}).status_code == 404
        recalled = c.post("/api/retrieve", json={"query": "Citra hops recipe mash kettle"}).json()
        assert {i["learning"]["id"] for i in recalled["items"]} <= {ids["alice"], ids["global"]}
        assert "Citra" not in recalled["block"]
        exported = c.get("/api/export").text
        assert "Citra" not in exported and "69 °C" not in exported
        metrics = c.get("/api/metrics").json()
        assert metrics["totals"]["refusals_by_rule"] == {} and metrics["user"] == "alice"


def test_user_key_changes_nothing_of_others(service: RunningServer, world: dict[str, Any]) -> None:
    ids = world["ids"]
    with service.client(world["keys"]["a_alice"]) as c:
        for target in (ids["bob"], ids["global"], ids["other_tenant"]):
            assert c.put(f"/api/learnings/{target}", json={"text": "overwritten"}).status_code == 404
            assert c.delete(f"/api/learnings/{target}").status_code == 404
            assert c.post(f"/api/learnings/{target}/deprecate", json={"reason": "x"}).status_code == 404
            # The global learning is readable, so "already verified" (409) tells alice nothing new.
            assert c.post(f"/api/learnings/{target}/promote").status_code in (
                (404, 409) if target == ids["global"] else (404,)
            )
        save_for_bob = {"arguments": {"learning": "Bob likes stouts", "category": "recipe"}, "user": "bob"}
        assert c.post("/api/tools/save_learning", json=save_for_bob).status_code == 404
        assert c.post("/api/observe", json={"user_message": "I use 5 kg malt", "user": "bob"}).status_code == 404
        assert c.post("/api/learnings/purge-deprecated", json={"user": "bob"}).status_code == 404
        assert c.post("/api/import", params={"user": "bob"}, content="").status_code == 404
        assert c.delete("/api/users/bob").status_code == 404
        denied = c.put("/api/vocabulary", json={"categories": [{"name": "x", "description": "y"}]})
        assert denied.status_code == 403 and error_of(denied)["code"] == "permission_denied"
        # Its own saves land under its own user, whatever the body says when it names no one.
        own = c.post(
            "/api/tools/save_learning", json={"arguments": {"learning": "Alice uses RO water", "category": "technique"}}
        )
        assert own.json()["learning"]["user"] == "alice"
    with service.client(world["keys"]["a_app"]) as app:
        bob = app.get(f"/api/learnings/{ids['bob']}").json()
        assert bob["text"] == "Bob's secret recipe uses 40 g of Citra" and bob["status"] == "verified"
        assert app.get(f"/api/learnings/{ids['global']}").json()["text"] == "The club's mill gap is 1.0 mm"


def test_other_tenant_is_not_found(service: RunningServer, world: dict[str, Any]) -> None:
    ids = world["ids"]
    for key in (world["keys"]["b_admin"], world["keys"]["b_alice"]):
        with service.client(key) as c:
            assert ids["alice"] not in _ids(c.get("/api/learnings", params={"limit": 200}))
            for target in (ids["alice"], ids["bob"], ids["global"]):
                assert c.get(f"/api/learnings/{target}").status_code == 404
                assert c.put(f"/api/learnings/{target}", json={"text": "overwritten"}).status_code == 404
                assert c.delete(f"/api/learnings/{target}").status_code == 404
                assert c.post(f"/api/learnings/{target}/promote").status_code == 404
                assert c.get(f"/api/learnings/{target}/history").status_code == 404
    with service.client(world["keys"]["b_admin"]) as c:
        # Forgetting "alice" in tenant B leaves tenant A's alice alone.
        c.delete("/api/users/alice").raise_for_status()
    with service.client(world["keys"]["a_app"]) as app:
        assert app.get(f"/api/learnings/{ids['alice']}").status_code == 200
        assert app.get(f"/api/learnings/{ids['other_tenant']}").status_code == 404


def _stream(service: RunningServer, key: str, seconds: float, out: list[dict[str, Any]], **params: Any) -> None:
    with service.client(key) as c, c.stream("GET", "/api/events", params={"max_seconds": seconds, **params}) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if line.startswith("data: "):
                out.append(json.loads(line[6:]))


def test_streams_carry_only_the_keys_own_events(service: RunningServer, world: dict[str, Any]) -> None:
    keys, ids = world["keys"], world["ids"]
    seen: dict[str, list[dict[str, Any]]] = {"a_alice": [], "b_admin": [], "a_app": []}
    threads = [
        threading.Thread(target=_stream, args=(service, keys[name], 2.5, seen[name]), kwargs={"after": 0})
        for name in seen
    ]
    for t in threads:
        t.start()
    service.save(keys["a_app"], "Bob's fermenter is a Fermzilla", "equipment", "bob")
    service.save(keys["a_app"], "Alice's chiller is a plate chiller", "equipment", "alice")
    service.save(keys["b_admin"], "Tenant B's alice uses a counterflow chiller", "equipment", "alice")
    for t in threads:
        t.join()
    alice = seen["a_alice"]
    assert alice and {e["tenant"] for e in alice} == {A}
    assert {e["user"] for e in alice} <= {"alice", None}
    assert not any("Bob" in (e["summary"] or "") or "counterflow" in e["summary"] for e in alice)
    assert any("plate chiller" in e["summary"] for e in alice)
    assert {e["tenant"] for e in seen["b_admin"]} == {B}
    assert not any(e["learning_id"] in (ids["alice"], ids["bob"]) for e in seen["b_admin"])
    assert {e["user"] for e in seen["a_app"]} >= {"alice", "bob"} and {e["tenant"] for e in seen["a_app"]} == {A}
    with service.client(keys["a_alice"]) as c:
        assert c.get("/api/events", params={"user": "bob", "max_seconds": 0.1}).status_code == 404
