"""The tool catalog: tools registered by the app or discovered on MCP servers, embedded once.

A tool is embedded as its name in words plus its description ("Finance Tool: Stay informed with ...").
Registering again is cheap: only tools whose description (or name) changed are embedded again; a changed
schema or server alone keeps the stored vector.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

import numpy as np

from ..embedders.base import Embedder
from ..errors import ValidationError
from ..stores.tools import ToolStore
from .base import CatalogEntry
from .models import RegisterReport, ToolDef

__all__ = ["ToolLike", "as_tool_def", "embedding_text", "keyword_document", "name_words", "register"]

ToolLike = ToolDef | Mapping[str, Any]
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[_\-.&/:@+]+")


def as_tool_def(tool: ToolLike | Any, server: str = "") -> ToolDef:
    """A `ToolDef` from a `ToolDef`, a mapping (`name`, `description`, `input_schema` or MCP's
    `inputSchema`) or an object with those attributes (an `mcp.types.Tool`)."""
    if isinstance(tool, ToolDef):
        return tool if tool.server or not server else tool.model_copy(update={"server": server})
    if isinstance(tool, Mapping):
        fields = dict(tool)
    else:
        fields = {
            "name": getattr(tool, "name", None),
            "description": getattr(tool, "description", None),
            "input_schema": getattr(tool, "input_schema", None),
        }
    schema = fields.get("input_schema", fields.get("inputSchema")) or {}
    try:
        return ToolDef(
            name=fields.get("name"),
            description=fields.get("description") or "",
            input_schema=dict(schema),
            server=str(fields.get("server") or server),
        )
    except ValueError as exc:
        raise ValidationError(f"not a tool definition: {exc}", field="tools") from exc


def name_words(name: str) -> str:
    """`get_weatherForecast` → "get weather Forecast", `PDF&URLTool` → "PDF URL Tool"."""
    return _SEPARATORS.sub(" ", _CAMEL.sub(" ", name)).strip()


def keyword_document(name: str, description: str) -> str:
    """What keyword search matches a tool on: its name in words and its description."""
    return f"{name_words(name)}\n{description}"


def embedding_text(tool: ToolDef) -> str:
    words = name_words(tool.name)
    return f"{words}: {tool.description}" if tool.description else words


def _digest(tool: ToolDef) -> str:
    text = json.dumps([tool.description, tool.input_schema, tool.server], sort_keys=True, default=str)
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


async def register(
    store: ToolStore,
    embedder: Embedder,
    tenant: str,
    tools: Iterable[ToolLike | Any],
    now: datetime,
    *,
    server: str = "",
    replace: bool = False,
) -> RegisterReport:
    """Add or update tools. With `replace`, tools of `server` that are not in `tools` are removed."""
    wanted: dict[str, ToolDef] = {}
    for tool in tools:
        definition = as_tool_def(tool, server)
        wanted[definition.name] = definition
    existing = {t.name: t for t in await store.list_tools(tenant, embedding_model=embedder.model_id)}
    report = RegisterReport()
    entries: list[CatalogEntry] = []
    to_embed: list[ToolDef] = []
    for name, tool in wanted.items():
        digest = _digest(tool)
        old = existing.get(name)
        if old is not None and old.digest == digest and old.embedded:
            report.unchanged.append(name)
            continue
        keep = old is not None and old.description == tool.description and old.embedded
        (report.changed if old is not None else report.added).append(name)
        if keep:
            entries.append(
                CatalogEntry(name, tool.server, tool.description, tool.input_schema, digest, None, None, True)
            )
        else:
            to_embed.append(tool)
    if to_embed:
        vectors = await embedder.embed([embedding_text(t) for t in to_embed], purpose="document")
        for tool, vector in zip(to_embed, vectors, strict=True):
            entries.append(
                CatalogEntry(
                    tool.name,
                    tool.server,
                    tool.description,
                    tool.input_schema,
                    _digest(tool),
                    np.ascontiguousarray(vector, dtype=np.float32),
                    embedder.model_id,
                )
            )
    if entries:
        await store.put_tools(tenant, entries, now)
    if replace:
        gone = [t.name for t in existing.values() if t.server == server and t.name not in wanted]
        if gone:
            await store.remove_tools(tenant, gone)
            report.removed.extend(gone)
    return report
