"""Shared by the `learnloop mcp` tests: the server as a real subprocess (stdio or HTTP on a free loopback port),
and MCP clients for it. No tests here."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

import learnloop

KEY = "test-shared-secret-4f1c"
USER = "alice"
TENANT = "acme"
CATEGORIES = ["preference", "fact", "procedure", "correction"]  # learnloop's default vocabulary
# The learnloop MCP server's tools, in the order it lists them.
TOOLS = [
    "save_learning",
    "recall",
    "list_learnings",
    "deprecate_learning",
    "confirm_learning",
    "begin_turn",
    "finish_turn",
]
BOIL = "Alice's Grainfather kettle boils off 3.5 L/hr, lower than the usual 4-5 L/hr"
CANDIDATE = "Alice mashes at 66 C for a drier finish in her pale ales"
SECRET = "The deploy key is AKIAQ7ZKX4J2M5RTWB6N, use it for prod"


def server_args(db: Path, *extra: str) -> list[str]:
    return ["-m", "learnloop", "--db", str(db), "mcp", "--tenant", TENANT, "--user", USER, *extra]


def stdio_client(db: Path, *, mode: str = "auto") -> Client:
    """A new client is a new server process: nothing survives between two of them but the database file."""
    params = StdioServerParameters(command=sys.executable, args=server_args(db), env={"PYTHONUNBUFFERED": "1"})
    return Client(params, mode=mode)


@asynccontextmanager
async def http_client(
    url: str, key: str = KEY, *, mode: str = "auto", user: str | None = None
) -> AsyncIterator[Client]:
    """A new client is a new MCP session on the running server; `user` is sent as X-Learnloop-User."""
    headers = {"Authorization": f"Bearer {key}"} | ({"X-Learnloop-User": user} if user else {})
    http = create_mcp_http_client(headers=headers)
    async with http, Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        yield client


async def seed_candidate(db: Path) -> int:
    """A candidate learning written through the SDK, so that confirm_learning has something to promote (the
    save_learning tool stores verified learnings)."""
    async with learnloop.open(str(db), tenant=TENANT) as loop:
        saved = await loop.save(CANDIDATE, user=USER, category="procedure", status="candidate")
        assert saved.learning is not None
        return saved.learning.id


def text(result: types.CallToolResult | types.GetPromptResult) -> str:
    if isinstance(result, types.GetPromptResult):
        return "\n".join(m.content.text for m in result.messages if isinstance(m.content, types.TextContent))
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def structured(result: types.CallToolResult) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict), result
    return result.structured_content


@dataclass
class HttpServer:
    url: str
    process: subprocess.Popen[str]
    log: list[str] = field(default_factory=list)


@contextmanager
def http_server(db: Path, *extra: str) -> Iterator[HttpServer]:
    """`learnloop mcp --transport http --port 0` in a subprocess; ready once it prints the URL it serves on."""
    command = [sys.executable, *server_args(db, "--transport", "http", "--port", "0", "--key", KEY, *extra)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    log: list[str] = []
    url = None
    for line in process.stderr:
        log.append(line)
        if "serving on " in line:
            url = line.split("serving on ", 1)[1].strip()
            break
    if url is None:
        process.wait()
        raise AssertionError(f"the MCP server exited with {process.returncode}:\n{''.join(log)}")
    # Keep draining stderr so a chatty server never blocks on a full pipe; the lines help when a test fails.
    threading.Thread(target=lambda: log.extend(process.stderr or ()), daemon=True).start()
    try:
        yield HttpServer(url=url, process=process, log=log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
