"""The processes of bench/load.py: the scripted model server (in this process), `learnloop serve
--no-agent-workers` API processes, `learnloop agent-worker` processes, and SSE clients that record the sequence
numbers they receive."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the scripted model server of the test suite

from tests.agent.support import LearningScript, calls
from tests.support.scripted_openai import Reply, ScriptedOpenAI

ROOT = Path(__file__).resolve().parent.parent

TENANT = "load"
SCRIPTED_EMBEDDER = "openai:scripted-embed?dimension=64"


class Processes:
    """Everything started for one run, stopped on exit (workers first: they write to the database)."""

    def __init__(self, url: str, embedder: str, *, quiet: bool) -> None:
        self.url = url
        self.quiet = quiet
        self.model = ScriptedOpenAI().start()
        write = calls(("write_file", {"path": "notes.md", "content": "# Notes\n- seen\n"}))
        self.model.chat.respond(LearningScript([write, Reply.text("Nothing else to learn.")]))
        self.settings = self.model.settings()
        self.embedder = SCRIPTED_EMBEDDER if embedder == "scripted" else embedder
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("LEARNLOOP_")}
        self.env |= {
            "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}",
            "OPENAI_BASE_URL": self.model.base_url,
            "OPENAI_API_KEY": "sk-scripted-test",
            "LEARNLOOP_EMBEDDER": self.embedder,
        }
        self.api: list[subprocess.Popen[str]] = []
        self.workers: list[subprocess.Popen[str]] = []

    def __enter__(self) -> Processes:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        for process in self.workers + self.api:  # SIGTERM: workers give claimed packages back, then close
            process.terminate()
        for process in self.workers + self.api:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
        self.model.stop()

    def start(self, *, api: int, workers: int) -> list[str]:
        """Start the processes; the API processes' base URLs."""
        urls = [self._serve() for _ in range(api)]
        for _ in range(workers):
            command = [sys.executable, "-m", "learnloop", "--db", self.url, "--tenant", TENANT, "agent-worker"]
            env = self.env | {"LEARNLOOP_LLM": "openai:scripted-model"}
            process = subprocess.Popen([*command, "--poll", "0.1"], env=env, stdout=subprocess.PIPE, text=True)
            self.workers.append(process)
            assert process.stdout is not None
            if "ready" not in process.stdout.readline():
                raise RuntimeError("a learning-agent worker did not start")
        return urls

    def _serve(self) -> str:
        command = [sys.executable, "-m", "learnloop", "--db", self.url, "--tenant", TENANT, "serve"]
        command += ["--port", "0", "--no-first-key", "--no-agent-workers", "--log-level", "warning"]
        process = subprocess.Popen(command, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.api.append(process)
        assert process.stdout is not None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            found = re.search(r"at (http://\S+)", line)
            if found:
                threading.Thread(target=process.stdout.read, daemon=True).start()  # a full pipe would stall it
                return found.group(1).replace("localhost", "127.0.0.1")
            if not line and process.poll() is not None:
                break
        raise RuntimeError("learnloop serve did not start")

    def wait_queue_done(self, count: int, *, within: float) -> None:
        """Until `count` packages of the tenant are done (or `within` seconds passed: the checks then fail)."""
        deadline = time.monotonic() + within
        with psycopg.connect(self.url, autocommit=True) as conn:
            while time.monotonic() < deadline:
                row = conn.execute(
                    "SELECT COUNT(*) FILTER (WHERE status = 'done'), COUNT(*) FILTER (WHERE status IN "
                    "('pending', 'claimed')) FROM agent_queue WHERE tenant = %s",
                    (TENANT,),
                ).fetchone()
                if row is not None and row[0] >= count and row[1] == 0:
                    return
                time.sleep(0.1)


class SseClient:
    """Follows GET /api/events from `after` in a thread, keeping the `id:` of every event received."""

    def __init__(self, base: str, key: str, after: int) -> None:
        self.seqs: list[int] = []
        self._opened = threading.Event()
        self._progress = threading.Condition()
        self._stop = threading.Event()
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(base, key, after), daemon=True)
        self._thread.start()

    def _run(self, base: str, key: str, after: int) -> None:
        headers = {"Authorization": f"Bearer {key}"}
        params: dict[str, Any] = {"after": after, "max_seconds": 3600}
        try:
            with (
                httpx.Client(base_url=base, headers=headers, timeout=None) as client,
                client.stream("GET", "/api/events", params=params) as response,
            ):
                response.raise_for_status()
                for line in response.iter_lines():
                    if self._stop.is_set():
                        return
                    if line.startswith("retry:"):
                        self._opened.set()
                    elif line.startswith("id: "):
                        with self._progress:
                            self.seqs.append(int(line[4:]))
                            self._progress.notify_all()
        except BaseException as exc:  # reported by wait_open / the checks
            self.error = exc
            self._opened.set()

    def wait_open(self) -> None:
        if not self._opened.wait(60) or self.error is not None:
            raise RuntimeError(f"an event stream did not open: {self.error!r}")

    def wait_for(self, seq: int, *, within: float) -> None:
        """Until the event `seq` arrived (or `within` seconds passed: the checks then fail)."""
        deadline = time.monotonic() + within
        with self._progress:
            while not (self.seqs and self.seqs[-1] >= seq) and time.monotonic() < deadline:
                self._progress.wait(0.5)

    def close(self) -> None:
        self._stop.set()  # the thread ends at its next line; the API processes end soon after anyway
