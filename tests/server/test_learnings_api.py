"""`/api/learnings` through a real server: list, filter, paginate, update, delete, lifecycle, history, errors."""

from __future__ import annotations

import pytest

from tests.server.conftest import RunningServer, error_of

pytestmark = pytest.mark.server

TENANT = "learnings-api"


@pytest.fixture(scope="module")
def key(service: RunningServer) -> str:
    return service.key(TENANT, "admin")


@pytest.fixture(scope="module")
def saved(service: RunningServer, key: str) -> dict[str, int]:
    """Three learnings of two users, saved through the tool endpoint."""
    ids = {}
    ids["boil"] = service.save(key, "Grainfather Gen 1 boil-off rate is ~3.5 L/hr", "equipment", "ann")["learning_id"]
    ids["mash"] = service.save(key, "Ann mashes at 66 °C for a drier finish", "technique", "ann")["learning_id"]
    ids["yeast"] = service.save(key, "US-05 attenuates to ~82% in Ben's system", "ingredient", "ben")["learning_id"]
    return ids


def test_list_filters_and_paginates(service: RunningServer, key: str, saved: dict[str, int]) -> None:
    with service.client(key) as c:
        everything = c.get("/api/learnings").json()
        assert everything["total"] == 3
        assert [i["id"] for i in everything["items"]] == sorted(saved.values(), reverse=True)  # newest first
        assert c.get("/api/learnings", params={"category": "equipment"}).json()["total"] == 1
        assert c.get("/api/learnings", params={"user": "ben"}).json()["items"][0]["id"] == saved["yeast"]
        found = c.get("/api/learnings", params={"text": "boil"}).json()
        assert [i["id"] for i in found["items"]] == [saved["boil"]]
        assert c.get("/api/learnings", params={"status": "deprecated"}).json()["total"] == 0
        first = c.get("/api/learnings", params={"limit": 2}).json()
        second = c.get("/api/learnings", params={"limit": 2, "offset": 2}).json()
        assert len(first["items"]) == 2 and len(second["items"]) == 1
        assert {i["id"] for i in first["items"] + second["items"]} == set(saved.values())
        assert c.get(f"/api/learnings/{saved['mash']}").json()["category"] == "technique"


def test_update_changes_text_and_category(service: RunningServer, key: str) -> None:
    learning_id = service.save(key, "Ann's kettle dead space is 1.5 litres", "equipment", "ann")["learning_id"]
    with service.client(key) as c:
        response = c.put(f"/api/learnings/{learning_id}", json={"text": "Ann's kettle dead space is 1.2 litres"})
        assert response.status_code == 200, response.text
        assert response.json()["text"] == "Ann's kettle dead space is 1.2 litres"
        assert response.json()["version"] == 2
        moved = c.put(f"/api/learnings/{learning_id}", json={"category": "correction", "tags": ["kettle"]}).json()
        assert moved["category"] == "correction" and moved["tags"] == ["kettle"]
        assert c.get(f"/api/learnings/{learning_id}").json()["text"] == "Ann's kettle dead space is 1.2 litres"
        history = c.get(f"/api/learnings/{learning_id}/history").json()
        assert [e["action"] for e in history] == ["created", "edited", "edited"]


def test_delete_removes_from_listing_and_retrieval(service: RunningServer, key: str) -> None:
    text = "Ann's plate chiller cools 20 litres to 20 °C in 12 minutes"
    learning_id = service.save(key, text, "equipment", "ann")["learning_id"]
    query = {"query": "how long does chilling 20 litres take", "user": "ann"}
    with service.client(key) as c:
        before = c.post("/api/retrieve", json=query).json()
        assert learning_id in [i["learning"]["id"] for i in before["items"]]
        response = c.delete(f"/api/learnings/{learning_id}")
        assert response.status_code == 200 and response.json() == {"id": learning_id, "deleted": True}
        after = c.post("/api/retrieve", json=query).json()
        assert learning_id not in [i["learning"]["id"] for i in after["items"]]
        assert text not in after["block"]
        assert error_of(c.get(f"/api/learnings/{learning_id}"))["code"] == "not_found"
        assert c.delete(f"/api/learnings/{learning_id}").status_code == 404


