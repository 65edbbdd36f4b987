"""`learnloop` — inspect, correct and move learnings from the shell."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..config import Settings
from ..loop import Loop
from .capture import gate, observe
from .context import CliContext, echo_json, pass_context, run
from .demo import demo
from .keys import keys
from .learnings import learnings
from .mcp import mcp
from .proxy import proxy
from .serve import serve
from .terminal import safe_json_line


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--db", envvar="LEARNLOOP_DB", help="Database file (default: learnloop.db in this folder).")
@click.option("--tenant", envvar="LEARNLOOP_TENANT", help="Tenant to act on (default: default).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output, one JSON value per line.")
@click.version_option(package_name="learnloop")
@click.pass_context
def cli(ctx: click.Context, db: str | None, tenant: str | None, as_json: bool) -> None:
    """learnloop: make LLM agents learn from use."""
    ctx.obj = CliContext(settings=Settings.from_env(db=db, tenant=tenant), as_json=as_json)


cli.add_command(demo)
cli.add_command(gate)
cli.add_command(observe)
cli.add_command(learnings)
cli.add_command(serve)
cli.add_command(keys)
cli.add_command(mcp)
cli.add_command(proxy)


@cli.command()
@click.argument("user")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@pass_context
def forget(ctx: CliContext, user: str, yes: bool) -> None:
    """Remove every trace of USER (learnings, index entries, events)."""
    if not yes:
        click.confirm(f"Forget user {user!r} for good?", abort=True)

    async def work(loop: Loop) -> dict[str, int]:
        return await loop.forget(user)

    removed = run(ctx, work)
    if ctx.as_json:
        echo_json(removed)
    else:
        click.echo(f"forgot {user}: {removed.get('learnings', 0)} learnings, {removed.get('events', 0)} events")


@cli.command("export")
@click.option("--user", help="Only this user's learnings.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="File (default: stdout).")
@pass_context
def export_command(ctx: CliContext, user: str | None, output: Path | None) -> None:
    """Write learnings as JSON Lines (embeddings included)."""

    async def work(loop: Loop) -> int:
        if output is not None:
            return await loop.export_to(output, user=user)
        count = 0
        async for line in loop.export_jsonl(user=user):
            click.echo(safe_json_line(line))
            count += 1
        return count

    count = run(ctx, work)
    if output is not None:
        click.echo(f"exported {count} learnings to {output}", err=True)


@cli.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--user", help="Import every learning for this user.")
@pass_context
def import_command(ctx: CliContext, file: str, user: str | None) -> None:
    """Read learnings from a JSON Lines FILE written by `learnloop export` (- for stdin)."""
    lines = sys.stdin.read().splitlines() if file == "-" else Path(file).read_text("utf-8").splitlines()

    async def work(loop: Loop) -> dict[str, int]:
        report = await loop.import_jsonl(lines, user=user)
        return report.model_dump(exclude={"ids"})

    report = run(ctx, work)
    if ctx.as_json:
        echo_json(report)
    else:
        click.echo(
            f"imported {report['imported']} of {report['read']} "
            f"({report['skipped_existing']} already there, {report['reembedded']} re-embedded)"
        )


def main() -> None:
    cli(prog_name="learnloop")
