"""`begin_turn` / `finish_turn`: the turn API for agents that reach learnloop only over MCP."""

from __future__ import annotations

from mcp.client.client import Client

from learnloop import Loop
from learnloop.mcp.server import LearnloopMCP
from learnloop.mcp.server_auth import Principal

from .test_server_harness import structured, text


def client(loop: Loop, principal: Principal) -> Client:
    return Client(LearnloopMCP(loop, principal).server, mode="auto")


async def test_a_turn_over_mcp(loop: Loop) -> None:
    await loop.save("Boil-off is 3.5 L/hr on the Grainfather", user="alice", category="equipment", status="verified")
    async with client(loop, Principal("default", "alice")) as mcp:
        names = {t.name for t in (await mcp.list_tools()).tools}
        assert {"begin_turn", "finish_turn"} <= names
        begun = await mcp.call_tool("begin_turn", {"message": "what is my boil-off rate?"})
        assert not begun.is_error and "3.5 L/hr" in text(begun)
        turn_id = structured(begun)["turn_id"]
        calls = [{"name": "calc_boil_off", "arguments": {"hours": 1}, "ms": 3}, {"name": "x", "error": "timeout"}]
        args = {"turn_id": turn_id, "response": "About 3.5 L per hour.", "tool_calls": calls}
        finished = await mcp.call_tool("finish_turn", args)
        assert not finished.is_error and structured(finished)["status"] in ("finished", "done")
        again = await mcp.call_tool("finish_turn", args)  # a retry records nothing twice
        assert not again.is_error
        bad = await mcp.call_tool("finish_turn", {"turn_id": turn_id, "response": "x", "tool_calls": "nope"})
        assert bad.is_error and "tool_calls" in text(bad)
    await loop.turns.drain()
    record = await loop.turns.get(turn_id, user="alice")
    assert record.channel == "mcp" and [c["name"] for c in record.tool_calls] == ["calc_boil_off", "x"]
    assert record.status == "done"


async def test_a_repeated_message_gets_the_first_answer(loop: Loop) -> None:
    async with client(loop, Principal("default", "alice")) as mcp:
        first = structured(await mcp.call_tool("begin_turn", {"message": "what is my boil-off rate?"}))
        await mcp.call_tool("finish_turn", {"turn_id": first["turn_id"], "response": "About 3.5 L per hour."})
        again = await mcp.call_tool("begin_turn", {"message": "What is my boil-off rate?"})
        assert structured(again)["duplicate_of"] == first["turn_id"]
        assert structured(again)["response"] == "About 3.5 L per hour." and "About 3.5 L per hour." in text(again)


async def test_another_user_cannot_finish_the_turn(loop: Loop) -> None:
    async with client(loop, Principal("default", "alice")) as mcp:
        turn_id = structured(await mcp.call_tool("begin_turn", {"message": "hello there"}))["turn_id"]
    async with client(loop, Principal("default", "bob")) as mcp:
        result = await mcp.call_tool("finish_turn", {"turn_id": turn_id, "response": "x"})
    assert result.is_error and "not_found" in text(result)
