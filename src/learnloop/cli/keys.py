"""`learnloop keys create|list|revoke`: API keys of the service, per tenant (`--tenant` on the group)."""

from __future__ import annotations

import click

from ..loop import Loop
from ..models import utcnow
from ..stores.service import KeyRecord
from .context import CliContext, echo_json, pass_context, run
from .terminal import printable

__all__ = ["keys"]


def _row(record: KeyRecord) -> dict[str, object]:
    return {
        "key_id": record.key_id,
        "tenant": record.tenant,
        "role": record.role,
        "user": record.user,
        "name": record.name,
        "created_at": record.created_at.isoformat(),
        "last_used_at": record.last_used_at.isoformat() if record.last_used_at else None,
        "revoked_at": record.revoked_at.isoformat() if record.revoked_at else None,
    }


@click.group()
def keys() -> None:
    """Create, list and revoke API keys (stored hashed; a key is shown once, when created)."""


@keys.command("create")
@click.option(
    "--role",
    type=click.Choice(["admin", "app", "user"]),
    default="app",
    show_default=True,
    help="admin: everything in the tenant; app: any user of the tenant; user: only --user's data.",
)
@click.option("--user", help="The user a user-bound key acts for (required with --role user).")
@click.option("--name", default="", help="A label to recognise the key by.")
@pass_context
def create(ctx: CliContext, role: str, user: str | None, name: str) -> None:
    """Create a key for the tenant and print it (only this once)."""
    from ..server.keys import issue_key
    from ..server.state import service_store_for

    async def work(loop: Loop) -> tuple[str, KeyRecord]:
        await loop.engine.ensure_started()
        issued = issue_key(loop.tenant, role, user=user, name=name)
        await service_store_for(loop).create_key(issued.record)
        return issued.key, issued.record

    key, record = run(ctx, work)
    if ctx.as_json:
        echo_json({**_row(record), "key": key})
        return
    who = f" for user {record.user}" if record.user else ""
    click.echo(f"created {record.role} key {record.key_id} in tenant {record.tenant}{who}; it is shown only once:")
    click.echo(key)


@keys.command("list")
@click.option("--all-tenants", is_flag=True, help="Every tenant's keys, not only --tenant's.")
@pass_context
def list_keys(ctx: CliContext, all_tenants: bool) -> None:
    """List keys (never their secrets)."""
    from ..server.state import service_store_for

    async def work(loop: Loop) -> list[KeyRecord]:
        await loop.engine.ensure_started()
        return await service_store_for(loop).list_keys(None if all_tenants else loop.tenant)

    records = run(ctx, work)
    if ctx.as_json:
        for record in records:
            echo_json(_row(record))
        return
    if not records:
        click.echo("no keys yet: learnloop keys create --role admin")
    for r in records:
        state = f"revoked {r.revoked_at:%Y-%m-%d}" if r.revoked_at else "active"
        used = f"last used {r.last_used_at:%Y-%m-%d %H:%M}" if r.last_used_at else "never used"
        who = f" user={r.user}" if r.user else ""
        label = f" {r.name!r}" if r.name else ""
        click.echo(printable(f"{r.key_id}  {r.tenant}  {r.role}{who}{label}  {state}, {used}"))


@keys.command("revoke")
@click.argument("key_id")
@pass_context
def revoke(ctx: CliContext, key_id: str) -> None:
    """Revoke the key KEY_ID (the part after ll_ and before the next _). Servers stop accepting it within 2 s."""
    from ..server.state import service_store_for

    async def work(loop: Loop) -> bool:
        await loop.engine.ensure_started()
        return await service_store_for(loop).revoke_key(key_id, utcnow())

    if not run(ctx, work):
        raise click.ClickException(f"no active key {key_id!r}")
    click.echo(f"revoked {key_id}")
