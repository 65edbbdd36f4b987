"""The OpenAI Agents SDK, one run per turn (`pip install 'learnloop[openai-agents]'`).

    from learnloop.adapters.openai_agents import run_turn

    result = await run_turn(loop, agent, "alice", "top products this month?", session="s1")
    print(result.final_output)

`run_turn` begins the turn, runs a copy of the agent whose instructions end with the turn's context (the agent
given is shared by other runs and is not changed), records every tool call as it ends, and finishes the turn
with the final output. A run that raises leaves the turn open: it expires as abandoned, and the tool calls it
recorded still teach the tool layer.

Running the SDK yourself inside `async with loop.turn(...) as turn:`:

    hooks = TurnHooks(turn)
    result = await Runner.run(with_context(agent, turn.context), message, hooks=hooks,
                              run_config=hooks.run_config())
    await turn.finish(result.final_output)

A function tool that raises reaches the model as the SDK's error message and the hooks as an ordinary result;
`hooks.run_config()` adds the `tool_error_formatter` through which a failure is told apart (it returns the
message your own formatter, or the SDK, would have). A tool with its own `failure_error_function` bypasses it,
and its failures are recorded as results.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._common import error_text, missing_extra, output_text, record_call

try:
    from agents import Agent, RunConfig, RunContextWrapper, RunHooks, Runner, RunResult, Tool
    from agents.run_config import ToolErrorFormatter, ToolErrorFormatterArgs
    from agents.tool_context import ToolContext
except ImportError as exc:  # pragma: no cover - the extra is installed wherever this is tested
    raise missing_extra("OpenAI Agents SDK", "openai-agents") from exc

if TYPE_CHECKING:
    from ..loop import Loop
    from ..turns import Turn

__all__ = ["TurnHooks", "run_turn", "with_context"]


async def run_turn(
    loop: Loop,
    agent: Agent[Any],
    user: str | None,
    message: str,
    *,
    session: str = "default",
    channel: str = "",
    **run_kwargs: Any,
) -> RunResult:
    """One `Runner.run` as one learnloop turn; returns the SDK's own result. `run_kwargs` go to `Runner.run`
    (`input=` replaces `message` as the run's input, e.g. a conversation so far; your `hooks` still run)."""
    run_input = run_kwargs.pop("input", message)
    async with loop.turn(user, message, session=session, channel=channel) as turn:
        hooks = TurnHooks(turn, inner=run_kwargs.pop("hooks", None))
        run_config = run_kwargs.pop("run_config", None)
        if isinstance(run_config, Mapping):
            run_config = RunConfig(**run_config)
        result = await Runner.run(
            with_context(agent, turn.context),
            run_input,
            hooks=hooks,
            run_config=hooks.run_config(run_config),
            **run_kwargs,
        )
        await turn.finish(output_text(result.final_output))
    return result


def with_context(agent: Agent[Any], context: str) -> Agent[Any]:
    """A copy of `agent` whose instructions end with `context`; dynamic instructions stay dynamic."""
    if not context:
        return agent
    own = agent.instructions
    if own is None or isinstance(own, str):
        return agent.clone(instructions="\n\n".join(p for p in (own, context) if p))
    dynamic = own

    async def instructions(run_context: RunContextWrapper[Any], current: Agent[Any]) -> str:
        text = dynamic(run_context, current)
        if inspect.isawaitable(text):
            text = await text
        return f"{text}\n\n{context}" if text else context

    return agent.clone(instructions=instructions)


class TurnHooks(RunHooks[Any]):
    """Run hooks recording each tool call on `turn` when it ends (name, arguments, result or error, time).
    Hooks of your own go in `inner`: every event reaches them too."""

    def __init__(self, turn: Turn, inner: RunHooks[Any] | None = None) -> None:
        self.turn = turn
        self._inner = inner
        self._started: dict[str, float] = {}
        self._failed: dict[str, str] = {}  # by call id: the formatter hears of a failure before on_tool_end

    def run_config(self, base: RunConfig | None = None) -> RunConfig:
        """`base` (or a default config) with the formatter that tells failed tool calls apart."""
        base = base or RunConfig()
        return dataclasses.replace(base, tool_error_formatter=self._formatter(base.tool_error_formatter))

    def _formatter(self, inner: ToolErrorFormatter | None) -> ToolErrorFormatter:
        async def format_tool_error(args: ToolErrorFormatterArgs[Any]) -> str | None:
            if args.kind == "tool_exception":
                self._failed[args.call_id] = error_text(args.error) if args.error else args.default_message
            if inner is None:
                return None  # the SDK's own message
            text = inner(args)
            return await text if inspect.isawaitable(text) else text

        return format_tool_error

    async def on_tool_start(self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool) -> None:
        self._started[_call_key(context, tool)] = time.perf_counter()
        if self._inner is not None:
            await self._inner.on_tool_start(context, agent, tool)

    async def on_tool_end(self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool, result: object) -> None:
        key = _call_key(context, tool)
        started = self._started.pop(key, None)
        ms = None if started is None else round((time.perf_counter() - started) * 1000, 1)
        error = self._failed.pop(key, None)
        await record_call(
            self.turn, tool.name, _arguments(context), result=None if error else result, error=error, ms=ms
        )
        if self._inner is not None:
            await self._inner.on_tool_end(context, agent, tool, result)

    # The other events only pass through to the inner hooks.

    async def on_llm_start(
        self, context: RunContextWrapper[Any], agent: Agent[Any], system_prompt: str | None, input_items: list[Any]
    ) -> None:
        if self._inner is not None:
            await self._inner.on_llm_start(context, agent, system_prompt, input_items)

    async def on_llm_end(self, context: RunContextWrapper[Any], agent: Agent[Any], response: Any) -> None:
        if self._inner is not None:
            await self._inner.on_llm_end(context, agent, response)

    async def on_agent_start(self, context: Any, agent: Agent[Any]) -> None:
        if self._inner is not None:
            await self._inner.on_agent_start(context, agent)

    async def on_agent_end(self, context: Any, agent: Agent[Any], output: Any) -> None:
        if self._inner is not None:
            await self._inner.on_agent_end(context, agent, output)

    async def on_handoff(self, context: RunContextWrapper[Any], from_agent: Agent[Any], to_agent: Agent[Any]) -> None:
        if self._inner is not None:
            await self._inner.on_handoff(context, from_agent, to_agent)


def _call_key(context: RunContextWrapper[Any], tool: Tool) -> str:
    # Function tools carry their call id; other local tools (shell, computer) run one at a time by name.
    return context.tool_call_id if isinstance(context, ToolContext) else f"tool:{tool.name}"


def _arguments(context: RunContextWrapper[Any]) -> dict[str, Any]:
    if not isinstance(context, ToolContext) or not context.tool_arguments:
        return {}
    try:
        parsed = json.loads(context.tool_arguments)
    except ValueError:
        return {"arguments": context.tool_arguments}
    return parsed if isinstance(parsed, dict) else {"arguments": parsed}
