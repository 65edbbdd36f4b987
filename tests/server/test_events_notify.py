"""On PostgreSQL an event stream wakes when another process commits (LISTEN/NOTIFY), not at its next poll: the
service here polls once an hour, so only the notification can bring another process's events to the stream."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from learnloop.embedders.base import Embedder
from learnloop.server import ServiceOptions
from learnloop.stores.postgres import PostgresStore
from tests.conftest import database_target
from tests.server.conftest import running_server

pytestmark = [pytest.mark.server, pytest.mark.postgres]

TENANT = "notify"

# Saves one learning per line read from stdin (its text), printing "saved" after each commit.
_WRITER = """
import sys
import learnloop
loop = learnloop.open(sys.argv[1], tenant="notify").sync
for line in sys.stdin:
    loop.save(line.strip(), user="lee", category=None)
    print("saved", flush=True)
loop.close()
"""


def test_another_process_commit_wakes_a_stream_that_never_polls(tmp_path: Path, embedder: Embedder) -> None:
    url = database_target("postgres", tmp_path)
    quiet = ServiceOptions(poll_interval=3600, heartbeat=3600)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    texts = [
        "Lee's first note from afar: the mill gap is 0.9 mm",
        "Lee's second note from afar: mash at 66 C for an hour",
        "Lee's third note from afar: ferment the saison at 24 C",
    ]
    with running_server(url, embedder, quiet) as service:
        key = service.key(TENANT, "admin")
        writer = subprocess.Popen(
            [sys.executable, "-c", _WRITER, url], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        assert writer.stdin is not None and writer.stdout is not None
        seen: list[str] = []
        try:
            # The read timeout bounds a stream that is never woken: it fails the test instead of hanging.
            with (
                service.client(key) as client,
                client.stream("GET", "/api/events", params={"max_seconds": 120}, timeout=60) as response,
            ):
                assert response.status_code == 200
                lines = response.iter_lines()
                assert next(lines).startswith("retry:")
                store = service.loop.engine.store
                assert isinstance(store, PostgresStore)
                listener = store.watch_events(service.loop.engine.bus.ring)  # the one the stream started
                assert listener.wait_listening(30)
                for text in texts:
                    writer.stdin.write(text + "\n")
                    writer.stdin.flush()
                    assert writer.stdout.readline().strip() == "saved"
                    for line in lines:
                        if line.startswith("data: "):
                            seen.append(json.loads(line[6:])["summary"])
                            if text[:18] in seen[-1]:
                                break
        finally:
            writer.stdin.close()
            writer.wait(timeout=60)
    assert [summary for summary in seen if "note from afar" in summary] == [
        next(summary for summary in seen if text[:18] in summary) for text in texts
    ]
