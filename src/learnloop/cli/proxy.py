"""`learnloop proxy --config servers.json`: the learning MCP proxy in front of other MCP servers."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import click

from ..errors import LearnloopError
from .context import CliContext, pass_context


@click.command()
@click.option(
    "--config",
    "config_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help='Downstream servers, as in an MCP client config: {"mcpServers": {...}}.',
)
@click.option("--http", "http", is_flag=True, help="Serve streamable HTTP instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP address.")
@click.option(
    "--port",
    default=8767,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="HTTP port (0 = any free; 8765 is the REST service's, 8766 learnloop mcp's).",
)
@click.option("--path", "mount", default="/mcp", show_default=True, help="HTTP endpoint path.")
@click.option(
    "--key",
    envvar="LEARNLOOP_PROXY_KEY",
    help="HTTP: a shared API key standing for the configured user, sent as 'Authorization: Bearer <key>'. "
    "Keys of the proxy's tenant from `learnloop keys create` are accepted too.",
)
@click.option("-k", "k", type=click.IntRange(1, 100), help="Tools listed per context (default 8).")
@click.option("--user", help="End user the signals are recorded for (default: none, tenant-wide).")
@pass_context
def proxy(
    ctx: CliContext,
    config_path: Path,
    http: bool,
    host: str,
    port: int,
    mount: str,
    key: str | None,
    k: int | None,
    user: str | None,
) -> None:
    """Serve an MCP server that shows the tools that fit the current context and learns from every call.

    It connects to the servers in the config (stdio commands or HTTP URLs), exposes the top-k of their
    tools for the context set with `set_context`, plus `search_available_tools`, and forwards calls.
    Over HTTP every request needs an API key (--key, or a key from `learnloop keys create`): the proxy
    calls the downstream servers with the credentials of the config.

    \b
    stdio (a client starts it):  learnloop proxy --config servers.json
    HTTP:                        learnloop proxy --config servers.json --http --key "$LEARNLOOP_PROXY_KEY"
    """
    try:
        import anyio

        from ..mcp.downstream import load_config
        from ..mcp.proxy import serve
    except ImportError as exc:  # the SDK is an optional extra
        raise click.ClickException(
            f"the MCP proxy needs the 'mcp' extra: pip install 'learnloop[mcp]' ({exc})"
        ) from exc
    if not mount.startswith("/"):
        raise click.BadParameter("must start with /", param_hint="--path")
    try:
        config = load_config(config_path)
        if k is not None or user is not None:
            config = type(config)(
                servers=config.servers,
                k=k if k is not None else config.k,
                user=user if user is not None else config.user,
                search_limit=config.search_limit,
            )
        transport: Literal["stdio", "http"] = "http" if http else "stdio"
        anyio.run(
            lambda: serve(ctx.settings, config, transport=transport, host=host, port=port, path=mount, key=key or None)
        )
    except LearnloopError as exc:
        raise click.ClickException(f"{exc.message} [{exc.code}]") from exc
    except KeyboardInterrupt:
        pass
