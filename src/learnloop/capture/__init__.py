"""Capture paths: everything that turns what happened in a turn into a candidate learning."""

from .gate import GateRule, GateVerdict, WriteGate

__all__ = ["GateRule", "GateVerdict", "WriteGate"]
