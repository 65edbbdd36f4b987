"""Who is held back: a stable hash of the user, the same in every process and after every restart; pins and the
off switch; and the one gate every memory part of a turn's context passes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import learnloop
from learnloop.errors import ValidationError
from learnloop.holdback.assignment import hashed_arm
from learnloop.stores.holdback import HoldbackSettings

ROOT = Path(__file__).resolve().parents[2]
USERS = [f"user{i:03d}" for i in range(200)]

_CHILD = """
import asyncio, json, sys
import learnloop

async def main():
    loop = learnloop.open(sys.argv[1])
    try:
        print(json.dumps({u: (await loop.holdback.assignment(u)).arm for u in sys.argv[2:]}))
    finally:
        await loop.aclose()

asyncio.run(main())
"""


async def _arms(loop: learnloop.Loop, users: list[str]) -> dict[str, str]:
    return {user: (await loop.holdback.assignment(user)).arm for user in users}


async def test_assignment_is_stable_across_processes_and_restarts(
    open_loop: Callable[..., learnloop.Loop], tmp_path: Path
) -> None:
    loop = open_loop("arms.db")
    await loop.holdback.configure(share=0.3)
    first = await _arms(loop, USERS)
    await loop.aclose()
    held = sum(arm == "holdback" for arm in first.values())
    assert 35 <= held <= 85  # about 30% of 200
    again = open_loop("arms.db")  # a restart: a new engine and store on the same file
    try:
        assert await _arms(again, USERS) == first
    finally:
        await again.aclose()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    child = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", _CHILD, str(tmp_path / "arms.db"), *USERS[:40]],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    assert json.loads(child.stdout) == {user: first[user] for user in USERS[:40]}


def test_the_hash_depends_on_tenant_and_salt_and_not_on_anything_else() -> None:
    settings = HoldbackSettings(share=0.5)
    arms = [hashed_arm("acme", user, settings) for user in USERS]
    assert arms == [hashed_arm("acme", user, HoldbackSettings(share=0.5)) for user in USERS]
    assert arms != [hashed_arm("other", user, settings) for user in USERS]
    assert arms != [hashed_arm("acme", user, HoldbackSettings(share=0.5, salt="round 2")) for user in USERS]
    # A larger share only moves users from memory into holdback: nobody held back at 10% gets memory at 20%.
    small = {u for u in USERS if hashed_arm("acme", u, HoldbackSettings(share=0.1)) == "holdback"}
    large = {u for u in USERS if hashed_arm("acme", u, HoldbackSettings(share=0.2)) == "holdback"}
    assert small < large


async def test_pins_the_off_switch_and_a_namespace_of_its_own(held_loop: learnloop.Loop) -> None:
    loop = held_loop
    assert (await loop.holdback.assignment("alice")).experiment is None  # nothing runs until a tenant opts in
    await loop.holdback.configure(share=0.5)
    memory = next(user for user, arm in (await _arms(loop, USERS)).items() if arm == "memory")
    await loop.holdback.pin(memory, "holdback")
    pinned = await loop.holdback.assignment(memory)
    assert pinned.arm == "holdback" and pinned.pinned and not pinned.shows_memory
    assert await loop.holdback.pins() == {memory: "holdback"}
    await loop.holdback.unpin(memory)
    assert (await loop.holdback.assignment(memory)).arm == "memory"
    # A namespace with settings of its own follows them; the others follow the tenant's.
    await loop.holdback.configure(share=0.5, namespace="support", enabled=False)
    assert (await loop.holdback.assignment(memory, namespace="support")).experiment is None
    assert (await loop.holdback.assignment(memory, namespace="sales")).experiment == "holdback"
    await loop.holdback.switch_off()
    assert all([(await loop.holdback.assignment(u)).shows_memory for u in USERS[:50]])
    assert (await loop.holdback.settings()) == (await loop.holdback.all_settings())[0]
    # Another tenant is untouched by all of it.
    assert (await loop.for_tenant("other").holdback.assignment(memory)).experiment is None


@pytest.mark.parametrize(
    ("options", "field"),
    [({"share": 0}, "share"), ({"share": 1.5}, "share"), ({"share": True}, "share"), ({"mode": "ab"}, "mode")],
)
async def test_bad_settings_are_refused_with_a_named_error(
    held_loop: learnloop.Loop, options: dict[str, object], field: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        await held_loop.holdback.configure(**options)  # type: ignore[arg-type]
    assert caught.value.details.get("field") == field


async def test_a_pin_to_no_arm_is_refused(held_loop: learnloop.Loop) -> None:
    with pytest.raises(ValidationError):
        await held_loop.holdback.pin("alice", "maybe")
    with pytest.raises(ValidationError):
        await held_loop.holdback.report(resamples=5)


async def test_the_holdback_arms_context_holds_no_learnings_and_its_turns_still_teach(
    held_loop: learnloop.Loop,
) -> None:
    loop = held_loop
    await loop.holdback.configure(share=0.5)
    for user in ("alice", "bob"):
        await loop.save(f"{user} ferments at 19 C in a chest freezer", user=user, status="verified")
    await loop.holdback.pin("alice", "holdback")
    await loop.holdback.pin("bob", "memory")
    question = "At what temperature do I ferment?"
    async with loop.turn("alice", question, session="s1") as turn:
        assert turn.context == "" and turn.retrieval is not None and turn.retrieval.items == []
        await turn.finish("Around 20 C.")
    async with loop.turn("bob", question, session="s1") as turn:
        assert "19 C" in turn.context
        await turn.finish("At 19 C.")
    assert (await loop.retrieve_context("alice", question)).block == ""
    assert "19 C" in (await loop.retrieve_context("bob", question)).block
    # Learning goes on for the held-back user: what she says is kept, ready for when memory is switched on.
    async with loop.turn("alice", "I prefer metric units in every answer.", session="s1") as turn:
        await turn.finish("Noted.")
    await loop.turns.drain()
    assert any("metric" in x.text for x in (await loop.list(user="alice")).items)
    [_, first] = await loop.turns.list(user="alice", limit=2)
    assert first.context["holdback"] == {"arm": "holdback", "experiment": "holdback", "pinned": True}
    # The A/A check: the same held-back user gets memory, and the turn says which arm it would have been.
    await loop.holdback.configure(share=0.5, mode="aa")
    async with loop.turn("alice", question, session="s2") as turn:
        assert "19 C" in turn.context
        await turn.finish("At 19 C.")
    assert turn.row.context["holdback"]["experiment"] == "aa"
