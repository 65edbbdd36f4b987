"""`learnloop proxy --config servers.json`: the learning MCP proxy in front of other MCP servers."""

from __future__ import annotations

from pathlib import Path

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
@click.option("--port", default=8765, show_default=True, type=int, help="HTTP port.")
@click.option("--path", "mount", default="/mcp", show_default=True, help="HTTP endpoint path.")
@click.option("-k", "k", type=click.IntRange(1, 100), help="Tools listed per context (default 8).")
@click.option("--user", help="End user the signals are recorded for (default: none, tenant-wide).")
@pass_context
def proxy(
    ctx: CliContext, config_path: Path, http: bool, host: str, port: int, mount: str, k: int | None, user: str | None
) -> None:
    """Serve an MCP server that shows the tools that fit the current context and learns from every call.

    It connects to the servers in the config (stdio commands or HTTP URLs), exposes the top-k of their
    tools for the context set with `set_context`, plus `search_available_tools`, and forwards calls.
    """
    try:
        import anyio

        from ..mcp.downstream import load_config
        from ..mcp.proxy import serve
    except ImportError as exc:  # the SDK is an optional extra
        raise click.ClickException(
            f"the MCP proxy needs the 'mcp' extra: pip install 'learnloop[mcp]' ({exc})"
        ) from exc
    try:
        config = load_config(config_path)
        if k is not None or user is not None:
            config = type(config)(
                servers=config.servers,
                k=k if k is not None else config.k,
                user=user if user is not None else config.user,
                search_limit=config.search_limit,
            )
        anyio.run(
            lambda: serve(ctx.settings, config, transport="http" if http else "stdio", host=host, port=port, path=mount)
        )
    except LearnloopError as exc:
        raise click.ClickException(f"{exc.message} [{exc.code}]") from exc
    except KeyboardInterrupt:
        pass
