"""The learning agent end to end: real OpenAI client, scripted model on loopback, real SQLite store."""

from __future__ import annotations

import numpy as np

from learnloop.agent import ReanalysisRequest, Workspace
from learnloop.agent.knowledge import pointer_text
from learnloop.agent.reground import REGROUND_MARK
from learnloop.loop import Loop
from learnloop.models import Event, Origin, Status
from tests.agent.support import DIMENSION, LearningScript, calls, package_text, tool_results
from tests.support.scripted_openai import Reply, ScriptedOpenAI, hash_embedding

PUMP_DESCRIPTION = "Pump schedule for level 1: pump tags, flow rates and motor sizes"
EXTENDED = "extended/equipment_schedules.md"


async def _seed_knowledge(loop: Loop) -> None:
    await loop.agent.add_page(
        {"id": "M-101", "title": "Mechanical plan, level 1", "content": "Ducts, pumps, schedules", "project": "site-a"}
    )
    await loop.agent.add_pointer(
        {
            "id": "ptr-pump",
            "page_id": "M-101",
            "title": "Pump schedule",
            "description": "Table of plumbing fixtures",  # wrong: the correction below fixes it
            "project": "site-a",
        }
    )


def _agent_events(events: list[Event]) -> list[tuple[str, str, str | None]]:
    return [(e.action, e.panel.value, e.data.get("tool")) for e in events if e.actor == "agent:learning"]


async def test_a_correction_becomes_a_routing_rule_an_extended_file_and_a_pointer_fix(
    agent_loop: Loop, scripted_openai: ScriptedOpenAI
) -> None:
    loop = agent_loop
    await _seed_knowledge(loop)
    script = LearningScript(
        [
            calls(("list_files", {}), ("read_pointer", {"pointer_id": "ptr-pump"})),
            calls(
                (
                    "write_file",
                    {
                        "path": EXTENDED,
                        "content": "# Equipment schedules\n- The pump schedule is on M-101 (level 1), not P-201.\n",
                    },
                ),
                (
                    "write_file",
                    {
                        "path": "routing_rules.md",
                        "content": f"# Routing rules\n- Pump or equipment schedule questions: read {EXTENDED} first.\n",
                    },
                ),
                ("edit_pointer", {"pointer_id": "ptr-pump", "field": "description", "new_content": PUMP_DESCRIPTION}),
            ),
            Reply.text("Recorded where the pump schedule is and corrected its description."),
        ]
    )
    scripted_openai.chat.respond(script)

    async with loop.engine.bus.subscribe("acme") as live:
        await loop.agent.open_session("s1", user="alice", project="site-a", shared=True)
        receipt = await loop.submit_interaction(
            "s1",
            "No, the pump schedule is on M-101, not P-201.",
            "You're right, it is on M-101.",
            user="alice",
            items_retrieved=[{"id": "ptr-pump", "title": "Pump schedule"}],
            tool_calls=[{"name": "search_knowledge", "arguments": {"query": "pump schedule"}, "ok": True}],
        )
        assert receipt.turn == 1 and not receipt.duplicate
        counts = await loop.agent.drain("s1")
        assert counts.done == 1 and counts.unfinished == 0
        streamed = [await live.get(5) for _ in range(6)]

    # The routing rule and the extended file it indexes.
    routing = await loop.agent.read_file("routing_rules.md", project="site-a")
    assert EXTENDED in routing.content and routing.updated_by_session == "s1"
    context = await loop.experience_context("s1")
    assert context.files == ["routing_rules.md", EXTENDED]
    assert "not P-201" in context.text and context.text.startswith("<experience>")

    # The pointer's description is corrected and its embedding recomputed from the new text.
    pointer = await loop.agent.get_pointer("ptr-pump", project="site-a")
    assert pointer.description == PUMP_DESCRIPTION
    expected_text = pointer_text("Pump schedule", PUMP_DESCRIPTION)
    assert any(r["input"] == [expected_text] for r in scripted_openai.embedding_requests)
    pointers, matrix = await loop.agent.runtime.store.pointer_vectors(Workspace("acme", None, "site-a"))
    assert matrix is not None
    stored = matrix[[p.id for p in pointers].index("ptr-pump")]
    expected = np.array(hash_embedding(expected_text, DIMENSION), dtype=np.float32)
    assert np.allclose(stored, expected / np.linalg.norm(expected), atol=1e-6)
    hits = await loop.agent.search_knowledge("pump tags flow rates", project="site-a")
    assert hits[0]["pointer_id"] == "ptr-pump"

    # Events on the right panels, in the log and on the bus, learning_done last.
    expected_events = [
        ("agent_tool", "learning", "list_files"),
        ("agent_tool", "learning", "read_pointer"),
        ("experience_written", "learning", "write_file"),
        ("experience_written", "learning", "write_file"),
        ("knowledge_edited", "knowledge_update", "edit_pointer"),
        ("learning_done", "learning", None),
    ]
    logged = await loop.events(limit=1000)
    assert _agent_events(logged) == expected_events
    assert _agent_events([e for e in streamed if e is not None]) == expected_events
    edit = next(e for e in logged if e.action == "knowledge_edited")
    assert edit.data["before"] == "Table of plumbing fixtures" and edit.data["after"] == PUMP_DESCRIPTION
    assert edit.data["reembedded"] is True and edit.user == "alice"
    done = logged[-1]
    assert done.data["status"] == "done" and done.data["package"] == receipt.package_id
    assert done.data["steps"] == 5 and "corrected" in done.data["summary"]

    # What the model saw: the package, its tools, and the results of its calls.
    requests = [r for r in scripted_openai.chat_requests if "tools" in r]
    assert len(requests) == 3
    assert {t["function"]["name"] for t in requests[0]["tools"]} >= {
        "read_file", "write_file", "edit_file", "list_files", "read_pointer", "read_page", "search_knowledge",
        "edit_pointer", "edit_page", "update_cross_references", "trigger_reground", "save_learning",
        "deprecate_learning",
    }  # fmt: skip
    first = package_text(requests[0])
    assert "not P-201" in first and "Items retrieved" in first and "search_knowledge" in first
    results = tool_results(requests[1])
    assert results[0] == {"ok": True, "files": []}
    assert results[1]["pointer"]["description"] == "Table of plumbing fixtures"
    assert "ALWAYS update routing_rules.md" in requests[0]["messages"][0]["content"]


