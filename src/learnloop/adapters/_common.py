"""What the adapters share, with no framework imported."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..errors import ConfigurationError, ValidationError

if TYPE_CHECKING:
    from ..turns import Turn

__all__ = ["error_text", "missing_extra", "output_text", "record_call"]

log = logging.getLogger("learnloop.adapters")


def missing_extra(framework: str, extra: str) -> ConfigurationError:
    return ConfigurationError(
        f"learnloop's {framework} adapter needs the framework installed: pip install 'learnloop[{extra}]'",
        extra=extra,
    )


def output_text(output: Any) -> str:
    """The agent's final output as the turn's response: text as is, structured output as JSON."""
    if output is None:
        return ""
    if isinstance(output, str):
        return output
    if isinstance(output, BaseModel):
        return output.model_dump_json()
    try:
        return json.dumps(output, default=str)
    except (TypeError, ValueError):
        return str(output)


def error_text(error: BaseException) -> str:
    message = str(error)
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


async def record_call(
    turn: Turn, name: str, arguments: Mapping[str, Any], *, result: Any, error: str | None, ms: float | None
) -> None:
    """Record a tool call on the turn. A call the turn refuses (past `TurnConfig.max_tool_calls`, a name too
    long) is logged and left out: the agent's run matters more than the record of it."""
    try:
        await turn.tool_call(name, arguments, result=result, error=error, ms=ms)
    except ValidationError as exc:
        log.warning("tool call %r not recorded on turn %s: %s", name[:80], turn.id, exc.message)
