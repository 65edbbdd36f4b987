"""Where the learning agent finds its storage contract (`learnloop.stores.agent.AgentStore`) on an engine."""

from __future__ import annotations

from ..engine import Engine
from ..errors import NotConfigured
from ..stores.agent import AgentStore, ClaimResult

__all__ = ["AgentStore", "ClaimResult", "agent_store_of"]


def agent_store_of(engine: Engine) -> AgentStore:
    """The engine's agent store; NotConfigured if its backend has none."""
    store = engine.agent_store
    if store is None:
        raise NotConfigured(f"the store {engine.store!r} has no learning-agent tables (use the SQLite backend)")
    return store
