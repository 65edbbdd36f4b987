"""Experience files, knowledge, sessions and queues stay within their tenant and user; forget() removes a
user's rows."""

from __future__ import annotations

import pytest

from learnloop.agent import Workspace
from learnloop.errors import NotFound, ValidationError
from learnloop.loop import Loop
from tests.agent.support import LearningScript, calls, tool_results
from tests.support.scripted_openai import Reply, ScriptedOpenAI


async def test_experience_files_are_per_tenant_user_and_project(agent_loop: Loop) -> None:
    acme, globex = agent_loop, agent_loop.for_tenant("globex")
    await acme.agent.write_file("routing_rules.md", "# acme, shared\n")
    await acme.agent.write_file("routing_rules.md", "# acme, alice\n", user="alice")
    await acme.agent.write_file("routing_rules.md", "# acme, alice, other project\n", user="alice", project="p2")
    await globex.agent.write_file("routing_rules.md", "# globex\n")

    assert (await acme.agent.read_file("routing_rules.md")).content == "# acme, shared\n"
    assert (await acme.agent.read_file("routing_rules.md", user="alice")).content == "# acme, alice\n"
    assert (await acme.agent.read_file("routing_rules.md", user="alice", project="p2")).content.endswith("project\n")
    assert (await globex.agent.read_file("routing_rules.md")).content == "# globex\n"
    with pytest.raises(NotFound):
        await acme.agent.read_file("routing_rules.md", user="bob")
    with pytest.raises(NotFound):
        await globex.agent.read_file("routing_rules.md", user="alice")
    assert await globex.agent.list_files(user="alice") == []
    assert (await acme.experience_context(user="bob")).text == ""
    assert "alice" in (await acme.experience_context(user="alice")).text
    with pytest.raises(ValidationError):
        await acme.agent.write_file("notes.md", "deploy with AKIAQ7ZKX4J2M5RTWB6N as the access key")


async def test_knowledge_reads_see_shared_rows_and_edits_only_own_ones(agent_loop: Loop) -> None:
    acme, globex = agent_loop, agent_loop.for_tenant("globex")
    await acme.agent.add_pointer({"id": "shared", "title": "Fire exits", "description": "Exit plan"})
    await acme.agent.add_pointer({"id": "mine", "title": "Alice notes", "description": "Private"}, user="alice")
    assert (await acme.agent.get_pointer("shared", user="alice")).user is None
    assert (await acme.agent.get_pointer("mine", user="alice")).user == "alice"
    with pytest.raises(NotFound):
        await acme.agent.get_pointer("mine", user="bob")
    with pytest.raises(NotFound):
        await globex.agent.get_pointer("shared")
    assert {h["pointer_id"] for h in await acme.agent.search_knowledge("notes exit", user="bob")} == {"shared"}
    assert await globex.agent.search_knowledge("exit") == []

    documents, workspace = acme.agent.runtime.documents, Workspace("acme", "bob", "default")
    with pytest.raises(NotFound, match="read-only"):
        await documents.edit_pointer(workspace, "shared", "description", "changed by bob")
    with pytest.raises(NotFound):
        await documents.edit_pointer(workspace, "mine", "description", "changed by bob")
    with pytest.raises(ValidationError):
        await documents.edit_pointer(Workspace("acme", None, "default"), "shared", "title", "no")  # type: ignore[arg-type]
    assert (await acme.agent.get_pointer("shared")).description == "Exit plan"


async def test_a_private_session_agent_works_in_its_users_files_only(
    agent_loop: Loop, scripted_openai: ScriptedOpenAI
) -> None:
    loop = agent_loop
    await loop.agent.add_pointer({"id": "shared", "title": "Fire exits", "description": "Exit plan"})
    await loop.agent.write_file("routing_rules.md", "# tenant rules\n")
    scripted_openai.chat.respond(
        LearningScript(
            [
                calls(
                    ("read_file", {"path": "routing_rules.md"}),
                    ("write_file", {"path": "routing_rules.md", "content": "# bob's rules\n"}),
                    ("edit_pointer", {"pointer_id": "shared", "field": "description", "new_content": "Hijacked"}),
                    ("read_pointer", {"pointer_id": "shared"}),
                ),
                Reply.text("ok"),
            ]
        )
    )
    await loop.agent.open_session("bob-s", user="bob")
    await loop.submit_interaction("bob-s", "where are the exits?", user="bob")
    await loop.agent.drain("bob-s")
    request = [r for r in scripted_openai.chat_requests if r.get("tools")][1]
    read, write, edit, pointer = tool_results(request)
    assert not read["ok"]  # the tenant's file is not bob's
    assert write["ok"] and edit["ok"] is False and "read-only" in edit["error"]
    assert pointer["ok"] and pointer["pointer"]["description"] == "Exit plan"
    assert (await loop.agent.read_file("routing_rules.md")).content == "# tenant rules\n"
    assert (await loop.agent.read_file("routing_rules.md", user="bob")).content == "# bob's rules\n"
    bob_events = await loop.events(user="bob", limit=100)
    assert {e.user for e in bob_events if e.actor == "agent:learning"} == {"bob"}
    assert [e for e in await loop.events(user="carol", limit=100) if e.actor == "agent:learning"] == []


async def test_forgetting_a_user_removes_their_agent_rows(agent_loop: Loop, scripted_openai: ScriptedOpenAI) -> None:
    loop = agent_loop
    scripted_openai.chat.respond(LearningScript([Reply.text("ok")]))
    await loop.agent.open_session("a1", user="alice")
    await loop.submit_interaction("a1", "hello", "hi", user="alice")
    await loop.agent.drain("a1")
    await loop.agent.write_file("notes.md", "# Alice\n", user="alice")
    await loop.agent.add_page({"id": "pg", "title": "Alice page"}, user="alice")
    await loop.agent.write_file("notes.md", "# Shared\n")
    await loop.agent.close_session("a1", user="alice")

    removed = await loop.forget("alice")
    for table in ("agent_sessions", "agent_queue", "agent_messages", "agent_experience_files", "agent_knowledge_pages"):
        assert removed[table] >= 1, table
    assert await loop.agent.list_sessions(user="alice") == []
    assert await loop.agent.list_files(user="alice") == []
    assert (await loop.agent.read_file("notes.md")).content == "# Shared\n"
    assert (await loop.agent.queue()).done == 0
