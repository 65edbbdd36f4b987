"""Finding providers by entry point: `provider:model` specs for embedders and chat models."""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

from .config import Settings, split_spec
from .errors import ConfigurationError

__all__ = ["build_from_spec"]


def build_from_spec(group: str, spec: str, settings: Settings, what: str) -> tuple[str, Any]:
    """Load the `provider` entry point of `group` and call it with (model, settings); returns
    (provider, what it built). Any failure is a ConfigurationError naming the known providers."""
    provider, model = split_spec(spec, f"{what} spec")
    providers = {ep.name: ep for ep in entry_points(group=group)}
    entry_point = providers.get(provider)
    if entry_point is None:
        known = ", ".join(sorted(providers)) or "none installed"
        raise ConfigurationError(
            f"unknown {what} provider {provider!r} in {spec!r}; known providers: {known}",
            provider=provider,
            known=sorted(providers),
        )
    try:
        factory = entry_point.load()
    except Exception as exc:  # a broken plugin must not look like a bug in the caller
        raise ConfigurationError(f"{what} provider {provider!r} could not be loaded: {exc}") from exc
    return provider, factory(model, settings)
