"""Checks of MCP tool arguments. Done here rather than by a JSON-schema validator so that the model reads one
plain sentence per problem, naming the argument."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ValidationError

__all__ = ["MAX_INT", "optional_int", "optional_str", "required_int", "required_str", "str_list"]

# Stored integers are SQLite's 64-bit ones: a larger id or offset failed deep in the store instead of here.
MAX_INT = 2**53


def required_str(arguments: Mapping[str, Any], name: str) -> str:
    value = optional_str(arguments, name)
    if value is None:
        raise ValidationError(f"'{name}' is required and must be a non-empty string", field=name)
    return value


def optional_str(arguments: Mapping[str, Any], name: str) -> str | None:
    value = arguments.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationError(f"'{name}' must be a string", field=name)
    return value.strip() or None


def required_int(arguments: Mapping[str, Any], name: str, *, minimum: int = 1, maximum: int = MAX_INT) -> int:
    value = optional_int(arguments, name, minimum=minimum, maximum=maximum)
    if value is None:
        raise ValidationError(f"'{name}' is required and must be an integer", field=name)
    return value


def optional_int(
    arguments: Mapping[str, Any], name: str, *, minimum: int, maximum: int | None, default: int | None = None
) -> int | None:
    value = arguments.get(name)
    if value is None:
        return default
    # Some clients send every argument as a string ("42"); accept a whole number either way.
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"'{name}' must be an integer", field=name)
    if value < minimum or (maximum is not None and value > maximum):
        if maximum is not None and maximum < MAX_INT:
            bounds = f"within {minimum}..{maximum}"
        else:
            bounds = f"at least {minimum}" if value < minimum else f"at most {maximum}"
        raise ValidationError(f"'{name}' must be {bounds}", field=name)
    return value


def str_list(arguments: Mapping[str, Any], name: str) -> list[str] | None:
    value = arguments.get(name)
    if value is None:
        return None
    if isinstance(value, str):
        value = [part for part in value.split(",") if part.strip()]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValidationError(f"'{name}' must be a list of strings", field=name)
    return [item.strip() for item in value] or None
