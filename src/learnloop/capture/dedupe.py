"""Deduplication and conflict detection for a candidate learning against what its owner already knows.

Order of checks (each explained in the decision's reason):

1. SimHash: a live learning within a few bits with the same numbers is the same statement → `skip`
   (no embedding needed, so replaying a conversation costs almost nothing).
2. Vector similarity: neighbours about the same subject (very similar, or similar with shared content
   words). Embeddings barely see numbers ("3.5 L/hr" and "4 L/hr" score 0.96), so:
3. Conflict: the same subject with different values for the same unit → `new_version` (supersedes).
   Otherwise an identical statement is `skip`, a paraphrase is `merge`, and nothing close is `create`.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from ..models import Learning
from ..terms import index_terms

__all__ = [
    "DedupeAction",
    "DedupeDecision",
    "DedupePolicy",
    "check_simhash",
    "decide",
    "numbers",
    "numbers_conflict",
    "values_by_unit",
]

_NUMBER = re.compile(
    r"(?<![\w.])([#~≈$€£]?)(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:[.,]\d+)?)"
    r"(?:\s*(%|°\s?[cCfF]\b|[a-zA-Zµ°$€£]+(?:\s?/\s?[a-zA-Z]+)?))?"
)
_THOUSANDS = re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_LABEL_BEFORE = re.compile(r"(?:\b[A-Z][\w]*[\s-]|#|\b[vV])$")
_UNITS = {
    "%": "%",
    "percent": "%",
    "pct": "%",
    "c": "c",
    "°c": "c",
    "° c": "c",
    "degc": "c",
    "f": "f",
    "°f": "f",
    "° f": "f",
    "l": "l",
    "litre": "l",
    "litres": "l",
    "liter": "l",
    "liters": "l",
    "ml": "ml",
    "hl": "hl",
    "gal": "gal",
    "gallon": "gal",
    "gallons": "gal",
    "qt": "qt",
    "oz": "oz",
    "lb": "lb",
    "lbs": "lb",
    "kg": "kg",
    "kgs": "kg",
    "g": "g",
    "mg": "mg",
    "ppm": "ppm",
    "ibu": "ibu",
    "srm": "srm",
    "ebc": "ebc",
    "plato": "plato",
    "brix": "brix",
    "psi": "psi",
    "bar": "bar",
    "kw": "kw",
    "w": "w",
    "v": "v",
    "ms": "ms",
    "s": "s",
    "sec": "s",
    "secs": "s",
    "seconds": "s",
    "second": "s",
    "min": "min",
    "mins": "min",
    "minute": "min",
    "minutes": "min",
    "h": "hr",
    "hr": "hr",
    "hrs": "hr",
    "hour": "hr",
    "hours": "hr",
    "day": "day",
    "days": "day",
    "week": "week",
    "weeks": "week",
    "month": "month",
    "months": "month",
    "year": "year",
    "years": "year",
    "km": "km",
    "m": "m",
    "cm": "cm",
    "mm": "mm",
    "kb": "kb",
    "mb": "mb",
    "gb": "gb",
    "tb": "tb",
    "x": "x",
    "usd": "usd",
    "eur": "eur",
    "gbp": "gbp",
    "$": "usd",
    "€": "eur",
    "£": "gbp",
    "items": "items",
    "rows": "rows",
    "users": "users",
    "requests": "requests",
    "tokens": "tokens",
}


class DedupeAction(StrEnum):
    CREATE = "create"
    SKIP = "skip"
    MERGE = "merge"
    NEW_VERSION = "new_version"


@dataclass(frozen=True)
class DedupePolicy:
    """Thresholds, tuned on all-MiniLM-L6-v2 paraphrase and contradiction pairs (see tests/capture).

    The similarity thresholds are cosines, so they belong to one embedding model: `for_model` gives the
    calibrated set for a model id."""

    simhash_bits: int = 3
    same_subject_similarity: float = 0.86
    related_similarity: float = 0.72
    related_word_overlap: float = 0.4
    identical_similarity: float = 0.97
    neighbours: int = 5

    @property
    def lowest_similarity(self) -> float:
        """Below this a neighbour cannot be about the same subject, so `decide` never needs to see it."""
        return min(self.same_subject_similarity, self.related_similarity)

    @classmethod
    def for_model(cls, model_id: str) -> DedupePolicy:
        """The thresholds calibrated for an embedding model (MiniLM's for models without a calibration)."""
        for prefix, policy in _CALIBRATIONS.items():
            if model_id.startswith(prefix):
                return policy
        return cls()


# The static profile's cosines are compressed (unrelated brewing facts: median 0.85, 99th percentile 0.91),
# so MiniLM's thresholds would merge learnings about different things. Chosen on the junk bench (LoCoMo dev,
# rules path), where MiniLM itself merges 2 learnings: with MiniLM's thresholds the static profile merged 6,
# with these none.
_CALIBRATIONS = {
    "local:minilm-static": DedupePolicy(
        same_subject_similarity=0.965, related_similarity=0.93, related_word_overlap=0.5, identical_similarity=0.995
    ),
}


@dataclass(frozen=True)
class DedupeDecision:
    action: DedupeAction
    reason: str
    target: Learning | None = None
    similarity: float | None = None


def _unit(raw: str | None) -> str:
    if not raw:
        return ""
    unit = re.sub(r"\s+", "", raw.lower())
    if "/" in unit:  # rates: L/hr, ms/request
        left, _, right = unit.partition("/")
        return f"{_UNITS.get(left, left)}/{_UNITS.get(right, right)}"
    return _UNITS.get(unit, "")


@dataclass(frozen=True)
class Numbers:
    """Values (grouped by unit, "" for none) and labels ("Gen 1", "Batch 12", "#7": part of the subject)."""

    values: Mapping[str, frozenset[str]]
    labels: frozenset[str]


# One save compares its text and each neighbour's up to four times (conflict, labels, sameness, specificity).
@functools.lru_cache(maxsize=256)
def numbers(text: str) -> Numbers:
    values: dict[str, set[str]] = defaultdict(set)
    labels: set[str] = set()
    for match in _NUMBER.finditer(text):
        raw = match.group(2)
        value = raw.replace(",", "") if _THOUSANDS.match(raw) else raw.replace(",", ".")
        if "." in value:
            value = value.rstrip("0").rstrip(".")
        prefix = match.group(1)
        unit = _UNITS[prefix] if prefix in ("$", "€", "£") else _unit(match.group(3))
        if not unit and (match.group(1) == "#" or _LABEL_BEFORE.search(text[: match.start()])):
            labels.add(value)
        else:
            values[unit].add(value)
    # Read-only: the result is cached and shared.
    return Numbers(MappingProxyType({u: frozenset(v) for u, v in values.items()}), frozenset(labels))


def values_by_unit(text: str) -> Mapping[str, frozenset[str]]:
    """Numbers in `text` grouped by the unit that follows them ("" for none); labels excluded."""
    return numbers(text).values


def _content_words(text: str) -> set[str]:
    return {t for t in index_terms(text) if not any(c.isdigit() for c in t)}


def word_overlap(a: str, b: str) -> float:
    wa, wb = _content_words(a), _content_words(b)
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / len(wa | wb)


def numbers_conflict(new: str, old: str) -> str | None:
    """Why two statements about the same subject disagree on a value, or None if they do not."""
    a, b = numbers(new).values, numbers(old).values
    for unit in sorted(a.keys() & b.keys() - {""}):
        if a[unit].isdisjoint(b[unit]):
            return f"{'/'.join(sorted(b[unit]))} {unit} became {'/'.join(sorted(a[unit]))} {unit}"
    # Unit-less numbers only count when everything else is the same statement.
    if a.get("") and b.get("") and a[""].isdisjoint(b[""]) and word_overlap(new, old) >= 0.8:
        return f"{'/'.join(sorted(b['']))} became {'/'.join(sorted(a['']))}"
    return None


def _same_numbers(new: str, old: str) -> bool:
    return numbers(new) == numbers(old)


def _different_labels(new: str, old: str) -> bool:
    """ "Batch 12 …" and "Batch 13 …" are about different things, however similar the sentences."""
    a, b = numbers(new).labels, numbers(old).labels
    return bool(a) and bool(b) and a != b


def better_text(new: str, old: str) -> str:
    """The more useful of two paraphrases: more numbers, then more words (within reason), then the old one."""

    def specificity(text: str) -> tuple[int, int]:
        numbers = sum(len(v) for v in values_by_unit(text).values())
        return numbers, min(len(text), 300)

    return new if specificity(new) > specificity(old) else old


def check_simhash(
    text: str, simhash: str, near: Sequence[tuple[Learning, int]], policy: DedupePolicy
) -> DedupeDecision | None:
    """Step 1: near-identical text with the same numbers is already known."""
    for learning, distance in near:
        if distance <= policy.simhash_bits and _same_numbers(text, learning.text):
            return DedupeDecision(
                DedupeAction.SKIP,
                f"identical to #{learning.id} (SimHash distance {distance})",
                target=learning,
            )
    return None


def decide(text: str, neighbours: Sequence[tuple[Learning, float]], policy: DedupePolicy) -> DedupeDecision:
    """Steps 2 and 3, over the owner's live learnings nearest to the candidate, closest first."""
    for learning, similarity in neighbours[: policy.neighbours]:
        same_subject = similarity >= policy.same_subject_similarity or (
            similarity >= policy.related_similarity and word_overlap(text, learning.text) >= policy.related_word_overlap
        )
        if not same_subject or _different_labels(text, learning.text):
            continue
        conflict = numbers_conflict(text, learning.text)
        if conflict is not None:
            return DedupeDecision(
                DedupeAction.NEW_VERSION,
                f"replaces #{learning.id}: same subject (similarity {similarity:.2f}) but {conflict}",
                target=learning,
                similarity=similarity,
            )
        if similarity >= policy.identical_similarity and _same_numbers(text, learning.text):
            return DedupeDecision(
                DedupeAction.SKIP,
                f"already known as #{learning.id} (similarity {similarity:.2f})",
                learning,
                similarity,
            )
        return DedupeDecision(
            DedupeAction.MERGE,
            f"same as #{learning.id} in other words (similarity {similarity:.2f})",
            target=learning,
            similarity=similarity,
        )
    return DedupeDecision(DedupeAction.CREATE, "nothing similar is known")
