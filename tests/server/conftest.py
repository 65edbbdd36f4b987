"""A real uvicorn server on a free loopback port, over a temporary SQLite file and the real local embedder.

One server is shared by the whole session (starting one costs the embedder warm-up); tests keep out of
each other's way by using their own tenants and users. `RunningServer.key(...)` issues keys on demand.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
import uvicorn

import learnloop
from learnloop.config import Settings
from learnloop.embedders.base import Embedder
from learnloop.factory import build_engine
from learnloop.server import ServiceOptions, create_app
from learnloop.server.keys import issue_key
from learnloop.server.state import service_store_for
from learnloop.server.wire import MAX_REQUEST_HEAD_BYTES
from learnloop.stores import open_store
from tests.conftest import _MARKS, BACKENDS, BREWING, _Shared, database_target

T = TypeVar("T")


@dataclass
class RunningServer:
    url: str
    db: Path | str  # a SQLite file, or a database URL
    loop: learnloop.Loop
    server: uvicorn.Server
    thread: threading.Thread
    event_loop: asyncio.AbstractEventLoop
    _keys: dict[tuple[str, str, str | None], str] = field(default_factory=dict)

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the server's own event loop (where its store and bus live)."""
        return asyncio.run_coroutine_threadsafe(coro, self.event_loop).result(timeout=60)

    def key(self, tenant: str, role: str = "admin", user: str | None = None) -> str:
        """A key for (tenant, role, user), issued once and reused."""
        index = (tenant, role, user)
        if index not in self._keys:
            issued = issue_key(tenant, role, user=user, name=f"test {role}")
            self.call(service_store_for(self.loop).create_key(issued.record))
            self._keys[index] = issued.key
        return self._keys[index]

    def client(self, key: str | None = None, **headers: str) -> httpx.Client:
        auth = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=auth | headers, timeout=30)

    def save(self, key: str, text: str, category: str = "equipment", user: str | None = None, **extra: Any) -> Any:
        """Save through the model's tool call, as an app would; `user` None saves a tenant-global learning."""
        owner: dict[str, Any] = {"user": user} if user is not None else {"global": True}
        body = {"arguments": {"learning": text, "category": category, **extra}, **owner}
        with self.client(key) as c:
            response = c.post("/api/tools/save_learning", json=body)
        assert response.status_code == 200, response.text
        return response.json()


def free_port() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@contextlib.contextmanager
def running_server(
    db: Path | str, embedder: Embedder, options: ServiceOptions | None = None
) -> Iterator[RunningServer]:
    """The service on `db`: a SQLite file, or a database URL."""
    store = open_store(str(db), Settings(), embedding_model=embedder.model_id, dimension=embedder.dimension)
    engine = build_engine(store, _Shared(embedder), default_vocabulary=learnloop.Vocabulary.from_mapping(BREWING))  # type: ignore[arg-type]
    loop = learnloop.Loop(engine)
    app = create_app(loop, options=options or ServiceOptions(poll_interval=0.2, heartbeat=1.0))
    sock = free_port()
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=1,
        h11_max_incomplete_event_size=MAX_REQUEST_HEAD_BYTES,  # as `learnloop serve` runs it
    )
    server = uvicorn.Server(config)
    ready: dict[str, asyncio.AbstractEventLoop] = {}

    async def main() -> None:
        ready["loop"] = asyncio.get_running_loop()
        try:
            await server.serve(sockets=[sock])
        finally:
            await loop.aclose()

    thread = threading.Thread(target=asyncio.run, args=(main(),), name="test-uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    port = sock.getsockname()[1]
    running = RunningServer(
        url=f"http://127.0.0.1:{port}", db=db, loop=loop, server=server, thread=thread, event_loop=ready["loop"]
    )
    try:
        yield running
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


@pytest.fixture(scope="session")
def service(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("server") / "service.db", embedder) as running:
        yield running


@pytest.fixture(scope="module", params=[pytest.param(name, marks=_MARKS.get(name, [])) for name in BACKENDS])
def service_on_each_backend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, embedder: Embedder
) -> Iterator[RunningServer]:
    """A service per backend, for a module whose tests hold whatever the database (it overrides `service`)."""
    backend = str(request.param)
    with running_server(database_target(backend, tmp_path_factory.mktemp("server"), "service.db"), embedder) as running:
        yield running
    if backend == "postgres":
        from tests.support.postgres import drop_databases

        drop_databases()


def file_contains(path: Path, needle: bytes) -> bool:
    """Whether the raw bytes of `path` contain `needle`, read in another process: closing any descriptor of
    a SQLite file in this process would drop the locks the server's connection holds on it."""
    code = "import sys; print(int(sys.argv[2].encode() in open(sys.argv[1], 'rb').read()))"
    result = subprocess.run(
        [sys.executable, "-c", code, str(path), needle.decode()], capture_output=True, text=True, check=True
    )
    return result.stdout.strip() == "1"


def error_of(response: httpx.Response) -> dict[str, Any]:
    """The `error` object every non-2xx answer carries."""
    body = response.json()
    assert set(body) == {"error"}, body
    assert {"code", "message"} <= set(body["error"]), body
    return dict(body["error"])
