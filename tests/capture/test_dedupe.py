"""Dedupe decisions on real texts and real embeddings: paraphrases merge, contradictions supersede."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from learnloop.capture.dedupe import (
    DedupeAction,
    DedupePolicy,
    better_text,
    decide,
    numbers,
    numbers_conflict,
)
from learnloop.embedders.base import Embedder
from learnloop.models import Learning

BOIL = "Grainfather Gen 1 boil-off rate is ~3.5 L/hr, lower than typical 4-5 L/hr"


def learning(text: str, id_: int = 1) -> Learning:
    now = datetime.now(UTC)
    return Learning(id=id_, tenant="t", user="u", text=text, simhash64="0" * 16, created_at=now, updated_at=now)


async def decision_for(embedder: Embedder, new: str, old: str) -> DedupeAction:
    vectors = await embedder.embed([new, old])
    similarity = float(vectors[0] @ vectors[1])
    return decide(new, [(learning(old), similarity)], DedupePolicy()).action


@pytest.mark.parametrize(
    ("new", "old", "expected"),
    [
        (
            "The Grainfather Gen 1 boils off about 3.5 litres per hour, less than the usual 4-5 L/hr",
            BOIL,
            DedupeAction.MERGE,
        ),
        ("US-05 typically attenuates to about 82% here", "US-05 attenuates to ~82% in this system", DedupeAction.MERGE),
        ("Grainfather Gen 1 boil-off rate is ~4 L/hr", BOIL, DedupeAction.NEW_VERSION),
        ("boil-off is 4 L/hr", "boil-off is 3.5 L/hr", DedupeAction.NEW_VERSION),
        ("User prefers mashing at 68 C", "User prefers mashing at 66 C", DedupeAction.NEW_VERSION),
        ("Revenue reports are in EUR", "Revenue reports are in EUR", DedupeAction.SKIP),
        ("Nottingham attenuates to 78% in this system", "US-05 attenuates to ~82% in this system", DedupeAction.CREATE),
        ("User prefers pytest over unittest", "User prefers answers in metric units", DedupeAction.CREATE),
        ("Batch 13 used 20 L of strike water", "Batch 12 used 20 L of strike water", DedupeAction.CREATE),
    ],
)
async def test_decisions_on_real_embeddings(embedder: Embedder, new: str, old: str, expected: DedupeAction) -> None:
    assert await decision_for(embedder, new, old) is expected


def test_numbers_group_values_by_unit_and_keep_labels_apart() -> None:
    found = numbers("Gen 1 kettle: 3.5 L/hr over 60 minutes, 82 percent, $12,345.67, batch #7")
    assert found.values == {"l/hr": {"3.5"}, "min": {"60"}, "%": {"82"}, "usd": {"12345.67"}}
    assert found.labels == {"1", "7"}


def test_conflicts_need_disjoint_values_of_the_same_unit() -> None:
    assert numbers_conflict("boil-off 4 L/hr", "boil-off 3.5 L/hr") == "3.5 l/hr became 4 l/hr"
    assert numbers_conflict("3.5 L/hr, lower than 4-5 L/hr", "3.5 litres per hour, lower than 4-5 L/hr") is None
    assert numbers_conflict("mash for 60 minutes", "mash at 66 C") is None


def test_better_text_prefers_specific_statements() -> None:
    vague = "The kettle boils off less than expected"
    specific = "The kettle boils off 3.5 L/hr, less than the expected 4-5 L/hr"
    assert better_text(specific, vague) == specific
    assert better_text(vague, specific) == specific


def test_decide_explains_itself() -> None:
    decision = decide("boil-off is 4 L/hr", [(learning("boil-off is 3.5 L/hr", 9), 0.96)], DedupePolicy())
    assert decision.action is DedupeAction.NEW_VERSION
    assert "#9" in decision.reason and "3.5 l/hr became 4 l/hr" in decision.reason
    assert decide("x", [], DedupePolicy()).reason == "nothing similar is known"


def test_numbers_are_shared_read_only() -> None:
    text = "boil-off 3.5 L/hr for 60 minutes"
    first = numbers(text)
    assert numbers(text) is first
    with pytest.raises(TypeError):
        first.values["l/hr"] = frozenset()  # type: ignore[index]
