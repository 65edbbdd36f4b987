"""A finish that was acknowledged survives kill -9 before its work ran: the next process does the work, once."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import learnloop
from learnloop.turns import TurnConfig
from tests.tools.conftest import CATALOG

CHILD = textwrap.dedent(
    """
    import asyncio, os, signal, sys
    import learnloop
    from learnloop.turns import TurnConfig

    CATALOG = %r

    async def main():
        loop = learnloop.open(sys.argv[1])
        await loop.tools.register(CATALOG)
        loop.agent.configure(run_workers=False)
        loop.turns.configure(TurnConfig(agent=True))
        async with loop.turn("alice", "I prefer metric units in every answer.", session="s1") as turn:
            await turn.tool_call("shop_analytics", {"resource": "products"}, ms=12)
            await turn.tool_call("send_email", {"to": "team"}, error="SMTP timeout")
            await turn.finish("Here are the top products.")
        print(turn.id, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)  # before the work the finish queued could run

    asyncio.run(main())
    """
) % (CATALOG,)


def test_work_queued_by_a_killed_process_runs_once_in_the_next(tmp_path: Path) -> None:
    db = tmp_path / "turns.db"
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(db)], capture_output=True, text=True, env=os.environ.copy(), timeout=300
    )
    assert child.returncode == -9, child.stderr
    turn_id = child.stdout.strip()

    async def resume() -> None:
        loop = learnloop.open(str(db))
        loop.agent.configure(run_workers=False)
        loop.turns.configure(TurnConfig(agent=True))
        try:
            before = await loop.turns.get(turn_id)
            assert before.status == "finished" and before.steps == {}
            assert (await loop.turns.housekeeping()).processed == 1
            assert (await loop.turns.housekeeping()).processed == 0
            after = await loop.turns.get(turn_id)
            assert after.status == "done" and set(after.steps) == {"profile", "signals", "observe", "agent", "log"}
            calls = await loop.tools.signals(session="s1", kind="call")
            assert [(c.tool, c.ok) for c in calls] == [("shop_analytics", True), ("send_email", False)]
            assert (await loop.agent.queue("s1", user="alice")).pending == 1
            [learned] = (await loop.list(user="alice")).items  # what the turn taught, kept once
            assert "metric units" in learned.text and after.steps["observe"]["saved"] == [learned.id]
        finally:
            await loop.aclose()

    asyncio.run(resume())


def test_the_sync_twin(tmp_path: Path) -> None:
    with learnloop.open(str(tmp_path / "sync.db")).sync as loop:
        loop.tools.register(CATALOG)
        with loop.turn("alice", "top products this month", session="s1") as turn:
            assert turn.status == "open"
            assert turn.tool_call("shop_analytics", {"resource": "products"}) == 1
            turn.finish("Here.")
        loop.turns.drain()
        assert loop.turns.get(turn.id).status == "done"
