"""`learnloop learnings …`: the review workflow from a terminal."""

from __future__ import annotations

import click

from ..loop import Loop
from ..models import Learning, Page, Status
from .context import CliContext, echo_json, format_learning, pass_context, run
from .terminal import printable


@click.group()
def learnings() -> None:
    """List, inspect and correct learnings."""


@learnings.command("list")
@click.option("--user", help="Only this user's learnings.")
@click.option("--category", help="Only this category.")
@click.option("--status", type=click.Choice([s.value for s in Status]), help="Only this status.")
@click.option("--text", help="Only learnings matching these words.")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 1000))
@click.option("--offset", default=0, type=click.IntRange(0))
@pass_context
def list_command(
    ctx: CliContext,
    user: str | None,
    category: str | None,
    status: str | None,
    text: str | None,
    limit: int,
    offset: int,
) -> None:
    """Newest first."""

    async def work(loop: Loop) -> Page[Learning]:
        return await loop.list(owner=user, category=category, status=status, text=text, limit=limit, offset=offset)

    page = run(ctx, work)
    if ctx.as_json:
        for learning in page.items:
            echo_json(learning.model_dump(mode="json"))
        return
    if not page.items:
        click.echo("no learnings yet")
        return
    for learning in page.items:
        click.echo(format_learning(learning))
    shown_to = page.offset + len(page.items)
    click.echo(f"({page.offset + 1}-{shown_to} of {page.total})", err=True)


@learnings.command()
@click.argument("learning_id", type=int)
@pass_context
def show(ctx: CliContext, learning_id: int) -> None:
    """One learning with all its metadata and history."""

    async def work(loop: Loop) -> tuple[Learning, list[str]]:
        learning = await loop.get(learning_id)
        history = await loop.history(learning_id)
        lines = [
            f"  {e.at:%Y-%m-%d %H:%M:%S}  {e.action:<11} by {e.actor}" + (f" — {e.reason}" if e.reason else "")
            for e in history
        ]
        return learning, lines

    learning, history = run(ctx, work)
    if ctx.as_json:
        echo_json(learning.model_dump(mode="json"))
        return
    click.echo(format_learning(learning, long=True))
    click.echo("  history")
    for line in history:
        click.echo(printable(line))


@learnings.command()
@click.argument("learning_id", type=int)
@click.option("--text", help="New text (re-embedded; version + 1).")
@click.option("--category", help="New category from the vocabulary.")
@click.option("--topic", help="New topic.")
@click.option("--tags", help="Comma-separated tags (replaces the list).")
@pass_context
def edit(
    ctx: CliContext,
    learning_id: int,
    text: str | None,
    category: str | None,
    topic: str | None,
    tags: str | None,
) -> None:
    """Change a learning."""
    tag_list = None if tags is None else [t for t in tags.split(",") if t.strip()]

    async def work(loop: Loop) -> Learning:
        return await loop.update(learning_id, text=text, category=category, topic=topic, tags=tag_list)

    _print(ctx, run(ctx, work))


@learnings.command("rm")
@click.argument("learning_id", type=int)
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@pass_context
def remove(ctx: CliContext, learning_id: int, yes: bool) -> None:
    """Delete a learning (and its index entries)."""
    if not yes:
        click.confirm(f"Delete learning #{learning_id}?", abort=True)

    async def work(loop: Loop) -> Learning:
        return await loop.delete(learning_id)

    learning = run(ctx, work)
    if ctx.as_json:
        echo_json({"deleted": learning.id})
    else:
        click.echo(f"deleted #{learning.id}")


@learnings.command()
@click.argument("learning_id", type=int)
@click.option("--reason", help="Why (kept in the history).")
@pass_context
def promote(ctx: CliContext, learning_id: int, reason: str | None) -> None:
    """Mark a learning verified."""

    async def work(loop: Loop) -> Learning:
        return await loop.promote(learning_id, reason=reason)

    _print(ctx, run(ctx, work))


@learnings.command()
@click.argument("learning_id", type=int)
@click.option("--reason", help="What confirmed it (kept in the history).")
@pass_context
def confirm(ctx: CliContext, learning_id: int, reason: str | None) -> None:
    """Say a learning is right: a candidate becomes verified, a verified one gains confidence."""

    async def work(loop: Loop) -> Learning:
        return await loop.confirm(learning_id, reason=reason)

    _print(ctx, run(ctx, work))


@learnings.command()
@click.argument("learning_id", type=int)
@click.option("--reason", required=True, help="Why it is wrong or obsolete (kept in the history).")
@pass_context
def deprecate(ctx: CliContext, learning_id: int, reason: str) -> None:
    """Stop a learning from ever being retrieved again."""

    async def work(loop: Loop) -> Learning:
        return await loop.deprecate(learning_id, reason)

    _print(ctx, run(ctx, work))


@learnings.command()
@click.argument("learning_id", type=int)
@click.option("--status", type=click.Choice(["candidate", "verified"]), default="candidate", show_default=True)
@pass_context
def restore(ctx: CliContext, learning_id: int, status: str) -> None:
    """Bring back a deprecated learning."""

    async def work(loop: Loop) -> Learning:
        return await loop.restore(learning_id, status=status)

    _print(ctx, run(ctx, work))


def _print(ctx: CliContext, learning: Learning) -> None:
    if ctx.as_json:
        echo_json(learning.model_dump(mode="json"))
    else:
        click.echo(format_learning(learning))
