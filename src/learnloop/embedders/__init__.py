"""Embedders, chosen by a `provider:model` spec (`local:minilm`, `openai:text-embedding-3-small`).

Providers are entry points in the `learnloop.embedders` group, each a `from_spec(model, settings)`
factory, so a plugin package can add one without touching learnloop.
"""

from __future__ import annotations

from ..config import Settings
from ..errors import ConfigurationError
from ..plugins import build_from_spec
from .base import Embedder

__all__ = ["ENTRY_POINT_GROUP", "Embedder", "resolve_embedder"]

ENTRY_POINT_GROUP = "learnloop.embedders"


def resolve_embedder(spec: str, settings: Settings) -> Embedder:
    """Build the embedder a `provider:model` spec names; ConfigurationError if it cannot be built."""
    provider, built = build_from_spec(ENTRY_POINT_GROUP, spec, settings, "embedder")
    if not isinstance(built, Embedder):
        raise ConfigurationError(f"embedder provider {provider!r} returned {type(built).__name__}, not an Embedder")
    return built
