"""The proxy's own two tools, listed after the routed downstream ones, and the instructions that explain them."""

from __future__ import annotations

import mcp_types as types

__all__ = ["INSTRUCTIONS", "PROXY_TOOLS", "SEARCH_TOOL", "SET_CONTEXT_TOOL"]

SET_CONTEXT_TOOL = "set_context"
SEARCH_TOOL = "search_available_tools"

INSTRUCTIONS = (
    "This server shows the tools that fit the current request. Call set_context with the user's request "
    "whenever the topic changes; the tool list is then updated. If no listed tool fits, call "
    "search_available_tools to find one among all available tools."
)

PROXY_TOOLS = [
    types.Tool(
        name=SET_CONTEXT_TOOL,
        description=(
            "Tell the tool router what the user is asking for now. The list of available tools is updated "
            "to fit it. Call it at the start of every new request or topic."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "The user's request, in their words."},
                "intent": {"type": "string", "description": "Optional short label of the kind of request."},
            },
            "required": ["query"],
        },
    ),
    types.Tool(
        name=SEARCH_TOOL,
        description=(
            "Search all available tools, including those not listed right now, by what you need to do. "
            "Tools found become callable and are added to the list."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What the tool should do."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
            },
            "required": ["query"],
        },
    ),
]
