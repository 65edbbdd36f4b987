"""The `save_learning` tool an app gives its LLM: schemas for each tool format, the system-prompt section
that tells the model when to call it, and the handler that turns a raw tool call into a governed write."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel

from ..engine import Engine
from ..errors import ValidationError
from ..models import LearningType, Origin, Scope, Source, Vocabulary
from .write import SaveAction, SaveRequest, SaveResult, save

__all__ = [
    "DEFAULT_TOOL_NAME",
    "ToolCallResult",
    "ToolFormat",
    "handle_tool_call",
    "proactive_learning_section",
    "tool_schema",
]

DEFAULT_TOOL_NAME = "save_learning"
ToolFormat = Literal["openai", "anthropic", "mcp", "json"]

_DESCRIPTION = (
    "Save a learning or insight to long-term memory. Call this PROACTIVELY when you identify a teaching "
    "moment — user corrections, facts about the user's setup, feedback on what worked or didn't, stated "
    "preferences. Do not ask permission; save the learning and briefly mention it."
)
_GENERIC_EXAMPLE = "User's kettle boils off ~3.5 L/hr, lower than the typical 4-5 L/hr"


def _parameters(vocabulary: Vocabulary) -> dict[str, Any]:
    example = next((c.examples[0] for c in vocabulary.categories if c.examples), _GENERIC_EXAMPLE)
    categories = "; ".join(f"{c.name}: {c.description}" for c in vocabulary.categories)
    return {
        "type": "object",
        "properties": {
            "learning": {
                "type": "string",
                "description": f"The insight, written as a concise factual statement. E.g. '{example}'",
            },
            "category": {
                "type": "string",
                "enum": vocabulary.names,
                "description": f"Category of this learning — {categories}",
            },
            "source_context": {
                "type": "string",
                "description": "Brief context about what triggered this learning, e.g. a topic or session name",
            },
        },
        "required": ["learning", "category"],
    }


def tool_schema(vocabulary: Vocabulary, format: ToolFormat = "openai", name: str = DEFAULT_TOOL_NAME) -> dict[str, Any]:
    """The tool definition in the shape each API expects, with the vocabulary's categories as an enum."""
    parameters = _parameters(vocabulary)
    if format == "openai":
        return {"type": "function", "function": {"name": name, "description": _DESCRIPTION, "parameters": parameters}}
    if format == "anthropic":
        return {"name": name, "description": _DESCRIPTION, "input_schema": parameters}
    if format == "mcp":
        return {"name": name, "description": _DESCRIPTION, "inputSchema": parameters}
    if format == "json":
        return {"name": name, "description": _DESCRIPTION, "parameters": parameters}
    raise ValidationError(f"unknown tool format {format!r}; use openai, anthropic, mcp or json", field="format")


def proactive_learning_section(vocabulary: Vocabulary, tool: str = DEFAULT_TOOL_NAME) -> str:
    """Seed 000's "Proactive Learning" system-prompt section for this vocabulary: add it to the prompt."""
    template = resources.files(__package__).joinpath("prompts/proactive_learning.md").read_text("utf-8")
    lines = [f"- **{c.name.replace('_', ' ').capitalize()}** — {c.description}" for c in vocabulary.categories]
    examples = [f'- {tool}("{example}", "{c.name}")' for c in vocabulary.categories for example in c.examples[:1]] or [
        f'- User: "The boil-off was way less than you predicted"\n  → {tool}("{_GENERIC_EXAMPLE}", '
        f'"{vocabulary.names[0]}", "brew day")'
    ]
    return (
        template.replace("{tool}", tool)
        .replace("{category_lines}", "\n".join(lines))
        .replace("{category_names}", ", ".join(vocabulary.names))
        .replace("{examples}", "\n".join(examples))
        .strip()
    )


class ToolCallResult(BaseModel):
    """What the model should see (`content`) and what happened (`action`, `learning_id`, `result`)."""

    ok: bool
    action: SaveAction | Literal["invalid"]
    content: str
    learning_id: int | None = None
    result: SaveResult | None = None
    error: dict[str, Any] | None = None


class _Arguments(BaseModel):
    learning: str
    category: str
    source_context: str | None = None


def _parse(arguments: Mapping[str, Any] | str) -> _Arguments:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments or "{}")
        except json.JSONDecodeError as exc:
            raise ValidationError(f"tool arguments are not valid JSON: {exc.msg}", field="arguments") from exc
    if not isinstance(arguments, Mapping):
        raise ValidationError("tool arguments must be a JSON object", field="arguments")
    problems = []
    for field in ("learning", "category"):
        if not isinstance(arguments.get(field), str) or not arguments[field].strip():
            problems.append(f"'{field}' is required and must be a non-empty string")
    context = arguments.get("source_context")
    if context is not None and not isinstance(context, str):
        problems.append("'source_context' must be a string")
    if problems:
        raise ValidationError("; ".join(problems), field="arguments")
    return _Arguments(learning=arguments["learning"], category=arguments["category"].strip(), source_context=context)


def _message(result: SaveResult, category: str) -> str:
    learning = result.learning
    if result.action is SaveAction.CREATED and learning is not None:
        return f"Saved learning #{learning.id} ({category})."
    if result.action is SaveAction.NEW_VERSION and learning is not None:
        return f"Saved learning #{learning.id} ({category}); it replaces #{result.related_id}, which said otherwise."
    if result.action is SaveAction.MERGED:
        return f"Merged into existing learning #{result.related_id}: it already said this."
    if result.action is SaveAction.SKIPPED:
        return f"Already known as learning #{result.related_id}; nothing new saved."
    return f"Not saved: {result.reason}. Do not save this content again."


async def handle_tool_call(
    engine: Engine,
    scope: Scope,
    arguments: Mapping[str, Any] | str,
    *,
    user: str | None,
    session: str | None = None,
    message: str | None = None,
    interaction: str | None = None,
    namespace: str = "learning",
    errors: Literal["return", "raise"] = "return",
    at: datetime | None = None,
) -> ToolCallResult:
    """Run the model's raw `save_learning` arguments through the governed write.

    With `errors="return"` (the default) invalid calls come back as a result the model can read and fix;
    with `errors="raise"` they raise `ValidationError` / `InvalidCategory` (the HTTP API uses this).
    """
    try:
        args = _parse(arguments)
        result = await save(
            engine,
            scope,
            SaveRequest(
                text=args.learning,
                user=user,
                namespace=namespace,
                category=args.category,
                type=LearningType.CORRECTION if args.category == "correction" else LearningType.FACT,
                status=engine.tool_status,
                confidence=engine.policy.tool_confidence,
                origin=Origin.TOOL,
                source=Source(session=session, message=message, interaction=interaction, context=args.source_context),
                actor="tool",
                at=at,
            ),
        )
    except ValidationError as exc:
        if errors == "raise":
            raise
        return ToolCallResult(ok=False, action="invalid", content=f"Invalid call: {exc.message}", error=exc.to_dict())
    learning_id = None if result.learning is None else result.learning.id
    return ToolCallResult(
        ok=result.action is not SaveAction.REFUSED,
        action=result.action,
        content=_message(result, args.category),
        learning_id=learning_id,
        result=result,
    )