def test_lifecycle_promote_deprecate_restore(service: RunningServer, key: str) -> None:
    with service.client(key) as c:
        vocabulary = c.get("/api/vocabulary").json()
        assert "equipment" in [cat["name"] for cat in vocabulary["categories"]]
        # An observed teaching moment is stored as a candidate.
        observed = c.post(
            "/api/observe",
            json={
                "user_message": "Actually my Anvil Foundry boils off 2.8 litres per hour, not 4.",
                "assistant_message": "Noted.",
                "user": "cara",
                "session": "s1",
            },
        ).json()
        stored = [r for r in observed["saved"] if r["action"] == "created"]
        assert stored, observed
        learning_id = stored[0]["learning"]["id"]
        assert stored[0]["learning"]["status"] == "candidate"
        assert (
            c.post(f"/api/learnings/{learning_id}/promote", json={"reason": "checked"}).json()["status"] == "verified"
        )
        conflict = c.post(f"/api/learnings/{learning_id}/promote")
        assert conflict.status_code == 409 and error_of(conflict)["code"] == "invalid_transition"
        deprecated = c.post(f"/api/learnings/{learning_id}/deprecate", json={"reason": "new kettle"}).json()
        assert deprecated["status"] == "deprecated"
        restored = c.post(f"/api/learnings/{learning_id}/restore", json={"status": "verified"}).json()
        assert restored["status"] == "verified"
        actions = [e["action"] for e in c.get(f"/api/learnings/{learning_id}/history").json()]
        assert actions == ["created", "promoted", "deprecated", "restored"]
        recent = c.get("/api/learnings/recent", params={"user": "cara"}).json()
        assert recent[0]["id"] == learning_id


def test_purge_deprecated(service: RunningServer, key: str) -> None:
    learning_id = service.save(key, "Dan's old fermenter holds 23 litres", "equipment", "dan")["learning_id"]
    with service.client(key) as c:
        c.post(f"/api/learnings/{learning_id}/deprecate", json={"reason": "sold it"}).raise_for_status()
        assert c.post("/api/learnings/purge-deprecated", json={"older_than_days": 1, "user": "dan"}).json() == {
            "purged": []
        }
        purged = c.post("/api/learnings/purge-deprecated", json={"older_than_days": 0, "user": "dan"}).json()
        assert purged == {"purged": [learning_id]}
        assert c.get(f"/api/learnings/{learning_id}").status_code == 404


def test_error_paths(service: RunningServer, key: str, saved: dict[str, int]) -> None:
    with service.client(key) as c:
        missing = c.get("/api/learnings/999999")
        assert missing.status_code == 404 and error_of(missing)["code"] == "not_found"
        assert c.put("/api/learnings/999999", json={"text": "x y z"}).status_code == 404
        assert c.post("/api/learnings/999999/promote").status_code == 404
        assert c.get("/api/learnings/999999/history").status_code == 404
        bad = c.put(f"/api/learnings/{saved['boil']}", json={"category": "astrology"})
        assert bad.status_code == 422
        assert error_of(bad)["code"] == "invalid_category"
        assert error_of(bad)["allowed"] == ["equipment", "technique", "recipe", "ingredient", "correction"]
        empty = c.put(f"/api/learnings/{saved['boil']}", json={"text": ""})
        assert empty.status_code == 422 and error_of(empty)["code"] == "validation_error"
        unknown_field = c.put(f"/api/learnings/{saved['boil']}", json={"colour": "red"})
        assert unknown_field.status_code == 422
        assert c.get("/api/learnings/not-a-number").status_code == 422
        assert c.get("/api/learnings", params={"limit": 0}).status_code == 422
        assert c.get("/api/learnings", params={"status": "maybe"}).status_code == 422
        malformed = c.put(
            f"/api/learnings/{saved['boil']}", content=b"{not json", headers={"content-type": "application/json"}
        )
        assert malformed.status_code == 422 and error_of(malformed)["code"] == "validation_error"
        no_post = c.post("/api/learnings", json={"text": "x"})
        assert no_post.status_code == 405 and error_of(no_post)["code"] == "method_not_allowed"
        assert error_of(c.get("/api/nothing-here"))["code"] == "not_found"
    with service.client() as anonymous:
        response = anonymous.get("/api/learnings")
        assert response.status_code == 401 and error_of(response)["code"] == "unauthenticated"
        assert response.headers["www-authenticate"] == "Bearer"
    with service.client("ll_0123456789abcdef_" + "x" * 43) as wrong:
        assert error_of(wrong.get("/api/learnings"))["code"] == "unauthenticated"
    with service.client("not-a-key") as garbage:
        assert garbage.get("/api/learnings").status_code == 401
