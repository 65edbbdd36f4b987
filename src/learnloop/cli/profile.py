"""`learnloop profile`: a user's profile (seed 001's user memory) — show it, teach it a message, set what it
says by hand, forget it."""

from __future__ import annotations

import click

from ..loop import Loop
from ..profile import KINDS, ProfileEdit, UserProfile
from .context import CliContext, echo_json, pass_context, run
from .terminal import printable

__all__ = ["profile"]


@click.group()
def profile() -> None:
    """A user's profile: favourite metrics, preferred time range, query types, patterns."""


def _print(ctx: CliContext, found: UserProfile) -> None:
    if ctx.as_json:
        echo_json(found.model_dump(mode="json"))
        return
    click.echo(f"user: {printable(found.user)}  interactions: {found.interactions}")
    click.echo(f"favourite metrics: {printable(', '.join(found.favourite_metrics) or '-')}")
    click.echo(f"preferred time range: {printable(found.preferred_time_range or '-')}")
    types = ", ".join(f"{s.value} ({s.share:.0%})" for s in found.query_types)
    click.echo(f"common query types: {printable(types or '-')}")
    click.echo(f"usual complexity: {found.complexity or '-'}")
    if found.overrides:
        click.echo(f"set by hand: {printable(', '.join(sorted(found.overrides)))}")
    for p in found.patterns:
        click.echo(f"  {p.kind:<11} {printable(p.value):<40} {p.share:>5.0%}  seen {p.count}x, weight {p.weight:.2f}")


@profile.command("show")
@click.argument("user")
@pass_context
def show(ctx: CliContext, user: str) -> None:
    """Print USER's profile."""

    async def work(loop: Loop) -> UserProfile:
        return await loop.profiles.get(user)

    _print(ctx, run(ctx, work))


@profile.command("learn")
@click.argument("user")
@click.argument("message")
@pass_context
def learn(ctx: CliContext, user: str, message: str) -> None:
    """Count MESSAGE into USER's profile, as a turn does, and print how it was read."""

    async def work(loop: Loop) -> dict[str, object]:
        analysis = await loop.profiles.learn(user, message)
        return {
            "coarse": analysis.coarse,
            "fine": analysis.fine,
            "complexity": analysis.complexity,
            "metrics": list(analysis.metrics),
            "time_range": analysis.time_range,
        }

    read = run(ctx, work)
    if ctx.as_json:
        echo_json(read)
    else:
        click.echo(" ".join(f"{k}={printable(str(v))}" for k, v in read.items()))


@profile.command("set")
@click.argument("user")
@click.option("--metric", "metrics", multiple=True, help="A favourite metric (repeat for several).")
@click.option("--time-range", help="The preferred time range, e.g. last_7_days.")
@click.option(
    "--clear",
    type=click.Choice(["favourite_metrics", "preferred_time_range"]),
    multiple=True,
    help="Give a field back to what the patterns say.",
)
@pass_context
def set_command(
    ctx: CliContext, user: str, metrics: tuple[str, ...], time_range: str | None, clear: tuple[str, ...]
) -> None:
    """Set what USER's profile says by hand (it wins over the learned patterns)."""
    fields: dict[str, object] = {name: None for name in clear}
    if metrics:
        fields["favourite_metrics"] = list(metrics)
    if time_range is not None:
        fields["preferred_time_range"] = time_range
    if not fields:
        raise click.UsageError("give --metric, --time-range or --clear")

    async def work(loop: Loop) -> UserProfile:
        return await loop.profiles.edit(user, ProfileEdit.model_validate(fields))

    _print(ctx, run(ctx, work))


@profile.command("forget")
@click.argument("user")
@click.option("--kind", type=click.Choice(KINDS), help="Only this kind of pattern.")
@click.option("--value", "values", multiple=True, help="Only these values of --kind.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@pass_context
def forget(ctx: CliContext, user: str, kind: str | None, values: tuple[str, ...], yes: bool) -> None:
    """Forget USER's profile (or, with --kind, one kind of pattern in it)."""
    if values and kind is None:
        raise click.UsageError("--value needs --kind")
    if not yes:
        click.confirm(f"Forget {'the ' + kind + ' patterns of' if kind else 'the profile of'} {user!r}?", abort=True)

    async def work(loop: Loop) -> int:
        return await loop.profiles.forget(user, kind=kind, values=list(values) or None)

    removed = run(ctx, work)
    if ctx.as_json:
        echo_json({"removed": removed})
    else:
        click.echo(f"removed {removed} rows")
