"""Issue 17: every malformed JSON-RPC message gets the error the specification names (-32700 / -32600), a request
with invalid text an error reply (-32602), never silence; and the server keeps answering afterwards. Over stdio
(the server as a real subprocess, raw lines on its stdin) and over streamable HTTP."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from learnloop.mcp.screening import screen

from .test_server_harness import KEY, http_server, server_args

pytestmark = [pytest.mark.slow]

SURROGATE_CALL = (
    '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"save_learning",'
    '"arguments":{"learning":"Alice kettle \\ud800 hops","category":"fact"}}}'
)
# (line, expected code, expected id)
MALFORMED: list[tuple[bytes, int, Any]] = [
    (b"this is not json", -32700, None),
    (b"[1,2,3]", -32600, None),
    (b'{"jsonrpc":"1.0","id":5,"method":"ping"}', -32600, 5),
    (b'{"jsonrpc":"2.0","id":6}', -32600, 6),
    (b'\xff\xfe{"jsonrpc":"2.0","id":7,"method":"ping"}', -32700, None),
    (b"[" * 50_000 + b"]" * 50_000, -32700, None),
    (b'{"jsonrpc":"2.0","id":8,"method":"ping","params":{"n":NaN}}', -32700, None),
    (SURROGATE_CALL.encode(), -32602, 9),
    (
        b'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"recall","arguments":{"query":"a\\u0000b"}}}',
        -32602,
        10,
    ),
]


def test_screen_verdicts() -> None:
    for line, code, request_id in MALFORMED:
        verdict = screen(line)
        assert verdict.error is not None and verdict.text is None, line[:60]
        assert verdict.error["error"]["code"] == code and verdict.error["id"] == request_id, (line[:60], verdict)
    good = screen('{"jsonrpc":"2.0","id":1,"method":"ping"}')
    assert good.error is None and good.text is not None
    # A bad notification or response is dropped: nothing may answer it.
    dropped = screen('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"a\\ud800"}}')
    assert dropped.error is None and dropped.text is None
    rtl = screen('{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":{"note":"\\u05e9\\u200d\\u05dc"}}}')
    assert rtl.text is not None


class _Lines:
    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self._queue: queue.Queue[bytes] = queue.Queue()
        assert process.stdout is not None
        stdout = process.stdout
        threading.Thread(target=lambda: [self._queue.put(line) for line in stdout], daemon=True).start()

    def next(self) -> dict[str, Any]:
        return dict(json.loads(self._queue.get(timeout=30)))


@pytest.fixture
def stdio(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], _Lines]]:
    process = subprocess.Popen(
        [sys.executable, *server_args(tmp_path / "m.db")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield process, _Lines(process)
    finally:
        process.kill()
        process.wait()


def _send(process: subprocess.Popen[bytes], line: bytes) -> None:
    assert process.stdin is not None
    process.stdin.write(line + b"\n")
    process.stdin.flush()


def test_stdio_answers_every_malformed_message(stdio: tuple[subprocess.Popen[bytes], _Lines]) -> None:
    process, lines = stdio
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    _send(process, json.dumps(initialize).encode())
    assert lines.next()["id"] == 1
    _send(process, b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    for line, code, request_id in MALFORMED:
        _send(process, line)
        reply = lines.next()
        assert reply.get("error", {}).get("code") == code and reply["id"] == request_id, (line[:60], reply)
    _send(process, b'{"jsonrpc":"2.0","id":11,"method":"tools/list"}')
    listed = lines.next()
    assert listed["id"] == 11 and "save_learning" in {t["name"] for t in listed["result"]["tools"]}


def test_http_answers_every_malformed_message(tmp_path: Path) -> None:
    headers = {
        "Authorization": f"Bearer {KEY}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    with http_server(tmp_path / "h.db") as server, httpx.Client(headers=headers, timeout=30) as client:
        for line, code, request_id in MALFORMED:
            response = client.post(server.url, content=line)
            assert response.status_code == 400, (line[:60], response.text)
            reply = response.json()
            assert reply["error"]["code"] == code and reply["id"] == request_id, (line[:60], reply)
        alive = client.post(
            server.url,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            },
        )
        assert alive.status_code == 200, alive.text
