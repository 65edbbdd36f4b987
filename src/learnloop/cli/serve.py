"""`learnloop serve`: the REST API, the live event stream and the review pages in one process."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket

import click

from ..errors import ConfigurationError, LearnloopError
from .context import CliContext, pass_context

__all__ = ["serve"]


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, envvar="LEARNLOOP_HOST", help="Address to bind.")
@click.option(
    "--port", default=8765, show_default=True, type=click.IntRange(0, 65535), envvar="LEARNLOOP_PORT", help="Port."
)
@click.option("--no-first-key", is_flag=True, help="Do not create an admin key when the tenant has none.")
@click.option("--secure-cookies", is_flag=True, help="Mark the login cookie Secure (serve behind HTTPS).")
@click.option("--poll", default=1.0, show_default=True, type=click.FloatRange(0.05, 60), help="Event-log poll, s.")
@click.option(
    "--agent-workers/--no-agent-workers",
    default=True,
    show_default=True,
    envvar="LEARNLOOP_AGENT_WORKERS",
    help="Run the learning agent's workers here; off: only queue (workers run in `learnloop agent-worker`).",
)
@click.option(
    "--responder",
    default=None,
    envvar="LEARNLOOP_CHANNEL_RESPONDER",
    help="Who answers Telegram, WhatsApp and web-chat messages: llm, http:<url> or python:<module>:<function>.",
)
@click.option(
    "--log-level",
    default="info",
    show_default=True,
    type=click.Choice(["debug", "info", "warning", "error"]),
    help="Learning events are logged as JSON lines at info.",
)
@pass_context
def serve(
    ctx: CliContext,
    host: str,
    port: int,
    no_first_key: bool,
    secure_cookies: bool,
    poll: float,
    agent_workers: bool,
    responder: str | None,
    log_level: str,
) -> None:
    """Serve the API (/api, OpenAPI at /openapi.json) and the pages (/knowledge, /activity, /metrics).

    On the first run (no admin key for the tenant yet) an admin API key is created and printed once.
    """
    try:
        asyncio.run(_serve(ctx, host, port, no_first_key, secure_cookies, poll, agent_workers, responder, log_level))
    except LearnloopError as exc:
        raise click.ClickException(f"{exc.message} [{exc.code}]") from exc
    except KeyboardInterrupt:  # pragma: no cover - Ctrl-C before the server installed its handlers
        pass


async def _serve(
    ctx: CliContext,
    host: str,
    port: int,
    no_first_key: bool,
    secure_cookies: bool,
    poll: float,
    agent_workers: bool,
    responder: str | None,
    log_level: str,
) -> None:
    import uvicorn

    from ..channels.responders import responder_from_spec
    from ..channels.settings import ChannelSettings
    from ..server import ServiceOptions, create_app
    from ..server.keys import Role, issue_key
    from ..server.logs import configure_json_logging
    from ..server.state import service_store_for
    from ..server.wire import MAX_REQUEST_HEAD_BYTES

    configure_json_logging(getattr(logging, log_level.upper()))
    # The port first: a first admin key created by a run that then cannot listen would be shown to no one,
    # and the next run creates none because one exists.
    sock = _listen_socket(host, port)
    loop = ctx.open_loop()
    if not agent_workers:
        loop.agent.configure(run_workers=False)  # interactions are queued for `learnloop agent-worker`
    try:
        await loop.engine.ensure_started()
        store = service_store_for(loop)
        first_key = None
        if not no_first_key and not await store.has_active_admin(loop.tenant):
            first_key = issue_key(loop.tenant, Role.ADMIN, name="first run")
            await store.create_key(first_key.record)
        # Load the embedding model now, so the first request does not wait for it.
        await loop.engine.embedder.embed(["warm up"], purpose="query")
        options = ServiceOptions(
            poll_interval=poll,
            secure_cookies=secure_cookies,
            channels=ChannelSettings.from_env(),
            responder=responder_from_spec(responder, llm=loop.engine.llm, timeout=ctx.settings.request_timeout)
            if responder
            else None,
        )
        app = create_app(loop, options=options)
        config = uvicorn.Config(
            app,
            host=host,
            port=port,
            log_level=log_level,
            timeout_graceful_shutdown=2,
            lifespan="on",
            h11_max_incomplete_event_size=MAX_REQUEST_HEAD_BYTES,
        )
        server = uvicorn.Server(config)
        announce = asyncio.create_task(_announce(server, ctx, host, first_key.key if first_key else None))
        try:
            await server.serve(sockets=[sock])
        finally:
            announce.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await announce
    finally:
        sock.close()
        await loop.aclose()


def _listen_socket(host: str, port: int) -> socket.socket:
    """The bound socket uvicorn will serve on, or a `ConfigurationError` saying the address is taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigurationError(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}); is something else serving there? "
            "Pick another port with --port"
        ) from exc
    return sock


async def _announce(server: object, ctx: CliContext, host: str, key: str | None) -> None:
    import uvicorn

    assert isinstance(server, uvicorn.Server)
    while not server.started:  # noqa: ASYNC110 - uvicorn exposes only this flag, no event to wait on
        await asyncio.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1] if server.servers else server.config.port
    shown = "localhost" if host in ("127.0.0.1", "0.0.0.0", "::") else host
    url = f"http://{shown}:{port}"
    click.echo("")
    click.echo(f"learnloop is serving {ctx.settings.db} (tenant {ctx.settings.tenant}) at {url}")
    click.echo(f"  knowledge {url}/knowledge   activity {url}/activity   metrics {url}/metrics")
    click.echo(f"  API       {url}/api   OpenAPI {url}/openapi.json")
    if key is not None:
        click.echo("")
        click.echo(f"First run: created an admin API key for tenant {ctx.settings.tenant!r}. It is shown only once:")
        click.echo(f"  {key}")
        click.echo("Log in to the pages with it, or send 'Authorization: Bearer <key>' to the API.")
        click.echo("More keys: learnloop keys create --role app | --role user --user <id>")
    click.echo("")
