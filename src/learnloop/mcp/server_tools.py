"""What the learnloop MCP server offers: tool definitions with input and output schemas, and the results a model
reads (text) beside the ones a program reads (structured content)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import mcp_types as types

from ..capture.tool import ToolCallResult
from ..errors import LearnloopError
from ..lifecycle import effective_confidence
from ..models import Learning, Page, RetrievalResult, Status, Vocabulary, utcnow
from .server_args import MAX_INT

__all__ = [
    "CONFIRM",
    "DEPRECATE",
    "LIST",
    "RECALL",
    "SAVE",
    "changed_result",
    "error_result",
    "list_result",
    "recall_result",
    "save_result",
    "tools",
]

SAVE = "save_learning"
RECALL = "recall"
LIST = "list_learnings"
DEPRECATE = "deprecate_learning"
CONFIRM = "confirm_learning"

_STATUSES = [s.value for s in Status]
# anyOf rather than `"type": [..., "null"]`: clients that map schemas onto a single-type dialect (Gemini's
# OpenAPI subset) reject type arrays; the Inspector's --strict portability check flags them.
_NULLABLE_INT = {"anyOf": [{"type": "integer"}, {"type": "null"}]}
_NULLABLE_STR = {"anyOf": [{"type": "string"}, {"type": "null"}]}

_LEARNING_PROPERTIES: dict[str, Any] = {
    "id": {"type": "integer"},
    "text": {"type": "string"},
    "category": _NULLABLE_STR,
    "status": {"type": "string", "enum": _STATUSES},
    "type": {"type": "string"},
    "owner": {**_NULLABLE_STR, "description": "The user it belongs to; null for the tenant's shared learnings"},
    "confidence": {"type": "number"},
    "hits": {"type": "integer"},
    "updated_at": {"type": "string", "format": "date-time"},
}
_LEARNING = {"type": "object", "properties": _LEARNING_PROPERTIES, "required": list(_LEARNING_PROPERTIES)}
_RECALLED = {
    "type": "object",
    "properties": {
        **_LEARNING_PROPERTIES,
        "score": {"type": "number"},
        "why": {"type": "string", "description": "Why it was recalled"},
    },
    "required": [*_LEARNING_PROPERTIES, "score", "why"],
}

_SAVE_OUTPUT = {
    "type": "object",
    "properties": {
        "ok": {"type": "boolean"},
        "action": {"type": "string", "enum": ["created", "merged", "new_version", "skipped", "refused", "invalid"]},
        "learning_id": {**_NULLABLE_INT, "description": "The stored learning, when one was created"},
        "related_id": {**_NULLABLE_INT, "description": "The existing learning it matched or replaced"},
        "reason": _NULLABLE_STR,
        "rule": {**_NULLABLE_STR, "description": "The write-gate rule that refused it"},
    },
    "required": ["ok", "action", "learning_id", "related_id", "reason", "rule"],
}
_RECALL_OUTPUT = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "block": {"type": "string", "description": "The memory block, ready for the prompt; empty if nothing fits"},
        "items": {"type": "array", "items": _RECALLED},
        "tokens": {"type": "integer"},
        "dropped": {"type": "integer", "description": "Relevant learnings left out by the limits"},
    },
    "required": ["query", "block", "items", "tokens", "dropped"],
}
_LIST_OUTPUT = {
    "type": "object",
    "properties": {
        "items": {"type": "array", "items": _LEARNING},
        "total": {"type": "integer"},
        "offset": {"type": "integer"},
        "limit": {"type": "integer"},
    },
    "required": ["items", "total", "offset", "limit"],
}
_ID = {
    "type": "integer",
    "minimum": 1,
    "maximum": MAX_INT,
    "description": "The learning's id, as returned by recall or list_learnings",
}


def tools(save_schema: Mapping[str, Any], vocabulary: Vocabulary) -> list[types.Tool]:
    """The tool list for one tenant: `save_schema` is `loop.tool_schema("mcp")`, so its category enum (and
    recall's and list's category filters) follow that tenant's vocabulary."""
    categories = {"type": "string", "enum": vocabulary.names}
    return [
        types.Tool(
            name=str(save_schema["name"]),
            title="Save a learning",
            description=str(save_schema["description"]),
            input_schema=dict(save_schema["inputSchema"]),
            output_schema=_SAVE_OUTPUT,
            annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
        ),
        types.Tool(
            name=RECALL,
            title="Recall learnings",
            description=(
                "Recall what was learned before about this user and task. Call it at the start of a task and "
                "whenever the user asks about something you may have learned. Returns a memory block to follow, "
                "and the ids of the learnings in it for confirm_learning and deprecate_learning."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "The user's request or the task at hand"},
                    "categories": {"type": "array", "items": categories, "description": "Only these categories"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 6},
                },
                "required": ["query"],
            },
            output_schema=_RECALL_OUTPUT,
            annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
        ),
        types.Tool(
            name=LIST,
            title="List learnings",
            description="List saved learnings, newest first, optionally by category, status or matching words.",
            input_schema={
                "type": "object",
                "properties": {
                    "category": categories,
                    "status": {"type": "string", "enum": _STATUSES},
                    "text": {"type": "string", "description": "Only learnings containing these words"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
                    "offset": {"type": "integer", "minimum": 0, "maximum": MAX_INT, "default": 0},
                },
            },
            output_schema=_LIST_OUTPUT,
            annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
        ),
        types.Tool(
            name=DEPRECATE,
            title="Deprecate a learning",
            description=(
                "Mark a learning as wrong or obsolete, so it is never recalled again. Call it when the user says a "
                "recalled learning is wrong, or it turned out to be wrong. Save the right version with save_learning."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "id": _ID,
                    "reason": {"type": "string", "description": "Why it is wrong or obsolete (kept in its history)"},
                },
                "required": ["id", "reason"],
            },
            output_schema=_LEARNING,
            annotations=types.ToolAnnotations(
                read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
            ),
        ),
        types.Tool(
            name=CONFIRM,
            title="Confirm a learning",
            description=(
                "Confirm that a learning is right: a candidate becomes verified, a verified one gains confidence "
                "(both are preferred in recall). Call it when the user confirms a recalled learning, or it clearly "
                "worked."
            ),
            input_schema={
                "type": "object",
                "properties": {"id": _ID, "reason": {"type": "string", "description": "What confirmed it"}},
                "required": ["id"],
            },
            output_schema=_LEARNING,
            annotations=types.ToolAnnotations(
                read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
            ),
        ),
    ]


