"""Issue 17 on the command line: stored control characters are shown escaped, and `serve` on a busy port exits
before it creates the first admin key (which was then lost: the next run prints none because one exists)."""

from __future__ import annotations

import json
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import learnloop
from tests.test_cli import learnloop as run_cli

HOSTILE = "Kettle \x1b[2J\x1b]8;;http://evil.example\x07holds\x9b31m 30 L\rOK"


def _stored_with_controls(db: Path) -> int:
    """A learning whose text holds escape sequences, as a file written before text was checked would have."""
    with learnloop.open(str(db)).sync as loop:
        saved = loop.save("Kettle holds 30 L", user="alice", category="fact")
        assert saved.learning is not None
        learning_id = saved.learning.id
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE learnings SET text = ? WHERE id = ?", (HOSTILE, learning_id))
    return learning_id


def test_list_and_show_escape_control_characters(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    learning_id = _stored_with_controls(db)
    for output in (
        run_cli(db, "learnings", "list").stdout,
        run_cli(db, "learnings", "show", str(learning_id)).stdout,
    ):
        assert "\x1b" not in output and "\x9b" not in output and "\r" not in output and "\x07" not in output
        assert "\\x1b[2J" in output and "\\x9b31m" in output and "\\x0dOK" in output
    as_json = run_cli(db, "--json", "learnings", "list").stdout
    assert "\x9b" not in as_json and "\x1b" not in as_json
    assert json.loads(as_json.splitlines()[0])["text"] == HOSTILE  # the same data, escaped as JSON


def test_serve_on_a_busy_port_creates_no_key(tmp_path: Path) -> None:
    db = tmp_path / "busy.db"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        failed = run_cli(db, "serve", "--port", str(port), check=False)
    assert failed.returncode != 0
    assert f"cannot listen on 127.0.0.1:{port}" in failed.stderr and "--port" in failed.stderr
    assert "ll_" not in failed.stdout
    assert "no keys yet" in run_cli(db, "keys", "list").stdout
    # The next run on a free port creates the first key and shows it.
    process = subprocess.Popen(
        [sys.executable, "-m", "learnloop", "--db", str(db), "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        lines = []
        for line in process.stdout:
            lines.append(line)
            if line.strip().startswith("ll_"):
                break
        assert any("First run: created an admin API key" in line for line in lines), lines
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_import_streams_reports_bad_lines_and_resumes(tmp_path: Path) -> None:
    dump = tmp_path / "dump.jsonl"
    rows = [json.dumps({"text": f"Brew {i} fermented at {18 + i % 4} C", "user": "ann"}) for i in range(150)]
    rows.insert(99, '{"text": "Kettle \\u0000 holds 30 L", "user": "ann"}')
    dump.write_text("\n".join(rows) + "\n")
    db = tmp_path / "cli-import.db"
    done = run_cli(db, "import", str(dump), check=False)
    assert done.returncode == 1
    assert "imported 150 of 151" in done.stdout and "1 rejected" in done.stdout
    assert "line 100: " in done.stderr and "NUL" in done.stderr and "importing" in done.stderr
    resumed = run_cli(db, "--json", "import", str(dump), "--from-line", "120")
    report = json.loads(resumed.stdout)
    assert (report["imported"], report["skipped_existing"], report["read"]) == (0, 32, 32)
