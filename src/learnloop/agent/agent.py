"""The learning agent's turn for one package (seed 003 R2's `run_learning_turn`), resumable after a crash.

Every message of the agent's conversation is stored as it happens: the package as a user message, each model
reply, each tool result (in the same transaction as the tool's effect). A retried package therefore resumes
where the killed attempt stopped: it answers the tool calls that have no result yet and asks the model again
only when the last stored message calls for it, so no step runs twice.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING

from ..capture.fields import redact_text
from ..llms.base import Message, ToolCall, ToolSpec
from ..prompting import estimate_tokens
from .package import InteractionPackage
from .records import AgentSession, Job, StoredMessage
from .schemas import agent_tool_specs
from .tools import StepContext, run_step

if TYPE_CHECKING:
    from .runtime import AgentConfig, AgentRuntime

__all__ = ["TurnOutcome", "run_learning_turn", "system_prompt"]

log = logging.getLogger("learnloop.agent")


@functools.cache
def _template() -> str:
    return resources.files(__package__).joinpath("prompts/agent_system.md").read_text("utf-8")


def system_prompt(config: AgentConfig) -> str:
    """The learning agent's identity and instructions, in the app's words."""
    extra = f"\n## About this application\n\n{config.instructions.strip()}\n" if config.instructions.strip() else ""
    return (
        _template()
        .replace("{assistant}", config.assistant_name)
        .replace("{user}", config.user_label)
        .replace("{routing_file}", config.routing_file)
        .replace("{instructions}", extra)
        .strip()
    )


@dataclass(frozen=True)
class TurnOutcome:
    rounds: int
    steps: int
    summary: str
    stopped: str | None = None  # why the turn ended before the model finished, if it did


def _results_after(messages: list[StoredMessage], index: int) -> set[str]:
    """Ids answered by the tool messages right after message `index`. Positional, because some
    OpenAI-compatible servers reuse call ids ("call_0") from one reply to the next."""
    answered: set[str] = set()
    for stored in messages[index + 1 :]:
        if stored.message.role != "tool":
            break
        if stored.message.tool_call_id:
            answered.add(stored.message.tool_call_id)
    return answered


def _coherent(history: list[StoredMessage]) -> list[Message]:
    """The stored conversation as the model may see it: a tool call without a result (left by a package that
    failed for good) is dropped, so the endpoint never rejects the conversation."""
    out: list[Message] = []
    for index, stored in enumerate(history):
        message = stored.message
        if message.tool_calls:
            answered = _results_after(history, index)
            kept = [c for c in message.tool_calls if c.id in answered]
            if not kept and not message.content:
                continue
            message = message.model_copy(update={"tool_calls": kept})
        out.append(message)
    return out


async def run_learning_turn(runtime: AgentRuntime, session: AgentSession, job: Job) -> TurnOutcome:
    engine, config, store = runtime.engine, runtime.config, runtime.store
    model = runtime.require_model()
    package = InteractionPackage.model_validate_json(job.body).model_copy(update={"turn": job.turn})
    history = await store.messages(job.tenant, job.session)
    mine = [m for m in history if m.package_id == job.package_id]
    if not mine:
        prompt = package.as_prompt()
        stored = await store.append_message(
            job, Message(role="user", content=prompt), estimate_tokens(prompt), engine.clock()
        )
        history.append(stored)
        mine.append(stored)
    vocabulary = await engine.vocabulary(job.tenant, config.learning_namespace)
    tools: list[ToolSpec] = agent_tool_specs(vocabulary)
    system = Message(role="system", content=system_prompt(config))
    context = StepContext(runtime=runtime, session=session, job=job)
    rounds = sum(1 for m in mine if m.message.role == "assistant")
    steps = sum(len(m.message.tool_calls) for m in mine if m.message.role == "assistant")

    def remember(stored: StoredMessage) -> None:
        history.append(stored)
        mine.append(stored)

    while True:
        calling = max(i for i, m in enumerate(mine) if m.message.role != "tool")
        last = mine[calling].message
        if last.role == "assistant" and last.tool_calls:
            answered = _results_after(mine, calling)
            pending = [(i, c) for i, c in enumerate(last.tool_calls) if c.id not in answered]
            if pending:  # resume: the calls of the last reply that have no result yet
                first_step = steps - len(last.tool_calls)
                for index, call in pending:
                    _, message = await run_step(context, call, first_step + index)
                    remember(StoredMessage(0, job.package_id, message, estimate_tokens(message.content or "")))
                continue
        elif last.role == "assistant":
            return TurnOutcome(rounds, steps, last.content or "")
        if rounds >= config.max_rounds:
            return TurnOutcome(rounds, steps, "", stopped=f"reached {config.max_rounds} model calls")
        response = await model.chat([system, *_coherent(history)], tools=tools, temperature=config.temperature)
        rounds += 1
        reply = response.message
        calls: list[ToolCall] = reply.tool_calls
        if steps + len(calls) > config.max_tool_calls:
            log.warning(
                "learning agent: package %s asked for more than %d tool calls", job.package_id, config.max_tool_calls
            )
            calls = calls[: max(0, config.max_tool_calls - steps)]
            if not calls:
                return TurnOutcome(
                    rounds, steps, reply.content or "", stopped=f"reached {config.max_tool_calls} tool calls"
                )
        # The reply's text is stored under the *redact* policy (its tool calls are gated by the tools they call).
        content = None if reply.content is None else redact_text(engine.gate, reply.content)
        reply = Message(role="assistant", content=content, tool_calls=calls)
        tokens = estimate_tokens((reply.content or "") + "".join(c.raw_arguments for c in calls))
        remember(await store.append_message(job, reply, tokens, engine.clock()))
        steps += len(calls)