async def test_failed_edits_reanalysis_and_learnings(agent_loop: Loop, scripted_openai: ScriptedOpenAI) -> None:
    loop = agent_loop
    await _seed_knowledge(loop)
    asked: list[ReanalysisRequest] = []

    @loop.agent.on_reanalysis
    async def reanalyse(request: ReanalysisRequest) -> dict[str, list[str]]:
        asked.append(request)
        return {"new_pointers": ["ptr-new"]}

    script = LearningScript(
        [
            calls(
                ("write_file", {"path": "notes.md", "content": "# Notes\n- Site visits on Mondays.\n"}),
                ("edit_file", {"path": "notes.md", "old_text": "Tuesdays", "new_text": "Fridays"}),
                ("trigger_reground", {"page_id": "M-101", "instruction": "The valve tags in the corner were missed"}),
                ("trigger_reground", {"page_id": "nope", "instruction": "x"}),
                ("save_learning", {"learning": "Alice works on site A, level 1 mechanical", "category": "fact"}),
                ("write_file", {"path": "../escape.md", "content": "x"}),
            ),
            lambda request: calls(
                ("deprecate_learning", {"learning_id": tool_results(request)[4]["learning_id"], "reason": "moved"})
            ),
            Reply.text("Done."),
        ]
    )
    scripted_openai.chat.respond(script)
    await loop.agent.open_session("s2", user="alice", project="site-a", shared=True)
    receipt = await loop.submit_interaction("s2", "Site visits are on Mondays", "Noted.", user="alice")
    await loop.agent.drain("s2")

    second = [r for r in scripted_openai.chat_requests if "tools" in r][1]
    write, edit, reground, missing, saved, escape = tool_results(second)
    assert write["ok"] and write["change"] == "created"
    assert not edit["ok"] and "old_text was not found" in edit["error"]
    assert reground == {"ok": True, "status": "requested", "page_id": "M-101", "outcome": {"new_pointers": ["ptr-new"]}}
    assert not missing["ok"] and "not found" in missing["error"]
    assert saved["ok"] and saved["action"] == "created"
    assert not escape["ok"] and "relative name" in escape["error"]
    assert (await loop.agent.read_file("notes.md", project="site-a")).content.endswith("Mondays.\n")

    assert [r.page_id for r in asked] == ["M-101"]
    assert asked[0].request_id == f"{receipt.package_id}:M-101" and asked[0].owner is None

    learning = await loop.get(saved["learning_id"], user="alice")
    assert learning.origin is Origin.AGENT and learning.source.interaction == receipt.package_id
    assert learning.status is Status.DEPRECATED and learning.user == "alice"

    events = await loop.events(limit=1000)
    panels = {(e.action, e.panel.value) for e in events if e.actor == "agent:learning"}
    assert ("reanalysis_requested", "knowledge_update") in panels
    failed_reground = [e for e in events if e.data.get("tool") == "trigger_reground" and not e.data["ok"]]
    assert failed_reground[0].panel.value == "knowledge_update" and failed_reground[0].action == "agent_tool"
    assert events[-1].action == "learning_done"


