"""`learnloop proxy`: an MCP server in front of other MCP servers that learns which tools to show.

The client sees, for its current context, the top-k tools the router picks, plus two tools of the proxy:

- `set_context(query, intent?)` — what the user is asking now. Starts a new correlation window (seed 002):
  the list is routed again for the query and, if it changed, `notifications/tools/list_changed` is sent.
- `search_available_tools(query, limit?)` — the escape valve when no listed tool fits: searches every
  downstream tool; the tools found join the list for the rest of the window (and the list is announced
  as changed).

`tools/call` is forwarded to the server that owns the tool and its result returned unchanged. Every
tools/list, search and call is recorded as a signal (durable before the answer goes back), and calls teach
the router: a listed tool that gets used is a strong signal, one found by search a discovery.

Sessions: each stdio connection is one session; over streamable HTTP the `Mcp-Session-Id` header
separates clients (the stateless 2026 protocol has no session: a caller's clients share one window). The
proxy keeps at most `max_sessions` of them and drops one idle for `session_ttl` seconds; a dropped session
starts again from the most used tools.

Over HTTP every request needs an API key (`Authorization: Bearer <key>`), checked by the same `BearerAuth`
as `learnloop mcp`: a shared secret (`--key`, `LEARNLOOP_PROXY_KEY`) standing for the configured user, or a
key of the service's key store (`learnloop keys create`) of the proxy's tenant, whose user — or the one a
tenant key names in `X-Learnloop-User` — the signals are recorded for. The downstream servers are called
with the credentials in servers.json, so a proxy reachable without a key would hand them to anyone.
"""

from __future__ import annotations

import json
import socket
import sys
import time
from collections.abc import Callable
from typing import Any, Literal

import mcp_types as types
from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.caching import CacheHint
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.types import ASGIApp

from ..config import Settings
from ..errors import ConfigurationError, LearnloopError
from ..factory import build_loop
from ..loop import Loop
from ..textcheck import scrub
from ..tools import ToolDef
from ..tools.router import SEARCH_MOST, relevant_hits
from .downstream import Downstreams, ProxyConfig
from .proxy_sessions import ProxySession, SessionTable
from .proxy_tools import INSTRUCTIONS, PROXY_TOOLS, SEARCH_TOOL, SET_CONTEXT_TOOL
from .screening import ScreenedHttp, screened_stdio
from .server_auth import PRINCIPAL_KEY, BearerAuth, KeyResolver, Principal, resolve_key, shared_secret
from .server_keys import chain, store_keys

__all__ = ["DEFAULT_PORT", "SEARCH_TOOL", "SET_CONTEXT_TOOL", "LearningProxy", "SessionTable", "serve"]

# `learnloop serve` listens on 8765 and `learnloop mcp` on 8766: the three run side by side.
DEFAULT_PORT = 8767


class _ProxyServer(Server[Any]):
    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        # The list changes with the context, on every transport: always advertise tools.listChanged.
        options = notification_options or NotificationOptions(tools_changed=True)
        return super().create_initialization_options(options, experimental_capabilities, extensions)


def _text_block(value: str) -> types.TextContent:
    return types.TextContent(type="text", text=value)


def _text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[_text_block(value)])


def _error_text(result: types.CallToolResult) -> str:
    # A downstream's error text is recorded and shown: its control characters (colour codes) are not.
    parts = [c.text for c in result.content if isinstance(c, types.TextContent)]
    return scrub(" ".join(parts)[:500]) or "tool reported an error"


