"""`learnloop` — inspect, correct and move learnings from the shell."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

import click

from ..config import Settings
from ..importing import ImportReport, count_lines, file_lines
from ..loop import Loop
from .agent_worker import agent_worker
from .calibrate import calibrate_command
from .capture import gate, observe
from .context import CliContext, echo_json, pass_context, run
from .demo import demo
from .identities import identities
from .keys import keys
from .learnings import learnings
from .mcp import mcp
from .profile import profile
from .proxy import proxy
from .report import holdback, report
from .serve import serve
from .tenant import tenant
from .terminal import printable, safe_json_line


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--db", envvar="LEARNLOOP_DB", help="Database file (default: learnloop.db in this folder) or postgresql:// URL."
)
@click.option("--tenant", envvar="LEARNLOOP_TENANT", help="Tenant to act on (default: default).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output, one JSON value per line.")
@click.version_option(package_name="learnloop")
@click.pass_context
def cli(ctx: click.Context, db: str | None, tenant: str | None, as_json: bool) -> None:
    """learnloop: make LLM agents learn from use."""
    ctx.obj = CliContext(settings=Settings.from_env(db=db, tenant=tenant), as_json=as_json)


cli.add_command(demo)
cli.add_command(gate)
cli.add_command(calibrate_command)
cli.add_command(observe)
cli.add_command(learnings)
cli.add_command(serve)
cli.add_command(agent_worker)
cli.add_command(keys)
cli.add_command(mcp)
cli.add_command(proxy)
cli.add_command(tenant)
cli.add_command(report)
cli.add_command(holdback)
cli.add_command(profile)
cli.add_command(identities)


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
@click.option(
    "--from-line",
    type=click.IntRange(1),
    default=1,
    show_default=True,
    help="Start at this line: resume an interrupted import after the last line it reported.",
)
@pass_context
def import_command(ctx: CliContext, file: str, user: str | None, from_line: int) -> None:
    """Read learnings from a JSON Lines FILE written by `learnloop export` (- for stdin).

    The file is streamed and written in batches, with a progress bar. Bad lines are reported with their
    numbers and skipped (the exit code is then 1); lines already in the database are skipped, so running the
    same import again is safe."""
    total = None if file == "-" else count_lines(file)
    lines: Iterable[bytes] = sys.stdin.buffer if file == "-" else file_lines(file)
    handled = [from_line - 1]

    async def work(loop: Loop) -> ImportReport:
        with click.progressbar(length=total or 0, label="importing", file=sys.stderr, show_pos=True) as bar:

            def on_batch(report: ImportReport) -> None:
                handled[0] = report.last_line
                if total:
                    bar.update(max(0, report.last_line - from_line + 1 - bar.pos))

            return await loop.import_jsonl(lines, user=user, start_line=from_line, on_batch=on_batch)

    try:
        report = run(ctx, work)
    except KeyboardInterrupt:
        raise click.ClickException(
            f"interrupted; lines up to {handled[0]} are imported: resume with --from-line {handled[0] + 1}"
        ) from None
    if ctx.as_json:
        echo_json(report.model_dump(exclude={"ids"}))
    else:
        click.echo(
            f"imported {report.imported} of {report.read} "
            f"({report.skipped_existing} already there, {report.reembedded} re-embedded, {report.rejected} rejected)"
        )
    for rejected in report.rejected_lines[:20]:
        click.echo(printable(f"line {rejected.line}: {rejected.reason}"), err=True)
    if report.rejected:
        more = " (the first 20 shown)" if report.rejected > 20 else ""
        raise click.ClickException(f"{report.rejected} lines rejected{more}; the others were imported")


def main() -> None:
    cli(prog_name="learnloop")
