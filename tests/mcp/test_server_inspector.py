"""`learnloop mcp` driven by a client nobody here wrote: the MCP Inspector's CLI mode, from the npm registry.

The pinned Inspector is installed once into `.mcp-inspector/` (npm cache in `.npm-cache/`, both gitignored) and
then run from there, so later runs need no network. The only reason to skip is a machine without Node.js/npx.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .test_server_harness import BOIL, KEY, SECRET, TENANT, TOOLS, USER, HttpServer, http_server

INSPECTOR_VERSION = "2.12.0"
PACKAGE = "@modelcontextprotocol/inspector"
REPO = Path(__file__).resolve().parents[2]
PREFIX = REPO / ".mcp-inspector"
NPM_CACHE = REPO / ".npm-cache"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (shutil.which("npx") and shutil.which("npm") and shutil.which("node")),
        reason="npx is not available: the MCP Inspector CLI test needs Node.js and npm on PATH",
    ),
]


def _installed_version() -> str | None:
    manifest = PREFIX / "node_modules" / PACKAGE / "package.json"
    return json.loads(manifest.read_text("utf-8"))["version"] if manifest.exists() else None


@pytest.fixture(scope="module")
def inspector(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The command prefix that runs the pinned Inspector in CLI mode."""
    if _installed_version() != INSPECTOR_VERSION:
        install = [
            "npm", "install", "--prefix", str(PREFIX), "--cache", str(NPM_CACHE),
            "--no-audit", "--no-fund", "--loglevel=error", f"{PACKAGE}@{INSPECTOR_VERSION}",
        ]  # fmt: skip
        done = subprocess.run(install, capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, f"npm install failed:\n{done.stdout}\n{done.stderr}"
    command = ["node", str(PREFIX / "node_modules" / PACKAGE / _bin()), "--cli"]
    version = subprocess.run([*command, "--version"], capture_output=True, text=True, check=True)
    assert INSPECTOR_VERSION in version.stdout
    return command


def _bin() -> str:
    manifest = json.loads((PREFIX / "node_modules" / PACKAGE / "package.json").read_text("utf-8"))
    return str(manifest["bin"]["mcp-inspector"])


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    # The Inspector keeps a server catalog (default ~/.mcp-inspector/mcp.json); keep it out of the home folder.
    return {**os.environ, "MCP_CATALOG_PATH": str(tmp_path / "catalog.json"), "NO_COLOR": "1"}


def run(command: list[str], env: dict[str, str], *args: str) -> tuple[int, Any, str]:
    done = subprocess.run([*command, *args], capture_output=True, text=True, env=env, timeout=120, check=False)
    try:
        output = json.loads(done.stdout)
    except json.JSONDecodeError:
        output = None
    return done.returncode, output, done.stderr


def _text(result: dict[str, Any]) -> str:
    return "\n".join(part["text"] for part in result["content"] if part["type"] == "text")


def check(command: list[str], env: dict[str, str], *, refusal: bool) -> None:
    """List tools, save, recall (each call is a new Inspector process: a fresh session), maybe refuse a secret."""
    code, listed, err = run(command, env, "--method", "tools/list", "--strict")
    assert code == 0, err  # --strict: exits 6 on any schema portability error
    assert [tool["name"] for tool in listed["tools"]] == TOOLS

    save = ["--method", "tools/call", "--tool-name", "save_learning"]
    code, saved, err = run(command, env, *save, "--tool-arg", f"learning={BOIL}", "--tool-arg", "category=fact")
    assert code == 0 and saved["isError"] is False, err
    assert saved["structuredContent"]["action"] == "created"
    learning_id = saved["structuredContent"]["learning_id"]

    recall = [
        "--method",
        "tools/call",
        "--tool-name",
        "recall",
        "--tool-arg",
        "query=how fast does my kettle boil off?",
    ]
    code, recalled, err = run(command, env, *recall)
    assert code == 0 and recalled["isError"] is False, err
    assert BOIL in _text(recalled) and f"#{learning_id}" in _text(recalled)
    assert [item["id"] for item in recalled["structuredContent"]["items"]] == [learning_id]

    if not refusal:
        return
    code, refused, err = run(command, env, *save, "--tool-arg", f"learning={SECRET}", "--tool-arg", "category=fact")
    assert code != 0 and refused["isError"] is True  # the CLI exits non-zero on a tool error, after printing it
    assert "secret.ds.aws" in _text(refused)


def test_inspector_over_stdio(inspector: list[str], env: dict[str, str], tmp_path: Path) -> None:
    server = [sys.executable, "-m", "learnloop", "mcp"]
    config = ["-e", f"LEARNLOOP_DB={tmp_path / 'inspector.db'}", "-e", f"LEARNLOOP_TENANT={TENANT}"]
    # Every Inspector call starts the server anew here, so the refusal is only checked over HTTP.
    check([*inspector, *config, "-e", f"LEARNLOOP_USER={USER}", *server], env, refusal=False)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[HttpServer]:
    with http_server(tmp_path / "inspector-http.db") as running:
        yield running


@pytest.mark.server
def test_inspector_over_http(inspector: list[str], env: dict[str, str], server: HttpServer) -> None:
    check(
        [*inspector, server.url, "--transport", "http", "--header", f"Authorization: Bearer {KEY}"], env, refusal=True
    )
