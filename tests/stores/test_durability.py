"""Anything acknowledged survives kill -9: a writer process is killed mid-stream, every acked id remains."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

WRITER = textwrap.dedent(
    """
    import sys
    import numpy as np
    from learnloop.stores.sqlite import SQLiteStore
    from learnloop.stores.base import Insert, NewLearning, EventDraft
    from learnloop.models import EventAction, Scope
    from learnloop.simhash import simhash64_hex
    from learnloop.sync import run_sync

    store = SQLiteStore(sys.argv[1], embedding_model="test:model", dimension=8)
    scope = Scope(tenant="t", user="u")
    vector = np.ones(8, dtype=np.float32) / np.sqrt(8)
    n = 0
    while True:
        text = f"learning number {n}"
        op = Insert(
            NewLearning(tenant="t", user="u", text=text, vector=vector, embedding_model="test:model",
                        simhash64=simhash64_hex(text), namespace="learning"),
            EventDraft(actor="person", action=EventAction.CREATED),
        )
        result = run_sync(store.apply(scope, [op]))
        print(result.learnings[0].id, flush=True)  # the acknowledgement
        n += 1
    """
)


def test_every_acknowledged_write_survives_kill_9(tmp_path: Path) -> None:
    db = tmp_path / "durable.db"
    process = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db)], stdout=subprocess.PIPE, text=True, env=os.environ.copy()
    )
    acked: list[int] = []
    assert process.stdout is not None
    deadline = time.monotonic() + 60
    while len(acked) < 300 and time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        acked.append(int(line))
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert len(acked) >= 300
    conn = sqlite3.connect(db)
    stored = {row[0] for row in conn.execute("SELECT id FROM learnings")}
    events = {row[0] for row in conn.execute("SELECT learning_id FROM events")}
    indexed = {row[0] for row in conn.execute("SELECT rowid FROM learnings_fts WHERE learnings_fts MATCH 'number'")}
    conn.close()
    assert set(acked) <= stored
    assert set(acked) <= events and set(acked) <= indexed
    assert stored == events == indexed  # row, index entry and event commit together or not at all
