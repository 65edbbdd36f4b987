"""`/api/profiles/{user}`: a user's profile read, edited and forgotten over HTTP, scoped by key."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.server.conftest import RunningServer, error_of

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def service(service_on_each_backend: RunningServer) -> RunningServer:
    """SQLite and PostgreSQL: the profile and metrics tables are in the shared SQL layer."""
    return service_on_each_backend


def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def _turns(service: RunningServer, client: httpx.Client, tenant: str, user: str, messages: list[str]) -> None:
    for index, message in enumerate(messages):
        begun = _ok(client.post("/api/turns", json={"message": message, "user": user, "session": f"{user}{index}"}))
        _ok(client.post(f"/api/turns/{begun['id']}/finish", json={"response": "Here."}))
    service.call(service.loop.for_tenant(tenant).turns.drain())


def test_a_profile_is_read_edited_and_forgotten(service: RunningServer) -> None:
    admin = service.key("profiles-api", "admin")
    alice = service.key("profiles-api", "user", "alice")
    with service.client(admin) as c:
        assert error_of(c.get("/api/profiles/alice"))["code"] == "not_found"
        _turns(service, c, "profiles-api", "alice", ["revenue last month?", "orders last month", "revenue last month"])
        profile = _ok(c.get("/api/profiles/alice"))
        assert profile["interactions"] == 3 and profile["preferred_time_range"] == "last_month"
        assert profile["favourite_metrics"][0] == "revenue"
        edited = _ok(c.put("/api/profiles/alice", json={"favourite_metrics": ["orders"]}))
        assert edited["favourite_metrics"] == ["orders"] and edited["preferred_time_range"] == "last_month"
        assert error_of(c.put("/api/profiles/alice", json={"favourite_metrics": [""]}))["code"] == "validation_error"
        assert error_of(c.put("/api/profiles/alice", json={"colour": "red"}))["code"] == "validation_error"
        assert error_of(c.delete("/api/profiles/alice", params={"kind": "mood"}))["code"] == "validation_error"
        assert _ok(c.delete("/api/profiles/alice", params={"kind": "time_range", "value": "last_month"})) == {
            "removed": 1
        }
    with service.client(alice) as mine:
        assert _ok(mine.get("/api/profiles/alice"))["preferred_time_range"] is None
        assert mine.get("/api/profiles/bob").status_code == 404  # another user's is not there for this key
        assert _ok(mine.delete("/api/profiles/alice"))["removed"] > 0
        assert mine.get("/api/profiles/alice").status_code == 404
