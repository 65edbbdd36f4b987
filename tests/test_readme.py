"""The README works as written: every code block in it runs here, in order, in a fresh folder.

- `python` blocks run as they are; the fragments that continue an app (`loop`, `tool_call`, `user_message`, …)
  get those names from `FRAGMENT_NAMES`, and the agent block's model is the scripted OpenAI-compatible server.
- `sh` blocks run in bash with `learnloop` on the PATH. The install block installs the checkout and a wheel built
  from it into a fresh environment, offline (the dependencies are this test environment's). Long-running
  servers (`mcp --transport http`) are started in the background and the JSON configuration after them is
  used to connect. `make run` / `make test` run as `make -n` (this test is part of `make test`).
- `json` blocks are MCP configurations: stdio ones are started with the official MCP client and must list their
  tools; the HTTP one connects to the server the block before it started; `servers.json` must load.
- `text` blocks are sample output, not code; there must be no other kind.

Where the README names a machine-specific thing (a home folder, a port, a key shown once), `SUBSTITUTIONS`
says what stands in for it here; nothing else in a block is changed.
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.conftest import BREWING
from tests.support.scripted_openai import Reply, ScriptedOpenAI, last_user_message

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SERVERS = Path(__file__).resolve().parent / "mcp" / "servers"
BIN = Path(sys.executable).parent

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Block:
    language: str
    code: str
    line: int


def readme_blocks() -> list[Block]:
    text = README.read_text("utf-8")
    found = []
    for match in re.finditer(r"^```(\w*)\n(.*?)^```$", text, re.MULTILINE | re.DOTALL):
        found.append(Block(match.group(1), match.group(2), text[: match.start()].count("\n") + 1))
    return found


def test_every_block_has_a_runner() -> None:
    kinds = {block.language for block in readme_blocks()}
    assert kinds <= {"python", "sh", "json", "text"}, kinds
    assert len([b for b in readme_blocks() if b.language == "text"]) == 1  # the sample output of `serve`


# -- running blocks -----------------------------------------------------------------------------------------------


def _environment(folder: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LEARNLOOP_", "OPENAI_", "PIP_"))}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONUNBUFFERED"] = "1"
    return env | extra


def _sh(code: str, folder: Path, **env: str) -> str:
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", code],
        cwd=folder,
        env=_environment(folder, **env),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"{code}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
    return done.stdout


def _run_python(code: str, names: dict[str, Any], runner: asyncio.Runner) -> None:
    compiled = compile(code, "README.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    if compiled.co_flags & 0x80:  # CO_COROUTINE: the block awaits at top level
        runner.run(eval(compiled, names))
    else:
        exec(compiled, names)


@contextmanager
def _background(command: str, folder: Path, ready: str) -> Iterator[tuple[subprocess.Popen[str], list[str]]]:
    """A long-running command of a block, until the line with `ready` shows on its output."""
    process = subprocess.Popen(
        ["bash", "-c", f"exec {command}"],
        cwd=folder,
        env=_environment(folder),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    lines: list[str] = []
    for line in process.stdout:
        lines.append(line)
        if ready in line:
            break
    else:
        process.wait()
        raise AssertionError(f"{command} exited:\n{''.join(lines)}")
    threading.Thread(target=lambda: lines.extend(process.stdout or ()), daemon=True).start()
    try:
        yield process, lines
    finally:
        process.terminate()
        process.wait(timeout=30)


async def _list_tools(config: dict[str, Any]) -> set[str]:
    """Connect to the one server of an MCP client configuration, as a client would, and list its tools."""
    from mcp import Client, StdioServerParameters
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    [server] = config["mcpServers"].values()
    if "command" in server:
        command = shutil.which(server["command"], path=str(BIN))
        assert command is not None, server["command"]
        env = {"PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "HOME": os.environ.get("HOME", "/")}
        params = StdioServerParameters(command=command, args=server["args"], env=env)
        async with Client(params, mode="legacy") as client:
            return {t.name for t in (await client.list_tools()).tools}
    assert server.get("type") == "http"
    http = create_mcp_http_client(headers=server["headers"])
    async with http, Client(streamable_http_client(server["url"], http_client=http), mode="legacy") as client:
        return {t.name for t in (await client.list_tools()).tools}


# -- the walk through the README ------------------------------------------------------------------------------------


def _install(block: Block, folder: Path) -> None:
    """The install block, offline, into a fresh environment that sees this one's dependencies (and pip)."""
    env = folder / "install-env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(env), "platbase": str(env)}))
    (site / "test-env.pth").write_text(sysconfig.get_path("purelib") + "\n", "utf-8")
    pip = env / "bin" / "pip"
    pip.write_text(f'#!/bin/sh\nexec "{env}/bin/python" -m pip "$@"\n', "utf-8")
    pip.chmod(0o755)
    checkout = folder / "learnloop"
    shutil.copytree(ROOT, checkout, ignore=shutil.ignore_patterns(".venv", ".git", "test-output", "*.db*", "dist"))
    lines = [line for line in block.code.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert [line.split()[0] for line in lines] == ["pip", "pip", "pip", "pip", "pipx"], lines
    # pipx builds an environment of its own and would download every dependency into it: not offline.
    script = "\n".join(lines[:4])
    _sh(
        script,
        folder,
        PATH=f"{env / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        PIP_NO_INDEX="1",
        PIP_NO_BUILD_ISOLATION="0",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    installed = subprocess.run(
        [str(env / "bin" / "python"), "-c", "import learnloop, sys; print(learnloop.__file__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert str(env) in installed  # the wheel's copy, not this checkout's
    assert (env / "bin" / "learnloop").exists()
    assert list((folder / "dist").glob("learnloop-*.whl"))


@pytest.fixture
def walk(tmp_path: Path) -> Iterator[dict[str, Any]]:
    folder = tmp_path / "readme"
    folder.mkdir()
    old = Path.cwd()
    os.chdir(folder)
    with ScriptedOpenAI() as llm, asyncio.Runner() as runner:
        os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"] = llm.base_url, "test-key"
        try:
            yield {"folder": folder, "runner": runner, "llm": llm}
        finally:
            os.environ.pop("OPENAI_BASE_URL", None)
            os.environ.pop("OPENAI_API_KEY", None)
            os.chdir(old)


def test_the_readme_runs_as_written(walk: dict[str, Any], capfd: pytest.CaptureFixture[str]) -> None:
    import learnloop

    folder: Path = walk["folder"]
    runner: asyncio.Runner = walk["runner"]
    app = learnloop.open(str(folder / "app-fragments.db"), vocabulary=BREWING)
    names: dict[str, Any] = {
        "learnloop": learnloop,
        "loop": app,
        "system_prompt": "You are a brewing assistant.\n\n",
        "messages": [],
        "tool_call": SimpleNamespace(
            id="call_1", arguments=json.dumps({"learning": "Alice's kettle holds 30 litres", "category": "equipment"})
        ),
        "user_message": "Actually, my kettle holds 30 litres, not 25.",
        "reply": "Noted: a 30 litre kettle.",
    }
    walk["llm"].chat.respond(_framework_agent)
    from agents import set_tracing_disabled

    set_tracing_disabled(True)  # the Agents SDK block's traces would go to OpenAI's servers
    servers = folder / "servers.json"
    test_servers = {n: {"command": sys.executable, "args": [str(SERVERS / f"{n}.py")]} for n in ("weather", "shop")}
    servers.write_text(json.dumps({"mcpServers": test_servers}), "utf-8")
    (folder / "texts.txt").write_text("Alice's kettle holds 30 litres\nThe key is AKIAQ7ZKX4J2M5RTWB6N\n", "utf-8")
    (folder / "turns.jsonl").write_text(
        json.dumps({"user": "alice", "user_message": "Actually we use a 30 litre kettle now."}) + "\n", "utf-8"
    )
    http_servers: list[tuple[str, str]] = []
    ran: list[int] = []
    running = ExitStack()
    try:
        for block in readme_blocks():
            code = block.code.replace("/home/alice/.learnloop/", f"{folder}/").replace(
                f"{folder}/servers.json", str(servers)
            )
            if block.language == "text":
                continue
            if block.language == "python":
                names["loop"] = app  # a fragment continues the app; a block that opens its own loop replaces it
                _run_python(code, names, runner)
                opened = names["loop"]
                if opened is not app and isinstance(opened, learnloop.Loop):
                    runner.run(opened.aclose())
            elif block.language == "sh" and code.startswith("pip install"):
                _install(block, folder)
            elif block.language == "sh" and code.startswith("make run"):
                assert {"run", "test"} <= set(re.findall(r"^make (\w+)", code, re.MULTILINE))
                _sh("make -n run >/dev/null && make -n test >/dev/null", ROOT)
            elif block.language == "sh" and code.startswith("curl"):
                _curl(code, folder)
            elif block.language == "sh" and "mcp --transport http" in code:
                http_servers.append(_mcp_http(code, folder, running))
            elif block.language == "sh":
                _cli(code, folder)
            elif block.language == "json" and '"type": "http"' in code:
                url, key = http_servers[-1]
                config = json.loads(re.sub(r"http://localhost:\d+/mcp", url, code).replace("ll_…", key))
                assert "save_learning" in runner.run(_list_tools(config))
            elif block.language == "json" and '"learnloop": {"k"' in code:
                from learnloop.mcp.downstream import load_config

                (folder / "readme-servers.json").write_text(code, "utf-8")
                assert [s.name for s in load_config(folder / "readme-servers.json").servers] == ["github", "billing"]
            elif block.language == "json":
                listed = runner.run(_list_tools(json.loads(code)))
                assert "save_learning" in listed or "set_context" in listed, listed
            else:
                raise AssertionError(f"README line {block.line}: no runner for this block")
            ran.append(block.line)
    finally:
        running.close()
        runner.run(app.aclose())
    out = capfd.readouterr().out
    assert "created" in out and "<learning_memories>" in out and "Mash at 66" in out  # what the tour prints
    assert out.count("About 3.5 litres.") == 2  # the two agent frameworks' blocks
    assert len(ran) == len([b for b in readme_blocks() if b.language != "text"])


def _framework_agent(request: dict[str, Any]) -> Reply | None:
    """The model of the "Agent frameworks" blocks: it calls the tool, then answers from its result."""
    if "boils off in an hour" not in last_user_message(request):
        return None
    if request["messages"][-1].get("role") == "tool":
        return Reply.text("About 3.5 litres.")
    return Reply.tool_call("boil_off", {"minutes": 60})


def _curl(code: str, folder: Path) -> None:
    """The curl block, against `learnloop serve` on a free port with an app key in $KEY."""
    key = json.loads(_sh("learnloop --json keys create --role app", folder))["key"]
    with _background("learnloop serve --port 0 --no-first-key", folder, "learnloop is serving") as (_, lines):
        port = re.search(r"at http://localhost:(\d+)", "".join(lines))
        assert port is not None
        out = _sh(code.replace("localhost:8765", f"localhost:{port.group(1)}"), folder, KEY=key)
    replies = [json.loads(line) for line in re.findall(r"^\{.*\}$", out.replace("}{", "}\n{"), re.MULTILINE)]
    assert replies[0]["ok"] is True and replies[0]["action"] == "created", replies[0]
    assert "Grainfather" in replies[1]["block"], replies[1]


def _mcp_http(code: str, folder: Path, running: ExitStack) -> tuple[str, str]:
    """The block's two lines: a key, then the server, left running (in `running`) for the JSON block after it."""
    create, serve = [line.split("  #")[0].strip() for line in code.strip().splitlines()]
    key = _sh(create, folder).strip().splitlines()[-1]
    assert key.startswith("ll_")
    _, lines = running.enter_context(_background(serve.replace("--port 8766", "--port 0"), folder, "serving on"))
    found = re.search(r"serving on (http://\S+)", "".join(lines))
    assert found is not None
    return found.group(1).replace("0.0.0.0", "127.0.0.1"), key


def _cli(code: str, folder: Path) -> None:
    if "keys revoke 3f0c9a1b2c3d4e5f" in code:  # the Service section's keys: revoke the key the first line created
        first, rest = code.split("\n", 1)
        created = _sh(first, folder)
        key_id = re.search(r"created \w+ key (\w+)", created)
        assert key_id is not None
        _sh(rest.replace("3f0c9a1b2c3d4e5f", key_id.group(1)), folder)
        return
    if "learnloop demo" in code:  # "The command line" stands on its own: a folder (and learnloop.db) of its own
        own = folder / "command-line"
        own.mkdir()
        for name in ("texts.txt", "turns.jsonl"):
            shutil.copy(folder / name, own / name)
        out = _sh(textwrap.dedent(code), own)
        assert "Grainfather Gen 1 boils off about 3.6 L/hr" in out and "forgot alice" in out
        return
    _sh(textwrap.dedent(code), folder)
