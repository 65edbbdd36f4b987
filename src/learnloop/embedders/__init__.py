"""Embedders, chosen by a `provider:model` spec (`local:minilm`, `openai:text-embedding-3-small`).

Providers are entry points in the `learnloop.embedders` group, each a `from_spec(model, settings)`
factory, so a plugin package can add one without touching learnloop.
"""

from __future__ import annotations

from importlib.metadata import entry_points

from ..config import Settings, split_spec
from ..errors import ConfigurationError
from .base import Embedder

__all__ = ["ENTRY_POINT_GROUP", "Embedder", "resolve_embedder"]

ENTRY_POINT_GROUP = "learnloop.embedders"


def resolve_embedder(spec: str, settings: Settings) -> Embedder:
    """Build the embedder a `provider:model` spec names; ConfigurationError if it cannot be built."""
    provider, model = split_spec(spec, "embedder spec")
    providers = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    entry_point = providers.get(provider)
    if entry_point is None:
        known = ", ".join(sorted(providers)) or "none installed"
        raise ConfigurationError(
            f"unknown embedder provider {provider!r} in {spec!r}; known providers: {known}",
            provider=provider,
            known=sorted(providers),
        )
    try:
        factory = entry_point.load()
    except Exception as exc:  # a broken plugin must not look like a bug in the caller
        raise ConfigurationError(f"embedder provider {provider!r} could not be loaded: {exc}") from exc
    embedder = factory(model, settings)
    if not isinstance(embedder, Embedder):
        kind = type(embedder).__name__
        raise ConfigurationError(f"embedder provider {provider!r} returned {kind}, not an Embedder")
    return embedder
