"""One learning agent per engine: its runtime and the workers that run its turns, made together on first use.

Apart from the runtime because the workers run the agent's turns, which read the runtime: this registry is the one
place that knows both.
"""

from __future__ import annotations

import weakref

from ..engine import Engine
from .runtime import AgentRuntime
from .worker import Workers

__all__ = ["runtime_of", "workers_of"]

_agents: dict[int, tuple[AgentRuntime, Workers]] = {}


def _agent(engine: Engine, create: bool) -> tuple[AgentRuntime, Workers] | None:
    """Engines are unhashable dataclasses, so they are keyed by id and dropped from the registry when collected."""
    key = id(engine)
    agent = _agents.get(key)
    if agent is None and create:
        runtime = AgentRuntime(engine)
        agent = _agents[key] = (runtime, Workers(runtime))
        weakref.finalize(engine, _agents.pop, key, None)
    return agent


def runtime_of(engine: Engine, *, create: bool = True) -> AgentRuntime | None:
    """The engine's learning-agent runtime (made on first use unless `create` is false)."""
    agent = _agent(engine, create)
    return None if agent is None else agent[0]


def workers_of(engine: Engine, *, create: bool = True) -> Workers | None:
    """The workers that run the engine's learning-agent turns (made with the runtime)."""
    agent = _agent(engine, create)
    return None if agent is None else agent[1]
