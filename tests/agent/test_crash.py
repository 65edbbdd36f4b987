"""Kill the worker process in the middle of a package (SIGKILL) and restart it: the package is processed,
and each of its effects exists once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.agent.support import LearningScript, build_loop, calls
from tests.conftest import database_target
from tests.support.scripted_openai import Reply, ScriptedOpenAI

ROOT = Path(__file__).resolve().parents[2]
ROUTING = "# Routing rules\n"
METRIC = "- Answer in metric units.\n"
PUMPS = "- Pump questions: read extended/pumps.md\n"


def _worker(db: Path | str, server: ScriptedOpenAI, *extra: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "tests.agent.worker_process", "--db", str(db), "--base-url", server.base_url]
    return subprocess.Popen([*command, *extra], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(condition, what: str, seconds: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.02)


@pytest.mark.slow
async def test_a_killed_worker_is_replaced_and_the_package_takes_effect_once(
    backend: str, tmp_path: Path, scripted_openai: ScriptedOpenAI
) -> None:
    script = LearningScript(
        [
            # Round 0: create the routing file, then an edit that would duplicate its line if applied twice.
            calls(
                ("write_file", {"path": "routing_rules.md", "content": ROUTING}),
                ("edit_file", {"path": "routing_rules.md", "old_text": ROUTING, "new_text": ROUTING + METRIC}),
            ),
            # Round 1 is held back the first time: the worker is killed while it waits for this reply.
            calls(
                ("edit_file", {"path": "routing_rules.md", "old_text": ROUTING, "new_text": ROUTING + PUMPS}),
                ("write_file", {"path": "extended/pumps.md", "content": "# Pumps\n- Schedule on M-101.\n"}),
            ),
            Reply.text("Routing updated."),
        ],
        hold={1: 60.0},
    )
    scripted_openai.chat.respond(script)
    db = database_target(backend, tmp_path, "crash.db")
    app = build_loop(db, scripted_openai.settings(), run_workers=False)
    try:
        await app.agent.open_session("s1", user="alice")
        receipt = await app.submit_interaction("s1", "Use metric units, and where is the pump schedule?", user="alice")

        first = _worker(db, scripted_openai)
        try:
            _wait_for(lambda: 1 in script.asked or first.poll() is not None, "the held-back model call")
            assert first.poll() is None, first.communicate()
            os.kill(first.pid, signal.SIGKILL)
        finally:
            first.kill()
            first.wait(timeout=30)  # reaped: the pid is gone, so the next worker takes the claim over at once
        assert first.returncode == -signal.SIGKILL
        killed_at = await app.agent.read_file("routing_rules.md", user="alice")
        assert killed_at.content == ROUTING + METRIC
        assert (await app.agent.queue("s1")).claimed == 1

        second = _worker(db, scripted_openai, "--until-idle")
        out, err = second.communicate(timeout=120)
        assert second.returncode == 0, err
        assert '"done":1' in out

        routing = await app.agent.read_file("routing_rules.md", user="alice")
        assert routing.content == ROUTING + PUMPS + METRIC  # every edit exactly once
        assert (await app.agent.read_file("extended/pumps.md", user="alice")).content.startswith("# Pumps")
        events = await app.events(limit=1000)
        written = [(e.data["step"], e.data["path"]) for e in events if e.action == "experience_written"]
        assert written == [
            (0, "routing_rules.md"),
            (1, "routing_rules.md"),
            (2, "routing_rules.md"),
            (3, "extended/pumps.md"),
        ]
        done = [e for e in events if e.action == "learning_done"]
        assert len(done) == 1 and done[0].data["package"] == receipt.package_id
        assert done[0].data["attempts"] == 2 and done[0].data["steps"] == 4
        assert script.asked.count(0) == 1  # round 0 was resumed from the stored conversation, not asked again
        assert sorted(await app.agent.runtime.store.steps("acme", receipt.package_id)) == [0, 1, 2, 3]
    finally:
        await app.aclose()
