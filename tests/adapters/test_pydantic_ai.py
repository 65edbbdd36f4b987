"""The Pydantic AI adapter, against the real package and the scripted chat completions server."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import BaseModel
from pydantic_ai import Agent, ToolFailed
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

import learnloop
from learnloop.adapters.pydantic_ai import TurnCapability, run_turn
from learnloop.errors import ConfigurationError
from learnloop.turns import TurnConfig
from tests.support.scripted_openai import Reply, ScriptedOpenAI

from .conftest import ANSWER, LEARNED, MESSAGE, TO_USD, run_example, script_shop_run, seed, system_text, the_one_turn


async def test_the_example_is_one_turn(tmp_path: Path, scripted_openai: ScriptedOpenAI) -> None:
    db = tmp_path / "shop.db"
    await seed(db)
    script_shop_run(scripted_openai)

    done = run_example("pydantic_ai_turn.py", db, scripted_openai)
    assert ANSWER in done.stdout and "convert: failed" in done.stdout

    turn, signals = await the_one_turn(db)
    assert turn.status == "done" and turn.message == MESSAGE and turn.response == ANSWER
    calls = [(c["name"], c["arguments"], c["error"]) for c in turn.tool_calls]
    assert calls == [
        ("revenue", {"period": "last_month"}, None),
        ("convert", TO_USD, "rate service unavailable, try again"),
        ("convert", TO_USD, None),
    ]
    assert turn.tool_calls[2]["result"] == "13392.00 USD"
    assert all(c["ms"] is not None and c["ms"] >= 0 for c in turn.tool_calls)
    assert signals == [("revenue", True), ("convert", False), ("convert", True)]
    requests = scripted_openai.chat_requests
    assert len(requests) == 4
    for request in requests:
        system = system_text(request)
        assert system.startswith("You answer questions about the shop's numbers.") and LEARNED in system


@pytest.fixture
def model(scripted_openai: ScriptedOpenAI) -> OpenAIChatModel:
    provider = OpenAIProvider(base_url=scripted_openai.base_url, api_key="sk-scripted")
    return OpenAIChatModel("scripted-model", provider=provider)


def lookup(key: str) -> str:
    """Look a key up."""
    if key == "gone":
        raise ToolFailed("no such key")
    if key == "boom":
        raise RuntimeError("the lookup service crashed")
    return f"value of {key}"


class Found(BaseModel):
    value: str


async def test_structured_output_is_the_response_and_the_agent_keeps_its_instructions(
    open_loop: Callable[..., learnloop.Loop], scripted_openai: ScriptedOpenAI, model: OpenAIChatModel
) -> None:
    loop = open_loop()
    await loop.save("The lookup service keys are lower case.", user="bob", status="verified")
    agent = Agent(model, instructions="Look things up.", tools=[lookup], output_type=Found)
    scripted_openai.reply(
        Reply.tool_calls(("lookup", {"key": "gone"}), ("lookup", {"key": "k"})),
        Reply.tool_call("final_result", {"value": "value of k"}),
    )
    result = await run_turn(loop, agent, "bob", "look up the lookup service keys", session="s1")
    assert result.output == Found(value="value of k")
    [turn] = await loop.turns.list(user="bob")
    assert turn.response == '{"value":"value of k"}'
    # The output tool is the answer, not a tool call of the turn.
    calls = sorted((c["arguments"]["key"], c["error"]) for c in turn.tool_calls)
    assert calls == [("gone", "no such key"), ("k", None)]
    first = system_text(scripted_openai.chat_requests[0])
    assert first.startswith("Look things up.") and "keys are lower case" in first

    # The same agent in a later turn: the first turn's context stays with the first turn.
    scripted_openai.reply(Reply.tool_call("final_result", {"value": "v"}))
    await run_turn(loop, agent, "carol", "anything about pumps?", session="s2")
    assert "keys are lower case" not in system_text(scripted_openai.chat_requests[-1])
    await loop.aclose()


async def test_a_tool_that_raises_ends_the_run_and_leaves_the_turn_open(
    open_loop: Callable[..., learnloop.Loop], scripted_openai: ScriptedOpenAI, model: OpenAIChatModel
) -> None:
    loop = open_loop()
    agent = Agent(model, tools=[lookup])
    scripted_openai.reply(Reply.tool_call("lookup", {"key": "boom"}))
    async with loop.turn("bob", "look boom up") as turn:  # running the agent yourself
        with pytest.raises(RuntimeError, match="crashed"):
            await agent.run("look boom up", capabilities=[TurnCapability(turn)])
    [record] = await loop.turns.list(user="bob")
    assert record.status == "open"  # expires as abandoned
    assert [(c["name"], c["error"]) for c in record.tool_calls] == [
        ("lookup", "RuntimeError: the lookup service crashed")
    ]
    await loop.aclose()


async def test_calls_past_the_turns_limit_are_left_out_and_the_run_goes_on(
    open_loop: Callable[..., learnloop.Loop],
    scripted_openai: ScriptedOpenAI,
    model: OpenAIChatModel,
    caplog: pytest.LogCaptureFixture,
) -> None:
    loop = open_loop()
    loop.turns.configure(TurnConfig(max_tool_calls=1))
    agent = Agent(model, tools=[lookup])
    scripted_openai.reply(Reply.tool_call("lookup", {"key": "a"}), Reply.tool_call("lookup", {"key": "b"}), "Both.")
    result = await run_turn(loop, agent, "bob", "look a and b up")
    assert result.output == "Both."
    [turn] = await loop.turns.list(user="bob")
    assert [c["arguments"] for c in turn.tool_calls] == [{"key": "a"}] and turn.response == "Both."
    assert "not recorded" in caplog.text
    await loop.aclose()


def test_without_the_extra_the_error_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pydantic_ai", None)
    monkeypatch.delitem(sys.modules, "learnloop.adapters.pydantic_ai")
    with pytest.raises(ConfigurationError, match=r"pip install 'learnloop\[pydantic-ai\]'"):
        importlib.import_module("learnloop.adapters.pydantic_ai")
