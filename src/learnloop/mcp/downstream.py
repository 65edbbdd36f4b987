"""The MCP servers behind the proxy: their configuration, connections and tools.

`servers.json` uses the format MCP clients use for their own servers, so an existing client configuration
can be moved behind the proxy as it is:

    {
      "mcpServers": {
        "weather": {"command": "python", "args": ["weather_server.py"], "env": {"API_KEY": "..."}},
        "shop":    {"url": "http://127.0.0.1:9000/mcp", "headers": {"Authorization": "Bearer ..."}}
      },
      "learnloop": {"k": 8, "user": "alice"}
    }

A tool keeps its name unless two servers offer the same one; then both are exposed as `server__name`.

A server that cannot be started stops the proxy with one line naming it (`ConfigurationError`), unless its
entry says `"optional": true`: then the proxy starts without it and says so on stderr. A server that goes away
later is logged by name; calls of its tools are errors until the proxy is restarted.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import TaskGroup
from mcp import Client, StdioServerParameters

from ..errors import ConfigurationError

__all__ = ["DownstreamSpec", "Downstreams", "ExposedTool", "ProxyConfig", "load_config", "one_line"]

log = logging.getLogger("learnloop.mcp.proxy")

_PAGE_LIMIT = 100


@dataclass(frozen=True)
class DownstreamSpec:
    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    # Start the proxy without this server when it cannot be started, instead of refusing to start.
    optional: bool = False

    @property
    def where(self) -> str:
        return self.url or " ".join([self.command or "", *self.args]).strip()


@dataclass(frozen=True)
class ProxyConfig:
    servers: tuple[DownstreamSpec, ...]
    k: int | None = None
    user: str | None = None
    search_limit: int | None = None


def _spec(name: str, raw: Any) -> DownstreamSpec:
    if not isinstance(raw, Mapping):
        raise ConfigurationError(f"server {name!r} must be an object with 'command' or 'url'")
    command, url = raw.get("command"), raw.get("url")
    if bool(command) == bool(url):
        raise ConfigurationError(f"server {name!r} needs exactly one of 'command' (stdio) or 'url' (HTTP)")
    args = raw.get("args") or []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigurationError(f"server {name!r}: 'args' must be a list of strings")
    optional = raw.get("optional", False)
    if not isinstance(optional, bool):
        raise ConfigurationError(f"server {name!r}: 'optional' must be true or false")
    return DownstreamSpec(
        name=name,
        command=command,
        args=tuple(args),
        env={str(k): str(v) for k, v in (raw.get("env") or {}).items()},
        cwd=raw.get("cwd"),
        url=url,
        headers={str(k): str(v) for k, v in (raw.get("headers") or {}).items()},
        optional=optional,
    )


def load_config(path: str | Path) -> ProxyConfig:
    try:
        document = json.loads(Path(path).read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigurationError(f"cannot read proxy configuration {str(path)!r}: {exc}") from exc
    servers = document.get("mcpServers", document.get("servers")) if isinstance(document, Mapping) else None
    if not isinstance(servers, Mapping) or not servers:
        raise ConfigurationError(f"{path}: expected an object with 'mcpServers' naming at least one server")
    options = document.get("learnloop") or {}
    return ProxyConfig(
        servers=tuple(_spec(str(name), raw) for name, raw in servers.items()),
        k=options.get("k"),
        user=options.get("user"),
        search_limit=options.get("search_limit"),
    )


@dataclass(frozen=True)
class ExposedTool:
    server: str
    original: str
    tool: types.Tool  # as the downstream listed it, under the exposed name


class Downstreams:
    """Connected downstream servers. Use as `async with Downstreams(specs) as downstreams: ...`.

    Servers are started side by side (each connection lives in its own task until the proxy stops), so
    starting the proxy takes as long as the slowest server, not the sum of them."""

    def __init__(self, specs: tuple[DownstreamSpec, ...]) -> None:
        self.specs = specs
        self.clients: dict[str, Client] = {}
        self.tools: dict[str, ExposedTool] = {}
        # Servers that failed, with the reason in one line.
        self.failures: dict[str, str] = {}
        self._stop = anyio.Event()
        self._group: TaskGroup | None = None

    async def __aenter__(self) -> Downstreams:
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        try:
            ready = [anyio.Event() for _ in self.specs]
            for spec, connected in zip(self.specs, ready, strict=True):
                self._group.start_soon(self._hold, spec, connected)
            for connected in ready:
                await connected.wait()
            self._check_started()
            await self.refresh()
        except Exception:
            # Every connection task ends once told to stop; the error is this one, not a group of it.
            self._stop.set()
            await self._group.__aexit__(None, None, None)
            raise
        except BaseException as exc:  # cancelled: the task group must see it
            self._stop.set()
            await self._group.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    def _check_started(self) -> None:
        """Refuse to start over a server that failed, naming it; skip one marked optional, saying so."""
        for spec in self.specs:
            reason = self.failures.get(spec.name)
            if reason is None:
                continue
            message = f"downstream MCP server {spec.name!r} ({spec.where}) could not be started: {reason}"
            if not spec.optional:
                raise ConfigurationError(message, server=spec.name)
            log.warning("%s; starting without it (it is optional)", message)
            print(f"learnloop proxy: {message}; starting without it (optional)", file=sys.stderr, flush=True)

    async def __aexit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._group is not None:
            await self._group.__aexit__(*exc)

    async def _hold(self, spec: DownstreamSpec, connected: anyio.Event) -> None:
        """Keep one server's connection open until the proxy stops. A failure is recorded under the server's
        name (before it connected: the proxy does not start; after: its tools' calls fail) instead of tearing
        the whole proxy down with a traceback that names no server."""
        try:
            async with self._client(spec) as client:
                self.clients[spec.name] = client
                connected.set()
                await self._stop.wait()
        except Exception as exc:
            reason = one_line(exc)
            self.clients.pop(spec.name, None)
            if connected.is_set():
                log.error("downstream MCP server %r (%s) went away: %s", spec.name, spec.where, reason)
            self.failures[spec.name] = reason
        finally:
            connected.set()

    @asynccontextmanager
    async def _client(self, spec: DownstreamSpec) -> AsyncIterator[Client]:
        if spec.command is not None:
            params = StdioServerParameters(command=spec.command, args=list(spec.args), env=dict(spec.env), cwd=spec.cwd)
            async with Client(params) as client:
                yield client
            return
        assert spec.url is not None
        if not spec.headers:
            async with Client(spec.url) as client:
                yield client
            return
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        async with (
            httpx2.AsyncClient(headers=dict(spec.headers)) as http,
            Client(streamable_http_client(spec.url, http_client=http)) as client,
        ):
            yield client

    async def _list(self, client: Client) -> list[types.Tool]:
        tools: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(_PAGE_LIMIT):
            page = await client.list_tools(cursor=cursor, cache_mode="refresh")
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return tools

    async def refresh(self) -> dict[str, list[ExposedTool]]:
        """List every server's tools again; returns the exposed tools by server."""
        listed = {name: await self._list(client) for name, client in self.clients.items()}
        counts: dict[str, int] = {}
        for tools in listed.values():
            for tool in tools:
                counts[tool.name] = counts.get(tool.name, 0) + 1
        exposed: dict[str, ExposedTool] = {}
        by_server: dict[str, list[ExposedTool]] = {name: [] for name in listed}
        for server, tools in listed.items():
            for tool in tools:
                name = tool.name if counts[tool.name] == 1 else f"{server}__{tool.name}"
                entry = ExposedTool(server, tool.name, tool.model_copy(update={"name": name}))
                exposed[name] = entry
                by_server[server].append(entry)
        self.tools = exposed
        return by_server

    async def call(self, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        entry = self.tools[name]
        client = self.clients.get(entry.server)
        if client is None:
            reason = self.failures.get(entry.server, "not connected")
            raise ConnectionError(f"downstream MCP server {entry.server!r} is not available: {reason}")
        return await client.call_tool(entry.original, arguments)


def one_line(exc: BaseException) -> str:
    """The innermost first cause of `exc` in one line: what went wrong, without the exception groups and
    tracebacks of the task groups it passed through."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    name = type(exc).__name__
    return f"{name}: {text}" if text else name