class LearningProxy:
    """The proxy's MCP server over a loop and connected downstream servers."""

    def __init__(
        self,
        loop: Loop,
        downstreams: Downstreams,
        *,
        k: int | None = None,
        user: str | None = None,
        search_limit: int | None = None,
        name: str = "learnloop-proxy",
        max_sessions: int = 1024,
        session_ttl: float = 3600.0,
    ) -> None:
        self.loop = loop
        self.downstreams = downstreams
        self.user = user
        self.tools = loop.tools
        changes: dict[str, Any] = {}
        if k is not None:
            changes["k"] = k
        if search_limit is not None:
            changes["search_limit"] = search_limit
        if changes:
            self.tools.configure(**changes)
        self.sessions = SessionTable(max_sessions, session_ttl)
        self._keys_required = False
        self._bus = InMemorySubscriptionBus()
        self.server = _ProxyServer(
            name,
            instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_subscriptions_listen=ListenHandler(self._bus),
            get_tool_input_schema=self._input_schema,
            cache_hints={"tools/list": CacheHint(ttl_ms=0, scope="private")},
        )

    async def register(self) -> None:
        """Put every downstream tool in the catalog (only changed descriptions are embedded)."""
        by_server = await self.downstreams.refresh()
        for server, exposed in by_server.items():
            definitions = [
                ToolDef(
                    name=e.tool.name,
                    description=e.tool.description or e.tool.title or "",
                    input_schema=dict(e.tool.input_schema or {}),
                    server=server,
                )
                for e in exposed
            ]
            await self.tools.register(definitions, server=server, replace=True)

    def http_app(self, *, keys: KeyResolver, path: str = "/mcp", host: str = "127.0.0.1") -> ASGIApp:
        """The streamable HTTP endpoint at `path`; every request needs a bearer key `keys` knows for the
        proxy's tenant. `host` is where it is served: on loopback the SDK protects against DNS rebinding."""
        app = ScreenedHttp(self.server.streamable_http_app(streamable_http_path=path, host=host))
        self._keys_required = True
        return BearerAuth(app, _tenant_only(keys, self.loop.tenant))

    # -- sessions ----------------------------------------------------------------------------------------

    def _caller(self, ctx: ServerRequestContext[Any, Any]) -> Principal | None:
        scope = getattr(ctx.request, "scope", None)
        found = scope.get(PRINCIPAL_KEY) if isinstance(scope, dict) else None
        if isinstance(found, Principal):
            return found
        if self._keys_required and ctx.request is not None:
            # Unreachable through BearerAuth; refuse rather than act without a key.
            raise MCPError(types.INVALID_REQUEST, "this request carries no API key")
        return None

    def _session(self, ctx: ServerRequestContext[Any, Any]) -> ProxySession:
        caller = self._caller(ctx)
        unknown = getattr(caller, "unknown_user", None)
        if unknown is not None:  # a user-bound key named another user: as for `learnloop mcp`, that user is unknown
            raise MCPError(types.INVALID_PARAMS, f"user {unknown!r} not found")
        user = caller.user if caller is not None and caller.user is not None else self.user
        headers = getattr(ctx.request, "headers", None)
        session_id = (headers.get("mcp-session-id") if headers is not None else None) or "default"
        # The caller is part of the key: a session id seen on the wire does not open another user's window.
        return self.sessions.get(f"{user or ''}\x00{session_id}", user)

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        # Argument headers are checked against the whole catalog: searched tools are callable too.
        found = self.downstreams.tools.get(name)
        return None if found is None else dict(found.tool.input_schema or {})

    async def _announce(self, ctx: ServerRequestContext[Any, Any]) -> None:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            await self._bus.publish(ToolsListChanged())
        else:
            await ctx.session.send_tool_list_changed()

    def _served(self, names: list[str]) -> list[str]:
        return [n for n in names if n in self.downstreams.tools]

    # -- tools/list ----------------------------------------------------------------------------------------

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        session = self._session(ctx)
        if session.listed is None:
            routed = await self.tools.route(None, user=session.user)  # no context yet: the most used tools
            session.listed = self._served([r.name for r in routed])
        names = list(dict.fromkeys([*session.listed, *session.extra]))
        # Only what the router chose counts as retrieved: a tool listed because a search found it stays a
        # discovery (seed 002: "they had to search for it, we missed it").
        await self.tools.record_list(session.id, session.listed, user=session.user)
        listed = [self.downstreams.tools[n].tool for n in names if n in self.downstreams.tools]
        return types.ListToolsResult(tools=[*listed, *PROXY_TOOLS])

    # -- tools/call ----------------------------------------------------------------------------------------

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        if params.name == SET_CONTEXT_TOOL:
            return await self._set_context(ctx, arguments)
        if params.name == SEARCH_TOOL:
            return await self._search(ctx, arguments)
        if params.name not in self.downstreams.tools:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        caller = self._caller(ctx)
        if caller is not None and not caller.can_write:
            raise MCPError(types.INVALID_REQUEST, f"this key's scope ({caller.scope!r}) may not call {params.name}")
        session = self._session(ctx)
        started = time.perf_counter()
        try:
            result = await self.downstreams.call(params.name, arguments)
        except MCPError as exc:
            await self._record(session, params.name, arguments, False, exc.message, started)
            hint = await self._recovery_hint(session, params.name, arguments, exc.message)
            raise MCPError(exc.code, f"{exc.message} {hint}" if hint else exc.message, exc.data) from exc
        except Exception as exc:  # the downstream went away: the client gets an MCP error, the loop a signal
            reason = scrub(str(exc) or type(exc).__name__)
            await self._record(session, params.name, arguments, False, reason, started)
            raise MCPError(types.INTERNAL_ERROR, f"{params.name} failed: {reason}") from exc
        error = _error_text(result) if result.is_error else None
        await self._record(session, params.name, arguments, not result.is_error, error, started)
        if error is not None:
            hint = await self._recovery_hint(session, params.name, arguments, error)
            if hint:
                # The tool's own answer stays as it was; the hint is one more text block after it.
                result = result.model_copy(update={"content": [*result.content, _text_block(hint)]})
        return result

    async def _recovery_hint(
        self, session: ProxySession, tool: str, arguments: dict[str, Any], error: str
    ) -> str | None:
        """What worked the last times this call failed like this (`suggest_recovery`), as one sentence."""
        try:
            found = await self.tools.suggest_recovery(tool, arguments, error, user=session.user)
        except LearnloopError:
            return None  # a hint is a courtesy: never turn the tool's error into another one
        if found is None:
            return None
        call = json.dumps(found.recovery_params, ensure_ascii=False, sort_keys=True)
        return (
            f"learnloop: this call failed like this before, and then this worked: {found.description} "
            f"({found.recovery_tool} with {call})."
        )

    async def _record(
        self, session: ProxySession, tool: str, arguments: dict[str, Any], ok: bool, error: str | None, started: float
    ) -> None:
        latency = (time.perf_counter() - started) * 1000
        await self.tools.record_call(
            session.id, tool, arguments, ok=ok, error=error, latency_ms=round(latency, 3), user=session.user
        )

    async def _set_context(
        self, ctx: ServerRequestContext[Any, Any], arguments: dict[str, Any]
    ) -> types.CallToolResult:
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            raise MCPError(types.INVALID_PARAMS, "set_context needs a non-empty 'query'")
        intent = arguments.get("intent")
        session = self._session(ctx)
        try:
            routed = await self.tools.set_context(
                session.id, query, user=session.user, intent=intent if isinstance(intent, str) else None
            )
        except LearnloopError as exc:
            raise MCPError(types.INVALID_PARAMS, exc.message) from exc
        before = None if session.listed is None else [*session.listed, *session.extra]
        session.context, session.extra = query, []
        session.listed = self._served([r.name for r in routed])
        if before != session.listed:
            await self._announce(ctx)
        names = ", ".join(session.listed) or "none"
        return _text(f"Context set. Tools for this request: {names}. If none fits, call {SEARCH_TOOL}.")

    async def _search(self, ctx: ServerRequestContext[Any, Any], arguments: dict[str, Any]) -> types.CallToolResult:
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            raise MCPError(types.INVALID_PARAMS, f"{SEARCH_TOOL} needs a non-empty 'query'")
        limit = arguments.get("limit")
        limit = max(1, min(50, limit)) if isinstance(limit, int) and not isinstance(limit, bool) else None
        session = self._session(ctx)
        found = await self.tools.search(query, limit=limit, user=session.user)
        served = [r for r in found if r.name in self.downstreams.tools]
        shown = set(session.listed or []) | set(session.extra)
        # Only new hits close to the best one join the list, at most three: ten loosely related tools crowd
        # out the routed ones the model should pick from.
        relevant = relevant_hits(served, shown=shown, most=min(SEARCH_MOST, limit or SEARCH_MOST))
        # What the agent was shown is what counts as searched: a call of one of these is a discovery.
        await self.tools.record_search(session.id, query, [r.name for r in relevant], user=session.user)
        if relevant:
            session.extra.extend(r.name for r in relevant)
            await self._announce(ctx)
            payload = [{"name": r.name, "description": r.description, "server": r.server} for r in relevant]
            return _text(json.dumps(payload, ensure_ascii=False))
        listed = [r.name for r in served[:SEARCH_MOST] if r.name in shown]
        said = (
            f"The tools already listed fit best: {', '.join(listed)}."
            if listed
            else "No tool fits this request well; try other words for what the tool should do."
        )
        return types.CallToolResult(content=[_text_block("[]"), _text_block(said)])


