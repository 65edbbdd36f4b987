"""What the main agent reads each turn: the routing file and the files it routes to, within a budget."""

from __future__ import annotations

import pytest

from learnloop.agent.experience import routed_paths
from learnloop.agent.package import InteractionPackage
from learnloop.errors import NotFound, ValidationError
from learnloop.loop import Loop

ROUTING = """# Routing rules
- Schedule, dates or deadlines: read extended/schedule.md
- Pump or valve questions: read equipment.md
- Always answer in metric units.
"""


def test_routed_paths_follow_the_routing_file_and_prefer_lines_matching_the_query() -> None:
    paths = ["extended/schedule.md", "equipment.md", "unrelated.md", "schedule.md.bak"]
    assert routed_paths(ROUTING, paths) == ["extended/schedule.md", "equipment.md"]
    assert routed_paths(ROUTING, paths, "which pump is on level 2?") == ["equipment.md", "extended/schedule.md"]
    # A file named by its name alone is routed to as well.
    assert routed_paths("- deadlines: see schedule.md", ["extended/schedule.md"]) == ["extended/schedule.md"]


async def test_context_holds_the_routing_file_and_routed_files_within_the_budget(agent_loop: Loop) -> None:
    agent = agent_loop.agent
    await agent.write_file("routing_rules.md", ROUTING, project="site-a")
    await agent.write_file("extended/schedule.md", "# Schedule\n- Concrete pour on 12 May.\n", project="site-a")
    await agent.write_file("equipment.md", "# Equipment\n" + "- Pump P-1 on level 2.\n" * 40, project="site-a")
    await agent.write_file("unrelated.md", "# Not routed\n", project="site-a")

    full = await agent_loop.experience_context(project="site-a")
    assert full.files == ["routing_rules.md", "extended/schedule.md", "equipment.md"] and full.omitted == []
    assert "Not routed" not in full.text and full.text.count("### ") == 3

    tight = await agent_loop.experience_context(project="site-a", max_tokens=150)
    assert tight.files == ["routing_rules.md", "extended/schedule.md"] and tight.omitted == ["equipment.md"]
    assert tight.tokens <= 150

    pumps = await agent_loop.experience_context(project="site-a", query="pump on level 2", max_tokens=400)
    assert pumps.files[:2] == ["routing_rules.md", "equipment.md"]

    tiny = await agent_loop.experience_context(project="site-a", max_tokens=50)
    assert tiny.files == ["routing_rules.md"] and "…(cut)" in tiny.text and tiny.tokens <= 50
    with pytest.raises(ValidationError):
        await agent_loop.experience_context(project="site-a", max_tokens=10)
    with pytest.raises(NotFound):
        await agent_loop.experience_context("no-such-session")
    assert (await agent_loop.experience_context(project="empty")).text == ""


def test_a_package_reads_as_one_message_for_the_learning_agent() -> None:
    package = InteractionPackage(
        session="s1",
        user="alice",
        user_query="Where is the pump schedule?",
        assistant_response="On P-201.",
        items_retrieved=[{"id": "ptr-1", "title": "Pump schedule"}],
        experience_read=["routing_rules.md"],
        actions=[{"action": "open_page", "ids": ["P-201"]}],
        tool_calls=[{"name": "search", "arguments": {"q": "pump"}, "ok": False, "error": "timeout"}],
        turn=4,
    )
    text = package.as_prompt()
    for expected in ("turn 4", "user alice", "Where is the pump schedule?", "On P-201.", '"ptr-1"', "routing_rules.md"):
        assert expected in text
    assert 'search({"q": "pump"}) failed: timeout' in text and "open_page" in text
    assert InteractionPackage.model_validate_json(package.to_json()) == package
    with pytest.raises(ValidationError, match="id must be"):
        InteractionPackage(session="s1", user_query="x", id="not an id")
