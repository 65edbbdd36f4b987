"""`GET /api/events`: live, in order, panels, resumable with Last-Event-ID, writes of other processes,
heartbeats, streams that end when their key is revoked or their user forgotten; and the structured log line
every learning event produces."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from learnloop.embedders.base import Embedder
from learnloop.models import utcnow
from learnloop.server import ServiceOptions
from learnloop.server.keys import parse_key
from learnloop.server.logs import JsonFormatter
from learnloop.server.state import service_store_for
from tests.server.conftest import RunningServer, running_server

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def service(service_on_each_backend: RunningServer) -> RunningServer:
    return service_on_each_backend


TENANT = "events"


class Listener:
    """Reads an event stream in a thread, timestamping each event as it arrives."""

    def __init__(self, service: RunningServer, key: str, seconds: float, **params: Any) -> None:
        self.events: list[tuple[float, dict[str, Any]]] = []
        self.comments: list[str] = []
        self.connected = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(service, key, seconds, params))
        self._thread.start()
        assert self.connected.wait(10), "the stream did not open"

    def _run(self, service: RunningServer, key: str, seconds: float, params: dict[str, Any]) -> None:
        headers = params.pop("headers", {})
        with (
            service.client(key) as c,
            c.stream("GET", "/api/events", params={"max_seconds": seconds, **params}, headers=headers) as response,
        ):
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            lines = response.iter_lines()
            for line in lines:
                if self._stopping.is_set():
                    return
                if line.startswith("retry:"):
                    self.connected.set()
                elif line.startswith("data: "):
                    self.events.append((time.monotonic(), json.loads(line[6:])))
                elif line.startswith(":"):
                    self.comments.append(line)

    def stop(self) -> None:
        """Hang up at the next line (a heartbeat or poll comes within a second or so)."""
        self._stopping.set()
        self._thread.join(timeout=30)

    def join(self) -> list[dict[str, Any]]:
        self._thread.join(timeout=30)
        return [event for _, event in self.events]

    @property
    def ended(self) -> bool:
        """The server closed the stream (the thread finished reading it)."""
        return not self._thread.is_alive()


@pytest.fixture(scope="module")
def key(service: RunningServer) -> str:
    return service.key(TENANT, "admin")


def test_live_events_arrive_at_once_with_their_panels(service: RunningServer, key: str) -> None:
    listener = Listener(service, key, 3.0)
    started = time.monotonic()
    saved = service.save(key, "Jo's kettle holds 35 litres", "equipment", "jo")
    with service.client(key) as c:
        c.put(f"/api/learnings/{saved['learning_id']}", json={"text": "Jo's kettle holds 36 litres"}).raise_for_status()
    events = listener.join()
    created = next(e for e in events if e["action"] == "created")
    arrived = next(t for t, e in listener.events if e["action"] == "created")
    assert arrived - started < 2.0
    assert created["panel"] == "learning" and created["type"] == "thinking"
    assert created["learning_id"] == saved["learning_id"] and "35 litres" in created["summary"]
    edited = next(e for e in events if e["action"] == "edited")
    assert edited["panel"] == "knowledge_update"
    assert edited["before"]["text"] == "Jo's kettle holds 35 litres" and edited["after"]["text"].endswith("36 litres")
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


def test_resume_with_last_event_id(service: RunningServer, key: str) -> None:
    for n in range(3):
        service.save(key, f"Kim's batch {n} finished at 1.01{n} gravity", "recipe", "kim")
    everything = Listener(service, key, 0.5, after=0).join()
    seqs = [e["seq"] for e in everything]
    assert len(seqs) >= 3
    resumed = Listener(service, key, 0.5, headers={"Last-Event-ID": str(seqs[-3])}).join()
    assert [e["seq"] for e in resumed] == seqs[-2:]
    # The header wins over ?after=, as it is what a reconnecting browser sends.
    resumed = Listener(service, key, 0.5, after=0, headers={"Last-Event-ID": str(seqs[-2])}).join()
    assert [e["seq"] for e in resumed] == seqs[-1:]
    tail = Listener(service, key, 0.5, tail=2).join()
    assert [e["seq"] for e in tail] == seqs[-2:]


def test_events_written_by_another_process_arrive(service: RunningServer, key: str) -> None:
    listener = Listener(service, key, 12.0)
    script = (
        "import learnloop\n"
        "loop = learnloop.open(db, tenant='events').sync\n"
        "loop.save(\"Lee's other-process learning: the mill gap is 0.9 mm\", user='lee', category=None)\n"
        "loop.close()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    subprocess.run([sys.executable, "-c", f"db = {str(service.db)!r}\n" + script], check=True, env=env, timeout=60)
    finished = time.monotonic()
    deadline = finished + 5
    while time.monotonic() < deadline and not any("other-process" in e["summary"] for _, e in listener.events):
        time.sleep(0.05)
    arrivals = [t for t, e in listener.events if "other-process" in e["summary"]]
    listener.stop()
    assert arrivals, "an event written by another process never reached the stream"
    assert arrivals[0] - finished < 2.0


def test_heartbeats_when_idle(tmp_path: Path, embedder: Embedder) -> None:
    with running_server(tmp_path / "hb.db", embedder, ServiceOptions(poll_interval=0.1, heartbeat=0.3)) as quiet:
        listener = Listener(quiet, quiet.key("hb", "admin"), 1.2)
        assert listener.join() == []
        assert len(listener.comments) >= 2 and listener.comments[0] == ": heartbeat"


def test_structured_log_line_for_every_event(
    service: RunningServer, key: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="learnloop.events"):
        saved = service.save(key, "Max's yeast starter is 2 litres", "ingredient", "max")
        with service.client(key) as c:
            c.post(f"/api/learnings/{saved['learning_id']}/deprecate", json={"reason": "Max's new starter"})
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and len([r for r in caplog.records if r.name == "learnloop.events"]) < 2:
            time.sleep(0.05)
    records = [
        r for r in caplog.records if r.name == "learnloop.events" and getattr(r, "fields", {}).get("user") == "max"
    ]
    names = [r.getMessage() for r in records]
    assert names[:2] == ["learning_created", "learning_deprecated"]
    line = json.loads(JsonFormatter().format(records[1]))
    assert line["event"] == "learning_deprecated" and line["learning_id"] == saved["learning_id"]
    assert line["status"] == "deprecated" and line["from_status"] == "verified" and line["tenant"] == TENANT
    assert line["panel"] == "knowledge_update" and line["level"] == "info"
    # No learning text and no free-text reason in logs.
    assert "yeast starter" not in json.dumps(line) and "new starter" not in json.dumps(line)


def test_a_revoked_key_ends_its_open_stream(service: RunningServer) -> None:
    # A key of its own: revoking the module's shared key would break the other tests.
    tenant = "events-revoke"
    admin, watcher = service.key(tenant, "admin"), service.key(tenant, "app")
    listener = Listener(service, watcher, 600.0)
    service.save(admin, "Ned's kettle holds 30 litres", "equipment", "ned")
    parsed = parse_key(watcher)
    assert parsed is not None
    # What `learnloop keys revoke` does, from outside the server's key cache.
    assert service.call(service_store_for(service.loop).revoke_key(parsed[0], utcnow()))
    listener.join()  # returns when the server ends the stream (or after 30 s, far short of the 600 asked for)
    assert listener.ended, "the stream outlived its revoked key"
    assert any("revoked" in comment for comment in listener.comments)
    with service.client(watcher) as c:
        assert c.get("/api/events", params={"max_seconds": 1}).status_code == 401  # and cannot reconnect


def test_forgetting_a_user_ends_the_streams_of_their_keys(service: RunningServer) -> None:
    tenant = "events-forget"
    admin, own = service.key(tenant, "admin"), service.key(tenant, "user", "ola")
    ola = Listener(service, own, 600.0)
    others = Listener(service, service.key(tenant, "app"), 600.0)
    service.save(admin, "Ola's mash tun is 40 litres", "equipment", "ola")
    with service.client(admin) as c:
        c.delete("/api/users/ola").raise_for_status()
    ola.join()
    assert ola.ended, "a forgotten user's key kept streaming"
    assert not others.ended  # the tenant's other streams go on
    others.stop()
