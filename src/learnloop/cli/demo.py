"""`learnloop demo`: seed 000's brewing flow in two sessions, the second in a new process."""

from __future__ import annotations

import os
import subprocess
import sys

import click

from ..loop import Loop
from ..models import Vocabulary
from .context import CliContext, pass_context, run

BREWING_VOCABULARY = Vocabulary.from_mapping(
    {
        "equipment": "Boil-off rates, dead space, mash tun efficiency",
        "technique": "Preferred mash temps, sparge method, water adjustments",
        "recipe": "Recipe feedback, style preferences, what worked/didn't",
        "ingredient": "Yeast performance, hop character, grain behavior",
        "correction": "When the assistant was wrong about something",
    }
)
USER = "brewer"
CORRECTION = "The boil-off was way less than you predicted, it's a Gen 1 Grainfather. I lost about 3.5 L in the hour."
LEARNING = "Grainfather Gen 1 boil-off rate is ~3.5 L/hr, lower than the typical 4-5 L/hr assumption"
QUESTION = "How much water will boil off in a 60 minute boil?"


@click.command()
@click.option("--session", type=click.IntRange(1, 2), help="Run only this session.")
@pass_context
def demo(ctx: CliContext, session: int | None) -> None:
    """Save a brewing learning in session 1; recall it in session 2 from a new process."""
    if session in (None, 1):
        _session_one(ctx)
    if session == 2:
        _session_two(ctx)
    if session is None:
        # A new process: nothing survives but the database file.
        command = [
            sys.executable,
            "-m",
            "learnloop",
            "--db",
            ctx.settings.db,
            "--tenant",
            ctx.settings.tenant,
        ]
        subprocess.run([*command, "demo", "--session", "2"], check=True)


def _session_one(ctx: CliContext) -> None:
    click.secho(f"── session 1 (process {os.getpid()}, database {ctx.settings.db}) ──", bold=True)
    click.echo(f"user: {CORRECTION}")
    arguments = {"learning": LEARNING, "category": "equipment", "source_context": "Pale Ale brew day"}
    click.echo(f"assistant → save_learning({arguments})")

    async def work(loop: Loop) -> str:
        await loop.set_vocabulary(BREWING_VOCABULARY)
        result = await loop.handle_tool_call(arguments, user=USER, session="demo-session-1")
        return result.content

    click.echo(f"tool result → {run(ctx, work)}")
    click.echo("assistant: Noted — I've saved that your Grainfather boil-off is ~3.5 L/hr.")


def _session_two(ctx: CliContext) -> None:
    click.secho(f"── session 2 (new process {os.getpid()}) ──", bold=True)
    click.echo(f"user: {QUESTION}")

    async def work(loop: Loop) -> str:
        result = await loop.retrieve_context(USER, QUESTION)
        return result.block or "(nothing recalled)"

    click.echo("learnloop → context for the model:")
    click.echo(run(ctx, work))
