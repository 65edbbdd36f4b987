"""`learnloop identities`: one person across channels — resolve a channel's user, issue and redeem link codes,
unlink, and show a user with their channels."""

from __future__ import annotations

from typing import Any

import click

from ..channels.records import CanonicalUser
from ..loop import Loop
from .context import CliContext, echo_json, pass_context, run
from .terminal import printable

__all__ = ["identities"]


@click.group()
def identities() -> None:
    """Channel identities (Telegram, WhatsApp, web, API) and the canonical users they map to."""


def _emit(ctx: CliContext, value: Any, line: str) -> None:
    if ctx.as_json:
        echo_json(value.model_dump(mode="json"))
    else:
        click.echo(printable(line))


@identities.command("resolve")
@click.argument("channel")
@click.argument("channel_user_id")
@click.option("--user", default=None, help="Attach a new identity to this known user.")
@click.option("--username", default=None)
@click.option("--display-name", default=None)
@pass_context
def resolve(
    ctx: CliContext,
    channel: str,
    channel_user_id: str,
    user: str | None,
    username: str | None,
    display_name: str | None,
) -> None:
    """The canonical user of CHANNEL's CHANNEL_USER_ID (made on first contact)."""

    async def work(loop: Loop) -> Any:
        return await loop.identities.resolve(
            channel, channel_user_id, user=user, username=username, display_name=display_name
        )

    found = run(ctx, work)
    _emit(ctx, found, f"{found.user}{'  (new)' if found.created else ''}  interactions: {found.interaction_count}")


@identities.command("show")
@click.argument("user")
@pass_context
def show(ctx: CliContext, user: str) -> None:
    """Print USER with their channel identities."""

    async def work(loop: Loop) -> CanonicalUser:
        return await loop.identities.user(user)

    found = run(ctx, work)
    if ctx.as_json:
        echo_json(found.model_dump(mode="json"))
        return
    click.echo(
        printable(f"user: {found.user}  name: {found.display_name or '-'}  interactions: {found.interaction_count}")
    )
    click.echo(f"first seen: {found.first_seen:%Y-%m-%d %H:%M}  last seen: {found.last_seen:%Y-%m-%d %H:%M}")
    for i in found.identities:
        name = f"@{i.username}" if i.username else "-"
        click.echo(
            printable(
                f"  {i.channel:<10} {i.masked_id:<10} {name:<20} {i.id}  last active {i.last_active:%Y-%m-%d %H:%M}"
            )
        )
    if found.merged_from:
        click.echo(printable(f"merged from: {', '.join(found.merged_from)}"))


@identities.command("link-code")
@click.argument("channel")
@click.argument("channel_user_id")
@pass_context
def link_code(ctx: CliContext, channel: str, channel_user_id: str) -> None:
    """Issue a link code on CHANNEL's CHANNEL_USER_ID (short-lived, single use)."""

    async def work(loop: Loop) -> Any:
        return await loop.identities.issue_link_code(channel, channel_user_id)

    code = run(ctx, work)
    _emit(ctx, code, f"{code.code}  (for {code.user}, until {code.expires_at:%Y-%m-%d %H:%M:%S} UTC)")


@identities.command("link")
@click.argument("channel")
@click.argument("channel_user_id")
@click.argument("code")
@pass_context
def link(ctx: CliContext, channel: str, channel_user_id: str, code: str) -> None:
    """Redeem CODE on CHANNEL's CHANNEL_USER_ID: it joins the user that issued the code."""

    async def work(loop: Loop) -> Any:
        return await loop.identities.redeem_link_code(channel, channel_user_id, code)

    done = run(ctx, work)
    merged = f"; merged {done.merged_from} ({done.learnings_moved} learnings)" if done.merged_from else ""
    _emit(ctx, done, f"{'linked to' if done.linked else 'already'} {done.user}{merged}")


@identities.command("unlink")
@click.argument("channel")
@click.argument("channel_user_id")
@pass_context
def unlink(ctx: CliContext, channel: str, channel_user_id: str) -> None:
    """Give CHANNEL's CHANNEL_USER_ID a fresh user of its own; what was learned stays with the old one."""

    async def work(loop: Loop) -> Any:
        return await loop.identities.unlink(channel, channel_user_id)

    done = run(ctx, work)
    _emit(ctx, done, f"{done.channel} now {done.user} (was {done.previous_user})")


@identities.command("finish-merges")
@pass_context
def finish_merges(ctx: CliContext) -> None:
    """Finish merges of linked users that a crash or an error cut short (the service also does it by itself)."""

    async def work(loop: Loop) -> int:
        return await loop.identities.finish_merges()

    done = run(ctx, work)
    if ctx.as_json:
        echo_json({"finished": done})
    else:
        click.echo(f"finished {done} merge{'' if done == 1 else 's'}")
