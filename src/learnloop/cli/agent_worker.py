"""`learnloop agent-worker`: the learning agent's workers without the HTTP service, for deployments that run
the API and the agent as separate processes on one PostgreSQL (or SQLite file)."""

from __future__ import annotations

import asyncio
import contextlib
import signal

import click

from ..errors import LearnloopError
from .context import CliContext, pass_context

__all__ = ["agent_worker"]


@click.command("agent-worker")
@click.option(
    "--poll", default=1.0, show_default=True, type=click.FloatRange(0.05, 60), help="Seconds between queue polls."
)
@pass_context
def agent_worker(ctx: CliContext, poll: float) -> None:
    """Work on the learning agent's queue until stopped (SIGTERM or Ctrl-C).

    Serves every open session of every tenant with packages waiting, whichever process queued them (run
    `learnloop serve --no-agent-workers` for API processes that only queue). Needs a learning model
    (LEARNLOOP_LLM or LEARNLOOP_LEARNING_MODEL). Several workers may run at once: a package is claimed by one.
    """
    try:
        asyncio.run(_work(ctx, poll))
    except LearnloopError as exc:
        raise click.ClickException(f"{exc.message} [{exc.code}]") from exc
    except KeyboardInterrupt:  # pragma: no cover - Ctrl-C before the handlers were installed
        pass


async def _work(ctx: CliContext, poll: float) -> None:
    loop = ctx.open_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):  # no signal handlers on this platform's loop
            asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    try:
        loop.agent.configure(poll_seconds=poll)
        started = await loop.agent.start()
        click.echo(
            f"learnloop agent worker on {ctx.settings.db} (tenant {ctx.settings.tenant}): "
            f"ready, {started} session(s) with work",
        )
        await stop.wait()
    finally:
        await loop.agent.stop()  # claimed packages go back to the queue untouched
        await loop.aclose()
