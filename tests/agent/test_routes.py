"""The learning agent's HTTP routes, mounted on the service app, with real keys."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from learnloop.loop import Loop
from learnloop.server import create_app
from learnloop.server.keys import issue_key
from learnloop.server.state import service_store_for
from tests.agent.support import LearningScript, build_loop, calls
from tests.support.scripted_openai import Reply, ScriptedOpenAI


async def _client(loop: Loop) -> httpx.AsyncClient:
    app = create_app(loop)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test", timeout=30)


async def _key(loop: Loop, role: str, user: str | None = None) -> dict[str, str]:
    issued = issue_key(loop.tenant, role, user=user)
    await service_store_for(loop).create_key(issued.record)
    return {"Authorization": f"Bearer {issued.key}"}


@pytest.fixture
async def client(agent_loop: Loop) -> AsyncIterator[httpx.AsyncClient]:
    async with await _client(agent_loop) as http:
        yield http


async def test_interactions_sessions_files_and_events_over_http(
    agent_loop: Loop, client: httpx.AsyncClient, scripted_openai: ScriptedOpenAI
) -> None:
    app_key = await _key(agent_loop, "app")
    scripted_openai.chat.respond(
        LearningScript(
            [
                calls(("write_file", {"path": "routing_rules.md", "content": "# Rules\n- Dates: read dates.md\n"})),
                Reply.text("Added a routing rule."),
            ]
        )
    )
    opened = await client.post(
        "/api/agent/sessions", json={"session": "s1", "user": "alice", "project": "site-a"}, headers=app_key
    )
    assert opened.status_code == 201 and opened.json()["status"] == "open"
    queued = await client.post(
        "/api/interactions",
        json={"session": "s1", "user": "alice", "user_query": "When is the pour?", "id": "pkg-1",
              "tool_calls": [{"name": "calendar", "ok": True}]},
        headers=app_key,
    )  # fmt: skip
    assert queued.status_code == 202 and queued.json()["package_id"] == "pkg-1"
    await agent_loop.agent.drain("s1")

    files = await client.get("/api/experience/files", params={"user": "alice", "project": "site-a"}, headers=app_key)
    assert [f["path"] for f in files.json()] == ["routing_rules.md"]
    routing = await client.get(
        "/api/experience/files/routing_rules.md", params={"user": "alice", "project": "site-a"}, headers=app_key
    )
    assert routing.json()["content"].startswith("# Rules")
    context = await client.get("/api/agent/sessions/s1/context", params={"user": "alice"}, headers=app_key)
    assert context.json()["files"] == ["routing_rules.md"]
    session = await client.get("/api/agent/sessions/s1", headers=app_key)
    assert session.json()["queue"]["done"] == 1

    stream = await client.get("/api/events", params={"after": 0, "max_seconds": 0.2}, headers=app_key)
    frames = [json.loads(line[6:]) for line in stream.text.splitlines() if line.startswith("data: ")]
    agent_frames = [(f["action"], f["panel"]) for f in frames if f["actor"] == "agent:learning"]
    assert agent_frames == [("experience_written", "learning"), ("learning_done", "learning")]

    closed = await client.post("/api/agent/sessions/s1/close", headers=app_key)
    assert closed.json()["status"] == "closed"
    again = await client.post("/api/interactions", json={"session": "s1", "user_query": "x"}, headers=app_key)
    assert again.status_code == 409


async def test_user_keys_stay_in_their_lane_and_knowledge_routes(agent_loop: Loop, client: httpx.AsyncClient) -> None:
    app_key, bob = await _key(agent_loop, "app"), await _key(agent_loop, "user", "bob")
    put = await client.put(
        "/api/experience/files/notes.md", json={"content": "# Alice\n", "user": "alice"}, headers=app_key
    )
    assert put.status_code == 200 and put.json()["user"] == "alice"
    hidden = await client.get("/api/experience/files/notes.md", params={"user": "alice"}, headers=bob)
    assert hidden.status_code == 404
    assert (await client.get("/api/experience/files", headers=bob)).json() == []
    shared = await client.post("/api/agent/sessions", json={"shared": True}, headers=bob)
    assert shared.status_code == 403

    page = await client.post("/api/knowledge/pages", json={"id": "M-1", "title": "Plan"}, headers=app_key)
    assert page.status_code == 200 and page.json()["user"] is None
    pointer = await client.post(
        "/api/knowledge/pointers",
        json={"id": "p-1", "page_id": "M-1", "title": "Pumps", "description": "Pump schedule"},
        headers=app_key,
    )
    assert pointer.status_code == 200 and pointer.json()["embedding_model"]
    found = await client.get("/api/knowledge/search", params={"q": "pump schedule"}, headers=bob)
    assert found.json()[0]["pointer_id"] == "p-1"  # shared knowledge is readable by every user
    assert (await client.get("/api/knowledge/pages/M-1", headers=bob)).json()["title"] == "Plan"
    bad = await client.post("/api/knowledge/pages", json={"id": "x", "title": "t", "owner": "me"}, headers=app_key)
    assert bad.status_code == 422


async def test_without_a_model_the_api_answers_409_not_configured(
    tmp_path: Path, scripted_openai: ScriptedOpenAI
) -> None:
    loop = build_loop(tmp_path / "plain.db", scripted_openai.settings(), with_llm=False)
    try:
        key = await _key(loop, "admin")
        async with await _client(loop) as http:
            queued = await http.post("/api/interactions", json={"session": "s", "user_query": "hi"}, headers=key)
            assert queued.status_code == 409 and queued.json()["error"]["code"] == "not_configured"
            status = await http.get("/api/agent", headers=key)
            assert status.json()["configured"] is False
            files = await http.get("/api/experience/files", headers=key)
            assert files.status_code == 200
    finally:
        await loop.aclose()
