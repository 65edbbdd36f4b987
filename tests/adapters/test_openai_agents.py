"""The OpenAI Agents SDK adapter, against the real SDK and the scripted chat completions server."""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, MaxTurnsExceeded, OpenAIChatCompletionsModel, RunConfig, RunHooks, function_tool
from agents.run_config import ToolErrorFormatterArgs
from openai import AsyncOpenAI

import learnloop
from learnloop.adapters.openai_agents import run_turn
from learnloop.errors import ConfigurationError
from tests.support.scripted_openai import Reply, ScriptedOpenAI

from .conftest import ANSWER, LEARNED, MESSAGE, TO_USD, run_example, script_shop_run, seed, system_text, the_one_turn

NO_TRACES = RunConfig(tracing_disabled=True)  # traces would go to OpenAI's servers


async def test_the_example_is_one_turn(tmp_path: Path, scripted_openai: ScriptedOpenAI) -> None:
    db = tmp_path / "shop.db"
    await seed(db)
    script_shop_run(scripted_openai)

    started = time.perf_counter()
    done = run_example("openai_agents_turn.py", db, scripted_openai)
    assert ANSWER in done.stdout and "convert: failed" in done.stdout
    assert time.perf_counter() - started < 60

    turn, signals = await the_one_turn(db)
    assert turn.status == "done" and turn.message == MESSAGE and turn.response == ANSWER
    calls = [(c["name"], c["arguments"], c["error"]) for c in turn.tool_calls]
    assert calls == [
        ("revenue", {"period": "last_month"}, None),
        ("convert", TO_USD, "RuntimeError: rate service unavailable"),
        ("convert", TO_USD, None),
    ]
    assert turn.tool_calls[0]["result"] == "revenue last_month: 12400 EUR" and turn.tool_calls[1]["result"] is None
    assert all(c["ms"] is not None and c["ms"] >= 0 for c in turn.tool_calls)
    assert signals == [("revenue", True), ("convert", False), ("convert", True)]
    # Every model call of the run had the learned context after the agent's own instructions.
    requests = scripted_openai.chat_requests
    assert len(requests) == 4
    for request in requests:
        system = system_text(request)
        assert system.startswith("You answer questions about the shop's numbers.") and LEARNED in system


@pytest.fixture
def model(scripted_openai: ScriptedOpenAI) -> OpenAIChatCompletionsModel:
    client = AsyncOpenAI(base_url=scripted_openai.base_url, api_key="sk-scripted", max_retries=0)
    return OpenAIChatCompletionsModel(model="scripted-model", openai_client=client)


@function_tool
def lookup(key: str) -> str:
    """Look a key up."""
    if key == "broken":
        raise ValueError("no such key")
    return f"value of {key}"


async def test_the_shared_agent_is_not_changed_and_your_hooks_and_formatter_still_run(
    open_loop: Callable[..., learnloop.Loop], scripted_openai: ScriptedOpenAI, model: OpenAIChatCompletionsModel
) -> None:
    loop = open_loop()
    await loop.save("The lookup service keys are lower case.", user="bob", status="verified")

    async def instructions(_context: Any, _agent: Agent[Any]) -> str:
        return "Dynamic instructions."

    agent = Agent(name="a", instructions=instructions, tools=[lookup], model=model)
    seen: list[str] = []

    class Mine(RunHooks[Any]):
        async def on_tool_end(self, context: Any, agent: Agent[Any], tool: Any, result: object) -> None:
            seen.append(f"{tool.name}={result}")

    def formatter(args: ToolErrorFormatterArgs[Any]) -> str:
        return f"lookup failed: {args.error}"

    scripted_openai.reply(
        Reply.tool_calls(("lookup", {"key": "broken"}), ("lookup", {"key": "ok"})), Reply.text("Done.")
    )
    result = await run_turn(
        loop,
        agent,
        "bob",
        "look up the lookup service keys",
        session="s1",
        hooks=Mine(),
        run_config=RunConfig(tracing_disabled=True, tool_error_formatter=formatter),
    )
    assert result.final_output == "Done." and agent.instructions is instructions
    assert sorted(seen) == ["lookup=lookup failed: no such key", "lookup=value of ok"]
    first = system_text(scripted_openai.chat_requests[0])
    assert first.startswith("Dynamic instructions.") and "keys are lower case" in first
    # The model saw the formatter's message; the turn, the failure itself.
    assert "lookup failed: no such key" in str(scripted_openai.chat_requests[1]["messages"])
    [turn] = await loop.turns.list(user="bob")
    calls = sorted((c["arguments"]["key"], c["error"], c["result"]) for c in turn.tool_calls)
    assert calls == [("broken", "ValueError: no such key", None), ("ok", None, "value of ok")]
    assert turn.status in ("finished", "done") and turn.response == "Done."
    await loop.aclose()


async def test_a_run_that_raises_leaves_the_turn_open_with_its_tool_calls(
    open_loop: Callable[..., learnloop.Loop], scripted_openai: ScriptedOpenAI, model: OpenAIChatCompletionsModel
) -> None:
    loop = open_loop()
    agent = Agent(name="a", instructions="Be brief.", tools=[lookup], model=model)
    scripted_openai.reply(Reply.tool_call("lookup", {"key": "k"}), Reply.tool_call("lookup", {"key": "k"}))
    with pytest.raises(MaxTurnsExceeded):
        await run_turn(loop, agent, "bob", "look k up", max_turns=1, run_config=NO_TRACES)
    [turn] = await loop.turns.list(user="bob")
    assert turn.status == "open" and [c["name"] for c in turn.tool_calls] == ["lookup"]  # expires as abandoned
    await loop.aclose()


def test_without_the_extra_the_error_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "agents", None)  # what an environment without the package shows
    monkeypatch.delitem(sys.modules, "learnloop.adapters.openai_agents")
    with pytest.raises(ConfigurationError, match=r"pip install 'learnloop\[openai-agents\]'"):
        importlib.import_module("learnloop.adapters.openai_agents")
