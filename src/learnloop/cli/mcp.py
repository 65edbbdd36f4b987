"""`learnloop mcp`: serve learnings to an MCP client (stdio for a local client, streamable HTTP for remote ones)."""

from __future__ import annotations

import functools

import anyio
import click

from ..errors import LearnloopError
from ..models import DEFAULT_NAMESPACE
from .context import CliContext, pass_context


@click.command("mcp")
@click.option(
    "--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True, help="How clients connect."
)
@click.option("--tenant", help="Tenant to serve (default: the global --tenant, LEARNLOOP_TENANT or 'default').")
@click.option(
    "--user", envvar="LEARNLOOP_USER", help="User whose learnings are saved and recalled (default: none = shared)."
)
@click.option(
    "--namespace",
    envvar="LEARNLOOP_NAMESPACE",
    default=DEFAULT_NAMESPACE,
    show_default=True,
    help="Vocabulary namespace for save_learning's categories.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: address to listen on.")
@click.option(
    "--port",
    default=8766,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="HTTP: port (0 = any free; 8765 is the REST service's).",
)
@click.option("--path", default="/mcp", show_default=True, help="HTTP: endpoint path.")
@click.option(
    "--key",
    envvar="LEARNLOOP_MCP_KEY",
    help="HTTP: a shared API key for the configured tenant and user, sent as 'Authorization: Bearer <key>'. "
    "Keys from `learnloop keys create` are accepted too.",
)
@pass_context
def mcp(
    ctx: CliContext,
    transport: str,
    tenant: str | None,
    user: str | None,
    namespace: str,
    host: str,
    port: int,
    path: str,
    key: str | None,
) -> None:
    """Serve learnings as MCP tools: save_learning, recall, list_learnings, deprecate_learning, confirm_learning.

    \b
    stdio (a client starts it):  learnloop --db ~/learnloop.db mcp --user alice
    HTTP:                        learnloop mcp --transport http --key "$LEARNLOOP_MCP_KEY"
    """
    try:
        # Imported here: the MCP SDK is an optional extra and the rest of the CLI must work without it.
        from ..mcp.server_run import serve
    except ImportError as exc:
        raise click.ClickException(f"learnloop mcp needs the MCP SDK: pip install 'learnloop[mcp]' ({exc})") from exc
    settings = ctx.settings if not tenant else ctx.settings.with_(tenant=tenant)
    if not path.startswith("/"):
        raise click.BadParameter("must start with /", param_hint="--path")
    run = functools.partial(
        serve,
        settings,
        transport="http" if transport == "http" else "stdio",
        user=user or None,
        namespace=namespace,
        host=host,
        port=port,
        path=path,
        key=key or None,
    )
    try:
        anyio.run(run)
    except LearnloopError as exc:
        raise click.ClickException(f"{exc.message} [{exc.code}]") from exc
    except KeyboardInterrupt:
        pass
