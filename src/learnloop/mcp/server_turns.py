"""The turn API as two MCP tools: `begin_turn` (the context for the user's message, and a turn id) and
`finish_turn` (the answer and the tool calls made meanwhile). An agent whose host cannot call learnloop's
SDK gets seed 001 §7's whole loop from these two calls; the work runs in the server's background."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types as types

from ..errors import ValidationError
from ..loop import Loop
from ..models import Limits
from . import server_args as a
from .server_auth import Principal, require_owner, require_write

__all__ = ["BEGIN", "FINISH", "begin_turn", "finish_turn", "turn_tools"]

BEGIN = "begin_turn"
FINISH = "finish_turn"
_MAX_CALLS = 50

_CALL = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "arguments": {"type": "object"},
        "error": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "Set when the call failed"},
        "ms": {"anyOf": [{"type": "number", "minimum": 0}, {"type": "null"}]},
    },
    "required": ["name"],
}


def turn_tools() -> list[types.Tool]:
    return [
        types.Tool(
            name=BEGIN,
            title="Begin a turn",
            description=(
                "Call first, with the user's message: returns what was learned that matters for it (follow it) and "
                "a turn id. When you have answered, call finish_turn with that id, your answer and the tools you "
                "called, so the next turns learn from this one."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "message": {"type": "string", "description": "The user's message, as they wrote it"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 6},
                },
                "required": ["message"],
            },
            output_schema={
                "type": "object",
                "properties": {
                    "turn_id": {"type": "string"},
                    "context": {"type": "string"},
                    "tools": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["turn_id", "context", "tools"],
            },
            annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
        ),
        types.Tool(
            name=FINISH,
            title="Finish a turn",
            description="Call once you have answered: the turn id from begin_turn, your answer, the tools you called.",
            input_schema={
                "type": "object",
                "properties": {
                    "turn_id": {"type": "string"},
                    "response": {"type": "string", "description": "Your answer to the user"},
                    "tool_calls": {"type": "array", "items": _CALL, "maxItems": _MAX_CALLS},
                },
                "required": ["turn_id", "response"],
            },
            output_schema={
                "type": "object",
                "properties": {"turn_id": {"type": "string"}, "status": {"type": "string"}},
                "required": ["turn_id", "status"],
            },
            annotations=types.ToolAnnotations(
                read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
            ),
        ),
    ]


def _result(text: str, structured: dict[str, Any]) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=structured)


async def begin_turn(
    loop: Loop, principal: Principal, args: Mapping[str, Any], session: str | None
) -> types.CallToolResult:
    require_write(principal, BEGIN)
    require_owner(principal, BEGIN)
    limit = a.optional_int(args, "limit", minimum=1, maximum=20, default=6) or 6
    turn = await loop.turns.begin(
        principal.user,
        a.required_str(args, "message"),
        session=session or "default",
        channel="mcp",
        limits=Limits(top_k=limit, max_items=limit),
    )
    context = turn.context or "Nothing learned so far applies to this message."
    text = f"{context}\n\nTurn id: {turn.id} (pass it to finish_turn when you have answered)."
    structured: dict[str, Any] = {"turn_id": turn.id, "context": turn.context, "tools": [t.name for t in turn.tools]}
    if turn.duplicate_of is not None:  # seed 001 §8.6: the same message moments ago; its answer stands
        answer = turn.cached_response
        said = f"its answer was:\n{answer}" if answer is not None else "it is still being answered"
        text = f"{text}\n\nThis message repeats one sent moments ago (turn {turn.duplicate_of}); {said}"
        structured |= {"duplicate_of": turn.duplicate_of, "response": answer}
    return _result(text, structured)


async def finish_turn(loop: Loop, principal: Principal, args: Mapping[str, Any]) -> types.CallToolResult:
    require_write(principal, FINISH)
    require_owner(principal, FINISH)
    turn_id = a.required_str(args, "turn_id")
    response = a.optional_str(args, "response") or ""
    calls = args.get("tool_calls") or []
    if not isinstance(calls, list) or len(calls) > _MAX_CALLS or not all(isinstance(c, Mapping) for c in calls):
        raise ValidationError(f"'tool_calls' must be a list of at most {_MAX_CALLS} objects", field="tool_calls")
    current = await loop.turns.get(turn_id, user=principal.user)
    if current.status == "open":  # a retried finish_turn must not record its calls twice
        for call in calls:
            ms = call.get("ms")
            await loop.turns.tool_call(
                turn_id,
                a.required_str(call, "name"),
                call.get("arguments") if isinstance(call.get("arguments"), Mapping) else {},
                error=a.optional_str(call, "error"),
                ms=ms if isinstance(ms, int | float) and not isinstance(ms, bool) else None,
                user=principal.user,
            )
    turn = await loop.turns.finish(turn_id, response, user=principal.user)
    return _result(
        f"Turn {turn.id} finished; learning from it runs in the background.",
        {"turn_id": turn.id, "status": turn.status},
    )
