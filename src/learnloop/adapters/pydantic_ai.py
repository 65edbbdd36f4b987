"""Pydantic AI, one run per turn (`pip install 'learnloop[pydantic-ai]'`).

    from learnloop.adapters.pydantic_ai import run_turn

    result = await run_turn(loop, agent, "alice", "top products this month?", session="s1")
    print(result.output)

`run_turn` begins the turn, runs the agent with a `TurnCapability` for this run only (the agent given is not
changed): the turn's context joins the run's instructions, and every tool call is recorded when it ends, a
`ModelRetry`, `ToolFailed` or exception as failed. Then the turn is finished with the output. A run that raises
leaves the turn open: it expires as abandoned, and the tool calls it recorded still teach the tool layer.

Running the agent yourself inside `async with loop.turn(...) as turn:`:

    result = await agent.run(message, capabilities=[TurnCapability(turn)])
    await turn.finish(result.output)
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ._common import error_text, missing_extra, output_text, record_call

try:
    from pydantic_ai import Agent, AgentRunResult, RunContext
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.capabilities.abstract import ValidatedToolArgs, WrapToolExecuteHandler
    from pydantic_ai.exceptions import (
        ApprovalRequired,
        CallDeferred,
        SkipToolExecution,
        ToolFailedError,
        ToolRetryError,
    )
    from pydantic_ai.messages import ToolCallPart
    from pydantic_ai.tools import ToolDefinition
except ImportError as exc:  # pragma: no cover - the extra is installed wherever this is tested
    raise missing_extra("Pydantic AI", "pydantic-ai") from exc

if TYPE_CHECKING:
    from ..loop import Loop
    from ..turns import Turn

__all__ = ["TurnCapability", "run_turn"]

# Not failures: the call was put off (approval, deferral) or skipped, and runs later or never.
_CONTROL_FLOW = (ApprovalRequired, CallDeferred, SkipToolExecution)


async def run_turn(
    loop: Loop,
    agent: Agent[Any, Any],
    user: str | None,
    message: str,
    *,
    session: str = "default",
    channel: str = "",
    **run_kwargs: Any,
) -> AgentRunResult[Any]:
    """One `agent.run` as one learnloop turn; returns Pydantic AI's own result. `run_kwargs` go to
    `agent.run` (`deps`, `message_history`, `instructions`, `capabilities` of your own ...)."""
    async with loop.turn(user, message, session=session, channel=channel) as turn:
        capabilities = [*(run_kwargs.pop("capabilities", None) or ()), TurnCapability(turn)]
        result: AgentRunResult[Any] = await agent.run(message, capabilities=capabilities, **run_kwargs)
        await turn.finish(output_text(result.output))
    return result


class TurnCapability(AbstractCapability[Any]):
    """Gives a run the turn's context as instructions and records each of its tool calls on the turn. One
    instance per turn: pass it to `agent.run(..., capabilities=[...])`, not to the agent's constructor (the
    context is this turn's)."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn

    def get_instructions(self) -> str | None:
        return self.turn.context or None

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: ValidatedToolArgs,
        handler: WrapToolExecuteHandler,
    ) -> Any:
        if tool_def.kind != "function":  # the output tool is the answer, not a tool call
            return await handler(args)
        started = time.perf_counter()
        try:
            result = await handler(args)
        except _CONTROL_FLOW:
            raise
        except (ToolRetryError, ToolFailedError) as exc:  # ModelRetry, ToolFailed: the message the model sees
            await self._record(call, started, error=str(exc))
            raise
        except Exception as exc:  # ends the run
            await self._record(call, started, error=error_text(exc))
            raise
        await self._record(call, started, result=result)
        return result

    async def _record(
        self, call: ToolCallPart, started: float, *, result: Any = None, error: str | None = None
    ) -> None:
        ms = round((time.perf_counter() - started) * 1000, 1)
        await record_call(self.turn, call.tool_name, call.args_as_dict(), result=result, error=error, ms=ms)
