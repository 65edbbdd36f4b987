"""`/api/identities/...`: channel identities resolved, linked by code, unlinked and listed over HTTP, scoped by
key and tenant, with 400 for a wrong code and 429 (and Retry-After) once an identity has guessed too often."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from learnloop.channels.identities import channel_key
from learnloop.stores.identities import LinkPolicy
from tests.server.conftest import RunningServer, error_of

pytestmark = pytest.mark.server

TG = {"channel": "telegram", "channel_user_id": "123456789"}
WA = {"channel": "whatsapp", "channel_user_id": "+44 7700 900123"}


@pytest.fixture(scope="module")
def service(service_on_each_backend: RunningServer) -> RunningServer:
    """SQLite and PostgreSQL: the identity tables are in the shared SQL layer."""
    return service_on_each_backend


def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def test_two_channels_are_linked_and_unlinked_over_http(service: RunningServer) -> None:
    app = service.key("ids-api", "app")
    with service.client(app) as c:
        tg = _ok(c.post("/api/identities/resolve", json={**TG, "username": "ana", "display_name": "Ana"}))
        wa = _ok(c.post("/api/identities/resolve", json=WA))
        assert tg["created"] and tg["user"] != wa["user"]
        _ok(
            c.post(
                "/api/tools/save_learning",
                json={
                    "arguments": {"learning": "User brews stout in 20 L batches", "category": "equipment"},
                    "user": wa["user"],
                },
            )
        )
        wrong = c.post("/api/identities/link", json={**WA, "code": "NOTACODE"})
        assert wrong.status_code == 400 and error_of(wrong)["code"] == "link_code_invalid"
        code = _ok(c.post("/api/identities/link-codes", json=TG))
        assert len(code["code"]) == 8 and code["user"] == tg["user"]
        linked = _ok(c.post("/api/identities/link", json={**WA, "code": code["code"]}))
        assert linked["linked"] and linked["user"] == tg["user"] and linked["learnings_moved"] == 1
        # Used: sent again by the identity that used it, it links nothing more (and finishes a merge cut short);
        # from any other identity it is a wrong code.
        assert not _ok(c.post("/api/identities/link", json={**WA, "code": code["code"]}))["linked"]
        web = {"channel": "web", "channel_user_id": "session-9"}
        _ok(c.post("/api/identities/resolve", json=web))
        assert c.post("/api/identities/link", json={**web, "code": code["code"]}).status_code == 400

        person = _ok(c.get(f"/api/identities/users/{tg['user']}"))
        assert person["display_name"] == "Ana" and person["merged_from"] == [wa["user"]]
        channels = _ok(c.get(f"/api/identities/users/{tg['user']}/identities"))
        assert {(i["channel"], i["masked_id"]) for i in channels} == {("telegram", "•••6789"), ("whatsapp", "•••0123")}
        assert all("7700" not in str(i) for i in channels)  # the phone number never comes back
        recalled = _ok(c.post("/api/retrieve", json={"user": tg["user"], "query": "what does the user brew?"}))
        assert "stout" in recalled["block"]

        assert not _ok(c.post("/api/identities/active", json={**TG, "active": False}))["active"]
        assert not _ok(c.post("/api/identities/resolve", json=TG))["active"]
        assert _ok(c.post("/api/identities/active", json={**TG, "active": True}))["active"]
        gone = _ok(c.post("/api/identities/unlink", json=WA))
        assert gone["previous_user"] == tg["user"] and gone["user"] != tg["user"]
        assert c.post("/api/identities/unlink", json=TG).status_code == 422  # its user's only identity now
        assert (
            c.post("/api/identities/resolve", json={"channel": "Tele gram", "channel_user_id": "1"}).status_code == 422
        )
        assert c.get("/api/identities/users/nobody").status_code == 404


def test_guessing_codes_gets_429_with_the_time_to_retry(service: RunningServer) -> None:
    app = service.key("ids-lock", "app")
    with service.client(app) as c:
        _ok(c.post("/api/identities/resolve", json=TG))
        _ok(c.post("/api/identities/resolve", json=WA))
        statuses = [c.post("/api/identities/link", json={**WA, "code": f"GUESS{n:03d}"}).status_code for n in range(6)]
        assert statuses == [400, 400, 400, 400, 429, 429]
        locked = c.post("/api/identities/link", json={**WA, "code": "GUESS999"})
        assert int(locked.headers["Retry-After"]) > 0 and error_of(locked)["retry_at"]


def test_keys_see_only_their_own_user_and_tenant(service: RunningServer) -> None:
    app = service.key("ids-scope", "app")
    with service.client(app) as c:
        _ok(c.post("/api/identities/resolve", json={**TG, "user": "alice"}))
        _ok(c.post("/api/identities/resolve", json={**WA, "user": "bob"}))
    alice = service.key("ids-scope", "user", "alice")
    with service.client(alice) as mine:
        assert [i["channel"] for i in _ok(mine.get("/api/identities/users/alice/identities"))] == ["telegram"]
        assert mine.get("/api/identities/users/bob").status_code == 404
        assert _ok(mine.post("/api/identities/link-codes", json=TG))["user"] == "alice"
        assert mine.post("/api/identities/link-codes", json=WA).status_code == 404  # bob's identity
        assert mine.post("/api/identities/resolve", json=TG).status_code == 403
    other = service.key("ids-other", "admin")
    with service.client(other) as theirs:
        assert _ok(theirs.get("/api/identities/users/alice/identities")) == []
        assert theirs.get("/api/identities/users/alice").status_code == 404
        assert theirs.post("/api/identities/link-codes", json=TG).status_code == 404


def test_an_admin_finishes_merges_cut_short(service: RunningServer) -> None:
    admin, app = service.key("ids-merge", "admin"), service.key("ids-merge", "app")
    with service.client(app) as c:
        tg = _ok(c.post("/api/identities/resolve", json=TG))
        wa = _ok(c.post("/api/identities/resolve", json=WA))
        code = _ok(c.post("/api/identities/link-codes", json=TG))["code"]
    loop = service.loop.for_tenant("ids-merge")
    # The link committed, the merge did not run (the process died): the store's half of a redemption only.
    store = loop.engine.identities
    assert store is not None
    now, policy = loop.engine.clock(), LinkPolicy(5, 900)
    wa_key = channel_key(WA["channel"], WA["channel_user_id"])
    service.call(store.redeem_code("ids-merge", "whatsapp", wa_key, loop.identities._hash(code), now, policy))
    assert service.call(store.pending_merges("ids-merge")) == [(wa["user"], tg["user"])]
    with service.client(app) as c:
        assert c.post("/api/identities/merges/finish").status_code == 403
    with service.client(admin) as c:
        assert _ok(c.post("/api/identities/merges/finish")) == {"finished": 1}
        assert _ok(c.post("/api/identities/merges/finish")) == {"finished": 0}
        assert _ok(c.get(f"/api/identities/users/{tg['user']}"))["merged_from"] == [wa["user"]]
    assert service.call(store.pending_merges("ids-merge")) == []
