"""The rules every backend applies to stored tool knowledge inside its own transactions: how a learned pair is
reinforced, what a template or recovery pattern keeps of a call, when knowledge has faded, and what the
tenant's shared rows may keep once shapes are stricter (`ToolStore.scrub_shared`). The backend reads and
writes the rows; these functions decide the values.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

import numpy as np

from ..tools.base import CallRecord
from ..tools.decay import ARCHIVE_BELOW, Knowledge, decayed
from ..tools.models import Strength
from ..tools.recovery import describe_change
from ..tools.shapes import Shaper
from .records import Vector

__all__ = [
    "added_direction",
    "kept_arguments",
    "pair_faded",
    "reinforced",
    "shared_insight",
    "shared_recovery",
    "shared_template_params",
    "stronger",
]

_RANK = {Strength.WEAK: 0, Strength.DISCOVERY: 1, Strength.STRONG: 2, Strength.VERY_STRONG: 3}


# -- learning from a call -------------------------------------------------------------------------------


def reinforced(confidence: float, weight: float) -> float:
    """A pair's confidence after one more confirmation of `weight`. Independent confirmations combine like
    noisy-or: two strong signals are stronger than one, and none reaches certainty."""
    return 1.0 - (1.0 - confidence) * (1.0 - weight)


def stronger(new: Strength, old: Strength) -> Strength:
    """The strength a pair keeps: the strongest signal that ever confirmed it."""
    return new if _RANK[new] > _RANK[old] else old


def kept_arguments(record: CallRecord, owner_id: str) -> dict[str, Any]:
    """What a template or recovery of `owner_id` keeps of this call: a shared row ('' owner), only its shape."""
    return record.pattern if owner_id == "" else record.arguments


def added_direction(vector: Vector, stored: Vector | None) -> Vector:
    """A template's query direction after one more use: the sum of the query vectors that used it."""
    total = np.ascontiguousarray(vector, dtype=np.float32)
    return total if stored is None else (total + stored).astype(np.float32)


def pair_faded(confidence: float, last_used_at: float, now: datetime | float) -> bool:
    """Whether a learned pair's decayed confidence fell below what is worth keeping."""
    return decayed(confidence, last_used_at, now, Knowledge.USER_PATTERN) < ARCHIVE_BELOW


# -- what shared rows may keep --------------------------------------------------------------------------


def shared_template_params(tool: str, params: dict[str, Any], origin: str, shaper: Shaper) -> dict[str, Any]:
    """A shared template's parameters as they may be kept: the app's own seeds lose only what the gate
    refuses; learned ones keep the call's shape."""
    if origin == "seed":
        return params if shaper.redactor is None else shaper.redactor.arguments(params)
    return shaper.shape(tool, params)


def shared_recovery(
    failed_tool: str, failed: dict[str, Any], tool: str, fixed: dict[str, Any], shaper: Shaper
) -> tuple[dict[str, Any], dict[str, Any], str]:
    """A shared recovery pattern's (failed params, recovery params, description) as they may be kept."""
    failed, fixed = shaper.shape(failed_tool, failed), shaper.shape(tool, fixed)
    return failed, fixed, describe_change(failed_tool, failed, tool, fixed)


def shared_insight(
    kind: str, key: str, value: dict[str, Any], shaper: Shaper, seeds: Collection[str], lessons: Collection[str]
) -> dict[str, Any]:
    """An insight as the aggregator would write it from shapes (its lessons and values filtered, not grown).
    `seeds`: signatures of the tenant's seed templates; `lessons`: descriptions its shared recoveries have."""
    if kind == "best_practice" and isinstance(value.get("params"), dict):
        tool, params = str(value.get("use", "")), value["params"]
        origin = "seed" if key.rsplit(":", 1)[-1] in seeds else "learned"
        return {**value, "params": shared_template_params(tool, params, origin, shaper)}
    if kind == "parameter_values":
        tool, parameter = str(value.get("tool", "")), str(value.get("parameter", ""))

        def constants(values: Any) -> list[Any]:
            return [v for v in values or [] if shaper.shape(tool, {parameter: v}).get(parameter) == v]

        return {**value, "valid": constants(value.get("valid")), "invalid": constants(value.get("invalid"))}
    if kind == "common_mistake":
        return {**value, "lessons": [lesson for lesson in value.get("lessons") or [] if lesson in lessons]}
    return value
