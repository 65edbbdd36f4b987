"""Calibrating dedupe's cosine thresholds for an embedding model by where they fall among unrelated pairs.

Cosines mean different things for different models (unrelated LoCoMo turns: median 0.27 for MiniLM, 0.92 for
the static profile). What carries over from one model to another is a threshold's *rank* among the cosines of
unrelated text pairs: on the tuning corpus (bench/data/dedupe/tuning.jsonl, every existing text against every
other pair's new text) MiniLM's hand-set thresholds and the static profile's separately tuned ones sit at about
the same ranks (related 0.9997 / 0.9994, paraphrase 0.9998 / 0.9996, link 0.99986 / 0.99978). `calibrate`
places each threshold at the shipped rank (`RANKS`) of a new model's own unrelated pairs — texts from your
data, no labels needed. Fitting thresholds to labelled pairs instead was tried and over-fits: on a held-out
corpus it kept 97% of different-subject pairs apart where the shipped thresholds keep 100%. Labelled pairs,
when given, are only scored.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError, ValidationError
from ..models import Learning
from .dedupe import DedupeAction, DedupePolicy, judge

__all__ = ["RANKS", "LabelledPair", "calibrate", "load_policy", "save_policy", "score"]

# The rank among unrelated pairs' cosines at which each threshold sits (see the module docstring).
RANKS = {
    "update_similarity": 0.985,
    "related_similarity": 0.9995,
    "paraphrase_similarity": 0.9997,
    "link_similarity": 0.9998,
    "reword_similarity": 0.99996,
}
_LABELS = ("skip", "merge", "new_version", "create")


@dataclass(frozen=True)
class LabelledPair:
    existing: str
    new: str
    label: str
    similarity: float
    existing_tags: tuple[str, ...] = ()
    new_tags: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, row: dict[str, Any], similarity: float) -> LabelledPair:
        if (
            row.get("label") not in _LABELS
            or not isinstance(row.get("existing"), str)
            or not isinstance(row.get("new"), str)
        ):
            raise ValidationError("a pair needs 'existing', 'new' and a label in skip|merge|new_version|create")
        return cls(
            row["existing"],
            row["new"],
            row["label"],
            similarity,
            tuple(row.get("existing_tags") or ()),
            tuple(row.get("new_tags") or ()),
        )


def score(pairs: Sequence[LabelledPair], policy: DedupePolicy) -> dict[str, float]:
    """kept_apart (create pairs both kept), stale_gone (new_version pairs superseded), one_live (skip/merge)."""
    now = datetime.now(UTC)
    right = dict.fromkeys(_LABELS, 0)
    total = dict.fromkeys(_LABELS, 0)
    for pair in pairs:
        old = Learning(
            id=1,
            tenant="t",
            user="u",
            text=pair.existing,
            tags=list(pair.existing_tags),
            simhash64="0" * 16,
            created_at=now,
            updated_at=now,
        )
        action = judge(pair.new, pair.new_tags, old, pair.similarity, policy).action
        total[pair.label] += 1
        if pair.label == "create":
            right["create"] += action is DedupeAction.CREATE
        elif pair.label == "new_version":
            right["new_version"] += action is DedupeAction.NEW_VERSION
        else:
            right[pair.label] += action in (DedupeAction.SKIP, DedupeAction.MERGE)
    same = total["skip"] + total["merge"]
    return {
        "kept_apart": right["create"] / total["create"] if total["create"] else 1.0,
        "stale_gone": right["new_version"] / total["new_version"] if total["new_version"] else 1.0,
        "one_live": (right["skip"] + right["merge"]) / same if same else 1.0,
    }


def _quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1)))]


def calibrate(unrelated: Sequence[float], model: str) -> DedupePolicy:
    """Thresholds for `model` from the cosines of unrelated text pairs (at least 10,000 for the ranks to mean
    something: 150 texts give 22,350 pairs)."""
    if len(unrelated) < 10_000:
        raise ValidationError(
            f"calibration needs at least 10,000 unrelated pairs (about 150 texts), got {len(unrelated)}"
        )
    at = {name: round(_quantile(unrelated, rank), 4) for name, rank in RANKS.items()}
    return replace(
        DedupePolicy(),
        model=model,
        calibrated=True,
        update_similarity=at["update_similarity"],
        related_similarity=at["related_similarity"],
        paraphrase_similarity=at["paraphrase_similarity"],
        link_similarity=at["link_similarity"],
        reword_similarity=at["reword_similarity"],
    )


def save_policy(policy: DedupePolicy, path: str | Path) -> None:
    Path(path).write_text(json.dumps(asdict(policy), indent=2) + "\n", "utf-8")


def load_policy(path: str | Path) -> DedupePolicy:
    """A policy written by `learnloop calibrate --out` (the setting `dedupe_calibration`)."""
    try:
        raw = json.loads(Path(path).read_text("utf-8"))
        known = {f.name for f in fields(DedupePolicy)}
        return DedupePolicy(**{k: v for k, v in raw.items() if k in known})
    except (OSError, ValueError, TypeError) as exc:
        raise ConfigurationError(f"cannot read the dedupe calibration {path}: {exc}") from exc
