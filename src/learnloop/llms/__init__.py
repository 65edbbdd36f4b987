"""Chat models. `resolve_llm("openai:gpt-4o-mini", settings)` finds the provider by entry point.

Providers register under the `learnloop.llms` entry-point group as `name = module:from_spec`, where
`from_spec(model: str, settings: Settings) -> ChatModel`; a plugin package can add its own.
"""

from __future__ import annotations

from importlib.metadata import entry_points

from ..config import Settings, split_spec
from ..errors import ConfigurationError
from .base import ChatModel, ChatResponse, Message, ToolCall, ToolSpec

__all__ = ["ENTRY_POINT_GROUP", "ChatModel", "ChatResponse", "Message", "ToolCall", "ToolSpec", "resolve_llm"]

ENTRY_POINT_GROUP = "learnloop.llms"


def resolve_llm(spec: str, settings: Settings) -> ChatModel:
    """Build the chat model a `provider:model` spec names; ConfigurationError if it cannot be built."""
    provider, model = split_spec(spec, "LLM spec")
    providers = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    entry_point = providers.get(provider)
    if entry_point is None:
        known = ", ".join(sorted(providers)) or "none installed"
        raise ConfigurationError(
            f"unknown LLM provider {provider!r} in {spec!r}; known providers: {known}",
            provider=provider,
            known=sorted(providers),
        )
    try:
        factory = entry_point.load()
    except Exception as exc:  # a broken plugin must not look like a bug in the caller
        raise ConfigurationError(f"LLM provider {provider!r} could not be loaded: {exc}") from exc
    llm = factory(model, settings)
    if not isinstance(llm, ChatModel):
        raise ConfigurationError(f"LLM provider {provider!r} returned {type(llm).__name__}, not a ChatModel")
    return llm