# -- results -------------------------------------------------------------------------------------------------


def _learning(learning: Learning) -> dict[str, Any]:
    return {
        "id": learning.id,
        "text": learning.text,
        "category": learning.category,
        "status": learning.status.value,
        "type": learning.type.value,
        "owner": learning.user,
        "confidence": learning.confidence,
        # A preference's confidence fades unless restated (seed 001 §4.5); the model sees how much is left.
        "effective_confidence": round(effective_confidence(learning, utcnow()), 4),
        "hits": learning.hits,
        "updated_at": learning.updated_at.isoformat(),
    }


def _line(learning: Learning) -> str:
    owner = "" if learning.user else " (shared)"
    return f"#{learning.id} [{learning.status.value}/{learning.category or '-'}] {learning.text}{owner}"


def _result(texts: Sequence[str], structured: dict[str, Any], *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text) for text in texts],
        structured_content=structured,
        is_error=error,
    )


def error_result(exc: LearnloopError) -> types.CallToolResult:
    """A tool error the model can act on: the validator's or the lifecycle's own sentence, and its code."""
    return _result([f"Error ({exc.code}): {exc.message}"], {"error": exc.to_dict()}, error=True)


def save_result(call: ToolCallResult) -> types.CallToolResult:
    result = call.result
    rule = result.rule if result is not None else None
    text = call.content if rule is None else f"{call.content} Refused by write-gate rule {rule}."
    structured = {
        "ok": call.ok,
        "action": str(call.action),
        "learning_id": call.learning_id,
        "related_id": result.related_id if result is not None else None,
        "reason": result.reason if result is not None else (call.error or {}).get("message"),
        "rule": rule,
    }
    if call.error is not None:
        structured["error"] = call.error
    # Refused and invalid calls are tool errors: the model must not believe the learning was kept.
    return _result([text], structured, error=not call.ok)


def recall_result(result: RetrievalResult) -> types.CallToolResult:
    structured = {
        "query": result.query,
        "block": result.block,
        "items": [
            {**_learning(item.learning), "score": round(item.score, 4), "why": item.why} for item in result.items
        ],
        "tokens": result.tokens,
        "dropped": result.dropped,
    }
    if not result.items:
        return _result(["No learnings are relevant to this query yet."], structured)
    ids = ", ".join(f"#{item.learning.id}" for item in result.items)
    # The block carries no ids (it is written for the prompt); the model needs them to confirm or deprecate.
    hint = f"Learning ids, in the order above: {ids}. Use them with confirm_learning or deprecate_learning."
    return _result([result.block, hint], structured)


def list_result(page: Page[Learning]) -> types.CallToolResult:
    structured = {
        "items": [_learning(learning) for learning in page.items],
        "total": page.total,
        "offset": page.offset,
        "limit": page.limit,
    }
    if not page.items:
        return _result(["No learnings match." if page.total == 0 else "No more learnings."], structured)
    shown = f"({page.offset + 1}-{page.offset + len(page.items)} of {page.total})"
    return _result(["\n".join([*map(_line, page.items), shown])], structured)


def changed_result(learning: Learning, what: str) -> types.CallToolResult:
    return _result([f"{what} learning {_line(learning)}"], _learning(learning))