async def test_reanalysis_without_a_handler_reanalyses_the_page_into_pending_pointers(
    agent_loop: Loop, scripted_openai: ScriptedOpenAI
) -> None:
    """Seed 003 R6: `trigger_reground` re-analyses the page and creates pointers with enrichment_status
    'pending' (before: only recorded as an event, nothing re-analysed)."""
    loop = agent_loop
    await _seed_knowledge(loop)
    found = {
        "pointers": [
            {"title": "Pump schedule", "description": "already found: skipped"},
            {"title": "Valve tags", "description": "Valve tags V-1 to V-12 in the north-east corner"},
        ]
    }
    scripted_openai.chat.on(lambda r: REGROUND_MARK in str((r.get("messages") or [{}])[0].get("content")), found)
    scripted_openai.chat.respond(
        LearningScript(
            [
                calls(("trigger_reground", {"page_id": "M-101", "instruction": "The valve tags were missed"})),
                Reply.text("ok"),
            ]
        )
    )
    await loop.agent.open_session("s3", project="site-a")
    receipt = await loop.submit_interaction("s3", "You missed the valve tags", "Sorry.")
    await loop.agent.drain("s3")
    asked = next(r for r in scripted_openai.chat_requests if REGROUND_MARK in str(r["messages"][0]["content"]))
    assert "Ducts, pumps, schedules" in asked["messages"][1]["content"]  # the page, with what was found on it
    assert "ptr-pump" in asked["messages"][1]["content"] and "valve tags were missed" in asked["messages"][1]["content"]
    event = next(e for e in await loop.events(limit=100) if e.action == "reanalysis_requested")
    assert event.panel.value == "knowledge_update" and event.data["status"] == "reanalysed"
    [new_id] = event.data["outcome"]["new_pointers"]
    pointers = {p.id: p for p in await loop.agent.list_pointers(page_id="M-101", project="site-a")}
    assert set(pointers) == {"ptr-pump", new_id}
    pointer = pointers[new_id]
    assert pointer.title == "Valve tags" and pointer.metadata["enrichment_status"] == "pending"
    assert pointer.metadata["reground"]["request_id"] == f"{receipt.package_id}:M-101"
    hits = await loop.agent.search_knowledge("valve tags in the corner", project="site-a")
    assert hits[0]["pointer_id"] == new_id  # embedded like any pointer


async def test_a_handler_replaces_the_default_reanalysis(agent_loop: Loop, scripted_openai: ScriptedOpenAI) -> None:
    loop = agent_loop
    await _seed_knowledge(loop)
    loop.agent.configure(reanalysis=_no_new_pointers)
    scripted_openai.chat.respond(
        LearningScript(
            [calls(("trigger_reground", {"page_id": "M-101", "instruction": "Look again"})), Reply.text("ok")]
        )
    )
    await loop.agent.open_session("s4", project="site-a")
    await loop.submit_interaction("s4", "Look again", "Sure.")
    await loop.agent.drain("s4")
    assert not [r for r in scripted_openai.chat_requests if REGROUND_MARK in str(r["messages"][0]["content"])]
    event = next(e for e in await loop.events(limit=100) if e.action == "reanalysis_requested")
    assert event.data["status"] == "requested" and event.data["outcome"] == {"new_pointers": []}


async def _no_new_pointers(request: ReanalysisRequest) -> dict[str, list[str]]:
    return {"new_pointers": []}


async def test_call_ids_reused_from_one_reply_to_the_next_still_get_their_results(
    agent_loop: Loop, scripted_openai: ScriptedOpenAI
) -> None:
    # Some OpenAI-compatible servers number calls per reply ("call_0" every time).
    script = LearningScript(
        [
            Reply.tool_calls(("list_files", {}, "call_0")),
            Reply.tool_calls(("read_file", {"path": "routing_rules.md"}, "call_0")),
            Reply.text("Nothing to change."),
        ]
    )
    scripted_openai.chat.respond(script)
    await agent_loop.agent.open_session("ids", user="alice")
    await agent_loop.submit_interaction("ids", "hello", "hi", user="alice")
    assert (await agent_loop.agent.drain("ids")).done == 1
    last = [r for r in scripted_openai.chat_requests if r.get("tools")][-1]
    assert [m["role"] for m in last["messages"]] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert script.asked == [0, 1, 2]
