"""`learnloop tenant export|import`: move the tenant of `--tenant` whole between databases."""

from __future__ import annotations

from pathlib import Path

import click

from ..loop import Loop
from ..tenant_archive import TenantImport, export_tenant, import_tenant
from .context import CliContext, echo_json, pass_context, run


@click.group("tenant")
def tenant() -> None:
    """Export or import a whole tenant: learnings with versions, links and provenance, vocabularies, tool
    knowledge, the learning agent's files and knowledge pages, events."""


@tenant.command("export")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--keys", is_flag=True, help="Include the tenant's API keys (left out by default).")
@pass_context
def export_command(ctx: CliContext, file: Path, keys: bool) -> None:
    """Write the tenant of --tenant to FILE (JSON Lines)."""

    async def work(loop: Loop) -> dict[str, int]:
        return await export_tenant(loop.engine, loop.tenant, file, keys=keys)

    counts = run(ctx, work)
    if ctx.as_json:
        echo_json(counts)
    else:
        click.echo(f"exported {sum(counts.values())} rows of tenant {ctx.settings.tenant!r} to {file}")


@tenant.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--regate", is_flag=True, help="Recheck the imported learnings with this database's write gate.")
@pass_context
def import_command(ctx: CliContext, file: Path, regate: bool) -> None:
    """Read a tenant archive written by `learnloop tenant export` (the tenant named in it), all or nothing."""

    async def work(loop: Loop) -> TenantImport:
        with file.open("rb") as lines:
            return await import_tenant(loop.engine, lines, regate=regate)

    report = run(ctx, work)
    if ctx.as_json:
        echo_json({"tenant": report.tenant, "rows": report.rows, "quarantined": len(report.quarantined)})
    else:
        click.echo(
            f"imported {sum(report.rows.values())} rows of tenant {report.tenant!r}"
            + (f"; {len(report.quarantined)} quarantined by the gate" if regate else "")
        )
