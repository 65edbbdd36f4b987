"""The `learnloop` command line."""

from __future__ import annotations

from .main import cli, main

__all__ = ["cli", "main"]
