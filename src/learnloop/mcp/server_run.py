"""Running `LearnloopMCP` as a process: open the loop, serve one transport, close the loop."""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable
from typing import Literal

from ..config import Settings
from ..errors import ConfigurationError
from ..factory import build_loop
from ..models import DEFAULT_NAMESPACE
from .server import LearnloopMCP
from .server_auth import GLOBAL_USER, KeyResolver, Principal, shared_secret
from .server_keys import chain, store_keys

__all__ = ["Transport", "serve"]

Transport = Literal["stdio", "http"]


def _announce(url: str) -> None:
    # stderr: on stdio stdout is the protocol, and over HTTP scripts wait for this line to know it is up.
    print(f"learnloop mcp: serving on {url}", file=sys.stderr, flush=True)


async def serve(
    settings: Settings,
    *,
    transport: Transport = "stdio",
    user: str | None = None,
    namespace: str = DEFAULT_NAMESPACE,
    host: str = "127.0.0.1",
    port: int = 8766,
    path: str = "/mcp",
    key: str | None = None,
    keys: KeyResolver | None = None,
    on_ready: Callable[[str], None] = _announce,
) -> None:
    """Serve until the client disconnects (stdio) or the process is interrupted (HTTP).

    Over stdio the caller is the configured tenant and `user`; without a user it works on the tenant's global
    learnings (the operator chose that by starting it so). Over HTTP every request needs an API key: `key` (a
    shared secret standing for the configured tenant and user), one from `keys`, or one of the service's keys
    (`learnloop keys create`), which carry their own tenant and user. A tenant-wide key (no user) names the
    user per request, or `*global*`; `user="*global*"` makes the shared secret stand for the global learnings.
    """
    everyone = user == GLOBAL_USER
    user = None if everyone else user
    loop = build_loop(settings)
    try:
        await loop.engine.ensure_started()
        configured = Principal(tenant=loop.tenant, user=user, shared=user is None)
        mcp = LearnloopMCP(loop, configured, namespace=namespace)
        if transport == "stdio":
            await mcp.run_stdio()
            return
        secret = shared_secret(key, loop.tenant, user, shared=everyone) if key else None
        resolvers = [r for r in (secret, keys, store_keys(loop)) if r]
        if not resolvers:
            raise ConfigurationError("serving over HTTP needs API keys: set --key (or LEARNLOOP_MCP_KEY)")
        await _serve_http(mcp, host=host, port=port, path=path, keys=chain(*resolvers), on_ready=on_ready)
    finally:
        await loop.aclose()


async def _serve_http(
    mcp: LearnloopMCP, *, host: str, port: int, path: str, keys: KeyResolver, on_ready: Callable[[str], None]
) -> None:
    import uvicorn

    app = mcp.http_app(path=path, host=host, keys=keys)

    class _Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started and self.servers:
                # With --port 0 the OS picks the port; report the real one.
                bound = self.servers[0].sockets[0].getsockname()[1]
                shown = f"[{host}]" if ":" in host else host
                on_ready(f"http://{shown}:{bound}{path}")

    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await _Server(config).serve()
