"""What the adapter tests share: the shop run the examples make, scripted; seeding and reading the example's
database the way an app would (`learnloop.open`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import learnloop
from learnloop.stores.conversations import ConversationTurn
from tests.support.scripted_openai import Reply, ScriptedOpenAI

ROOT = Path(__file__).resolve().parents[2]
LEARNED = "Revenue figures are quoted in EUR before any conversion."
MESSAGE = "What was the revenue last month, in dollars?"
ANSWER = "Last month's revenue was 13392.00 USD."
TO_USD = {"amount": 12400, "currency": "USD"}


def script_shop_run(server: ScriptedOpenAI) -> None:
    """revenue, convert (fails: the example's tool fails on its first call), convert again, the answer."""
    server.reply(
        Reply.tool_call("revenue", {"period": "last_month"}),
        Reply.tool_call("convert", TO_USD),
        Reply.tool_call("convert", TO_USD),
        Reply.text(ANSWER),
    )


async def seed(db: Path) -> None:
    async with learnloop.open(str(db)) as loop:
        await loop.save(LEARNED, user="alice", status="verified")


def run_example(name: str, db: Path, server: ScriptedOpenAI) -> subprocess.CompletedProcess[str]:
    """The example as a user runs it: its own process, its model the scripted server, nothing else reachable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LEARNLOOP_", "OPENAI_"))}
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name), "--db", str(db), "--base-url", server.base_url, MESSAGE],
        cwd=db.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
    return done


async def the_one_turn(db: Path) -> tuple[ConversationTurn, list[tuple[str, bool]]]:
    """The example's turn as another process sees it after draining, and what the tool layer learned of it."""
    async with learnloop.open(str(db)) as loop:
        await loop.turns.drain()
        [turn] = await loop.turns.list(user="alice")
        signals = await loop.tools.signals(user="alice", session=turn.session, kind="call")
        return turn, [(s.tool, s.ok) for s in signals]


def system_text(request: dict[str, Any]) -> str:
    messages = request["messages"]
    return "\n".join(str(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
