"""Issue 17 over HTTP: /restore on a learning that is not deprecated, and /promote on a deprecated one, are 409s
that change nothing; /confirm is MCP's confirm_learning."""

from __future__ import annotations

import pytest

from tests.server.conftest import RunningServer, error_of

pytestmark = pytest.mark.server

TENANT = "lifecycle-routes"


def test_restore_promote_and_confirm(service: RunningServer) -> None:
    key = service.key(TENANT, "admin")
    saved = service.save(key, "Quinn's kettle holds 30 litres of wort", "equipment", "quinn")
    learning_id = saved["learning_id"]
    with service.client(key) as c:
        assert c.get(f"/api/learnings/{learning_id}").json()["status"] == "verified"
        restored = c.post(f"/api/learnings/{learning_id}/restore")
        assert restored.status_code == 409 and error_of(restored)["code"] == "invalid_transition"
        assert c.get(f"/api/learnings/{learning_id}").json()["status"] == "verified"

        before = c.get(f"/api/learnings/{learning_id}").json()["confidence"]
        confirmed = c.post(f"/api/learnings/{learning_id}/confirm", json={"reason": "it worked"})
        assert confirmed.status_code == 200 and confirmed.json()["confidence"] > before

        assert c.post(f"/api/learnings/{learning_id}/deprecate", json={"reason": "new kettle"}).status_code == 200
        promoted = c.post(f"/api/learnings/{learning_id}/promote")
        assert promoted.status_code == 409 and "restore" in error_of(promoted)["message"]
        actions = [e["action"] for e in c.get(f"/api/learnings/{learning_id}/history").json()]
        assert "restored" not in actions

        back = c.post(f"/api/learnings/{learning_id}/restore", json={"status": "candidate"})
        assert back.status_code == 200 and back.json()["status"] == "candidate"
        assert [e["action"] for e in c.get(f"/api/learnings/{learning_id}/history").json()][-1] == "restored"