def _tenant_only(resolver: KeyResolver, tenant: str) -> KeyResolver:
    """`resolver`, knowing only keys of `tenant`: the proxy serves one tenant's downstream servers."""

    async def resolve(api_key: str) -> Principal | None:
        found = await resolve_key(resolver, api_key)
        return found if found is not None and found.tenant == tenant else None

    return resolve


def _announce(url: str) -> None:
    # stderr: scripts (and the tests) wait for this line to know the proxy is up, and on which port.
    print(f"learnloop proxy: serving on {url}", file=sys.stderr, flush=True)


async def serve(
    settings: Settings,
    config: ProxyConfig,
    *,
    transport: Literal["stdio", "http"] = "stdio",
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    path: str = "/mcp",
    key: str | None = None,
    keys: KeyResolver | None = None,
    on_ready: Callable[[str], None] = _announce,
) -> None:
    """Connect the downstream servers, register their tools, then serve until the client goes away.

    Over HTTP every request needs an API key: `key` (a shared secret standing for the configured user), one
    from `keys`, or one of the service's keys (`learnloop keys create`) of the loop's tenant. Without any of
    them the proxy refuses to start."""
    loop = build_loop(settings)
    try:
        resolvers: list[KeyResolver] = []
        if transport == "http":
            await loop.engine.ensure_started()
            found = (shared_secret(key, loop.tenant, config.user) if key else None, keys, store_keys(loop))
            resolvers = [r for r in found if r is not None]
            if not resolvers:
                raise ConfigurationError(
                    "serving the proxy over HTTP needs API keys: set --key (or LEARNLOOP_PROXY_KEY)"
                )
        async with Downstreams(config.servers) as downstreams:
            proxy = LearningProxy(loop, downstreams, k=config.k, user=config.user, search_limit=config.search_limit)
            await proxy.register()
            if transport == "stdio":
                async with screened_stdio() as (read, write):
                    await proxy.server.run(read, write, proxy.server.create_initialization_options())
                return
            app = proxy.http_app(keys=chain(*resolvers), path=path, host=host)
            await _serve_http(app, host=host, port=port, path=path, on_ready=on_ready)
    finally:
        await loop.tools.drain()
        await loop.aclose()


async def _serve_http(app: ASGIApp, *, host: str, port: int, path: str, on_ready: Callable[[str], None]) -> None:
    import uvicorn

    class _Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started and self.servers:
                # With --port 0 the OS picks the port; report the real one.
                bound = self.servers[0].sockets[0].getsockname()[1]
                shown = f"[{host}]" if ":" in host else host
                on_ready(f"http://{shown}:{bound}{path}")

    await _Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")).serve()
