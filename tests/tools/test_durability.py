"""Kill -9 during a stream of signals: every signal acknowledged before the kill is in the file after it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import learnloop

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_every_acknowledged_signal_survives_kill_9(tmp_path: Path) -> None:
    db = tmp_path / "signals.db"
    writer = subprocess.Popen(
        [sys.executable, "-m", "tests.tools.signal_writer", str(db)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    acknowledged: list[int] = []
    try:
        assert writer.stdout is not None
        for line in writer.stdout:
            acknowledged.append(int(line.split()[1]))
            if len(acknowledged) >= 150:
                break
        os.kill(writer.pid, signal.SIGKILL)  # while it keeps writing
    finally:
        writer.kill()
        _, errors = writer.communicate(timeout=30)
    assert len(acknowledged) >= 150, errors
    assert writer.returncode == -signal.SIGKILL

    with learnloop.open(str(db)).sync as loop:
        calls = {s.id for s in loop.tools.signals(kind="call", limit=100_000)}
        assert set(acknowledged) <= calls
        pairs = loop.tools.learned_pairs(tool="get_forecast", limit=100_000)
        assert sum(p.uses for p in pairs) >= len(acknowledged)  # the learning committed with each signal
        routed = loop.tools.route("is rain expected in city number 7?", 1, user="u1")
        assert routed[0].name == "get_forecast" and routed[0].learned > 0
