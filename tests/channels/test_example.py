"""The channels example runs as a user runs it: its own process, the service and a Telegram stand-in on loopback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_two_channel_example_recalls_on_telegram_what_the_web_chat_taught(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LEARNLOOP_", "OPENAI_"))}
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "channels_two_channels.py"), "--db", str(tmp_path / "channels.db")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
    lines = done.stdout.splitlines()
    assert lines[1].startswith("telegram >") and "nothing yet" in lines[1]  # not linked: a stranger
    assert "Linked" in lines[3] and "vegetarian" in lines[-1]
