"""One call per turn (`loop.turn()`): context before the model's call, tool calls as they happen, and the rest
of the turn's learning after it, durably and once."""

from .config import TurnConfig
from .runner import HousekeepingReport
from .turn import Turn, TurnService

__all__ = ["HousekeepingReport", "Turn", "TurnConfig", "TurnService"]
