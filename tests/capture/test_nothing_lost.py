"""Property: whatever sequence of related learnings is saved, nothing is silently lost. Every text ever saved
is live, or deprecated naming its successor and why, or contained in a live learning's text, or kept among
the sources of the live learning that already knew it."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from learnloop import Loop
from tests.support.nothing_lost import assert_nothing_lost, statement


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(statement, min_size=2, max_size=10))
# Found by this property: the partner's fact was skipped as the user's ("already known"), and both then replaced.
@example([("The user has 4 kids.", []), ("The user's partner has 4 kids.", []), ("The user has 3.5 kids.", [])])
# Found by this property: "Kettle A has 4 kids" was merged into "The user has 4 kids" as detail (a name before a
# shared value was not read as whose value it is).
@example([("The user has 4 kids.", []), ("Kettle A has 4 kids.", []), ("Kettle A has 3.5 kids.", [])])
# Found by this property: "uses CircleCI" was merged into "switched from CircleCI to Jenkins" as detail, and the
# merged text was then replaced by "no longer uses Jenkins".
@example(
    [
        ("The user's partner switched from CircleCI to Jenkins for CI.", []),
        ("The user's partner uses CircleCI for CI.", []),
        ("The user's partner no longer uses Jenkins for CI.", []),
    ]
)
def test_every_text_saved_is_live_superseded_or_contained(
    open_loop: Callable[..., Loop], tmp_path: Path, sequence: list[tuple[str, list[str]]]
) -> None:
    async def run() -> None:
        # A database of its own per example: a file named after the texts was reused when hypothesis replayed an
        # example (or met the same texts with other tags), and what the last run left made verdicts flaky.
        loop = open_loop(f"prop-{uuid.uuid4().hex}.db")
        user = "prop"
        try:
            saved = [await loop.save(text, user=user, tags=tags) for text, tags in sequence]
            assert all(result.action != "refused" for result in saved)
            await assert_nothing_lost(loop, user, [text for text, _ in sequence], f": {[r.reason for r in saved]}")
        finally:
            await loop.aclose()

    asyncio.run(run())
