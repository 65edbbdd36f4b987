"""JSON schemas of the learning agent's tools (seed 003's eleven, plus the governed learning writes)."""

from __future__ import annotations

from typing import Any

from ..capture.tool import tool_schema
from ..llms.base import ToolSpec
from ..models import Vocabulary

__all__ = [
    "EXPERIENCE_READS",
    "EXPERIENCE_WRITES",
    "KNOWLEDGE_READS",
    "KNOWLEDGE_WRITES",
    "LEARNING_TOOLS",
    "REANALYSIS",
    "agent_tool_specs",
]

EXPERIENCE_READS = ("read_file", "list_files")
EXPERIENCE_WRITES = ("write_file", "edit_file")
KNOWLEDGE_READS = ("read_pointer", "read_page", "search_knowledge")
KNOWLEDGE_WRITES = ("edit_pointer", "edit_page", "update_cross_references")
REANALYSIS = "trigger_reground"
LEARNING_TOOLS = ("save_learning", "deprecate_learning")

_STRING = {"type": "string"}
_REFERENCES = {
    "type": "array",
    "items": {"type": "string"},
    "description": "Ids or names of the related pages, pointers or documents",
}


def _object(required: list[str], **properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _described(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {**schema, "description": description}


_FIXED: list[ToolSpec] = [
    ToolSpec(
        name="read_file",
        description="Read one experience file of this project, e.g. routing_rules.md.",
        parameters=_object(["path"], path=_described(_STRING, "File path, e.g. 'routing_rules.md' or 'extended/x.md'")),
    ),
    ToolSpec(
        name="write_file",
        description=(
            "Create an experience file or replace its whole content (last write wins). When you create a new "
            "extended file, also update routing_rules.md so the assistant knows when to read it."
        ),
        parameters=_object(
            ["path", "content"],
            path=_described(_STRING, "File path, e.g. 'extended/scheduling.md'"),
            content=_described(_STRING, "The complete Markdown content of the file"),
        ),
    ),
    ToolSpec(
        name="edit_file",
        description=(
            "Replace an exact passage of an experience file with new text. Fails if old_text is not in the file: "
            "read the file first and copy the passage exactly."
        ),
        parameters=_object(
            ["path", "old_text", "new_text"],
            path=_STRING,
            old_text=_described(_STRING, "The exact text to replace (its first occurrence)"),
            new_text=_described(_STRING, "The text to put in its place"),
        ),
    ),
    ToolSpec(
        name="list_files",
        description="List the experience files of this project with their size and last update.",
        parameters=_object([]),
    ),
    ToolSpec(
        name="read_pointer",
        description="Read one pointer (a findable part of a page): title, description, cross references.",
        parameters=_object(["pointer_id"], pointer_id=_STRING),
    ),
    ToolSpec(
        name="read_page",
        description="Read one page: title, content summary, kind, cross references and the pointers on it.",
        parameters=_object(["page_id"], page_id=_STRING),
    ),
    ToolSpec(
        name="search_knowledge",
        description="Search the knowledge base by meaning, the way the assistant retrieves items for a question.",
        parameters=_object(
            ["query"],
            query=_STRING,
            limit={"type": "integer", "minimum": 1, "maximum": 20, "description": "How many results (default 8)"},
        ),
    ),
    ToolSpec(
        name="edit_pointer",
        description=(
            "Correct a pointer. Only 'description' (a string; the pointer is re-embedded, so search finds it by "
            "the corrected text) and 'cross_references' (a list) can be changed."
        ),
        parameters=_object(
            ["pointer_id", "field", "new_content"],
            pointer_id=_STRING,
            field={"type": "string", "enum": ["description", "cross_references"]},
            new_content={"type": ["string", "array"], "items": {"type": "string"}},
        ),
    ),
    ToolSpec(
        name="edit_page",
        description="Correct a page's 'content' summary (a string) or its 'cross_references' (a list).",
        parameters=_object(
            ["page_id", "field", "new_content"],
            page_id=_STRING,
            field={"type": "string", "enum": ["content", "cross_references"]},
            new_content={"type": ["string", "array"], "items": {"type": "string"}},
        ),
    ),
    ToolSpec(
        name="update_cross_references",
        description="Replace the cross references of a pointer.",
        parameters=_object(["pointer_id", "references"], pointer_id=_STRING, references=_REFERENCES),
    ),
    ToolSpec(
        name="trigger_reground",
        description=(
            "Ask for a page to be analysed again from its source, when the knowledge is wrong or incomplete in a "
            "way a text edit cannot fix (something missed or misread). Rare."
        ),
        parameters=_object(
            ["page_id", "instruction"],
            page_id=_STRING,
            instruction=_described(_STRING, "What is wrong or missing, and what to look for"),
        ),
    ),
    ToolSpec(
        name="deprecate_learning",
        description="Retire a stored learning that this interaction showed to be wrong or outdated.",
        parameters=_object(
            ["learning_id", "reason"],
            learning_id={"type": "integer"},
            reason=_described(_STRING, "Why it is wrong or outdated"),
        ),
    ),
]


def agent_tool_specs(vocabulary: Vocabulary) -> list[ToolSpec]:
    """Every tool, with `save_learning`'s categories from the namespace's vocabulary."""
    save = tool_schema(vocabulary, "json")
    description = (
        "Save one concise, reusable fact, preference or correction about the user or their work as a learning "
        "(it goes through the write gate and deduplication and starts as a candidate)."
    )
    return [*_FIXED, ToolSpec(name="save_learning", description=description, parameters=save["parameters"])]
