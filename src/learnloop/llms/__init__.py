"""Chat models. `resolve_llm("openai:gpt-4o-mini", settings)` finds the provider by entry point.

Providers register under the `learnloop.llms` entry-point group as `name = module:from_spec`, where
`from_spec(model: str, settings: Settings) -> ChatModel`; a plugin package can add its own.
"""

from __future__ import annotations

from ..config import Settings
from ..errors import ConfigurationError
from ..plugins import build_from_spec
from .base import ChatModel, ChatResponse, Message, ToolCall, ToolSpec

__all__ = ["ENTRY_POINT_GROUP", "ChatModel", "ChatResponse", "Message", "ToolCall", "ToolSpec", "resolve_llm"]

ENTRY_POINT_GROUP = "learnloop.llms"


def resolve_llm(spec: str, settings: Settings) -> ChatModel:
    """Build the LLM a `provider:model` spec names; ConfigurationError if it cannot be built."""
    provider, built = build_from_spec(ENTRY_POINT_GROUP, spec, settings, "LLM")
    if not isinstance(built, ChatModel):
        raise ConfigurationError(f"LLM provider {provider!r} returned {type(built).__name__}, not a ChatModel")
    return built
