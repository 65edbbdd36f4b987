"""`learnloop report` (does memory help? both arms compared) and `learnloop holdback` (run the experiment)."""

from __future__ import annotations

from pathlib import Path

import click

from ..holdback import HoldbackReport, HoldbackSettings
from ..holdback.chart import report_png, report_svg
from ..loop import Loop
from .context import CliContext, echo_json, pass_context, run
from .terminal import printable

__all__ = ["holdback", "report"]


def _figure(value: float | None, unit: str = "") -> str:
    if value is None:
        return "–"
    return f"{value * 100:+.1f}" if unit == "points" else f"{value:.3f}"


def _print(report: HoldbackReport) -> None:
    click.echo(printable(f"tenant {report.tenant}: {report.verdict}"))
    for experiment in report.experiments:
        title = "holdback" if experiment.experiment == "holdback" else "A/A check (both arms get memory)"
        users = experiment.users
        click.echo(f"\n{title}: {users['memory']} users with memory, {users['holdback']} held back")
        click.echo(f"  {'outcome':<24}{'memory':>9}{'holdback':>10}{'diff':>9}   95% interval")
        for o in experiment.outcomes:
            interval = "–" if o.low is None or o.high is None else f"{o.low:+.3f} to {o.high:+.3f}"
            click.echo(
                f"  {o.label:<24}{_figure(o.memory):>9}{_figure(o.holdback):>10}"
                f"{'–' if o.difference is None else f'{o.difference:+.3f}':>9}   {interval}  {o.effect}"
            )
        click.echo("  learning curve (feedback score by the user's turn number):")
        for p in experiment.curve:
            click.echo(f"    turn {p.turns:<6} memory {_figure(p.memory):>7}   holdback {_figure(p.holdback):>7}")
        click.echo("  by day (feedback score; share of turns corrected):")
        for d in experiment.series:
            click.echo(
                f"    {d.t:%Y-%m-%d}  memory {_figure(d.memory):>7} {_figure(d.memory_corrections):>7}   "
                f"holdback {_figure(d.holdback):>7} {_figure(d.holdback_corrections):>7}"
            )
        click.echo(printable(f"  verdict: {experiment.verdict}"))


@click.command("report")
@click.option("--days", type=click.FloatRange(min=0, min_open=True), help="Only turns begun in this many days.")
@click.option("--namespace", help="Only turns of this namespace.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Bootstrap seed.")
@click.option("--resamples", type=click.IntRange(100, 20_000), default=2_000, show_default=True)
@click.option("--svg", "svg_path", type=click.Path(dir_okay=False, path_type=Path), help="Write the chart as SVG.")
@click.option("--png", "png_path", type=click.Path(dir_okay=False, path_type=Path), help="Write the chart as PNG.")
@pass_context
def report(
    ctx: CliContext,
    days: float | None,
    namespace: str | None,
    seed: int,
    resamples: int,
    svg_path: Path | None,
    png_path: Path | None,
) -> None:
    """Does memory help? The holdback arm against the memory arm, with 95% intervals and a verdict."""

    async def work(loop: Loop) -> HoldbackReport:
        return await loop.holdback.report(days=days, namespace=namespace, seed=seed, resamples=resamples)

    found = run(ctx, work)
    if svg_path is not None:
        svg_path.write_text(report_svg(found), encoding="utf-8")
    if png_path is not None:
        try:
            report_png(found, png_path)
        except Exception as exc:  # matplotlib missing, or the file cannot be written
            raise click.ClickException(str(exc)) from exc
    if ctx.as_json:
        echo_json(found.model_dump(mode="json"))
    else:
        _print(found)


def _show(ctx: CliContext, settings: list[HoldbackSettings], pins: dict[str, str]) -> None:
    if ctx.as_json:
        echo_json({"settings": [s.__dict__ | {"updated_at": str(s.updated_at)} for s in settings], "pins": pins})
        return
    if not settings:
        click.echo("no holdback experiment: every user gets memory")
    for s in settings:
        state = "on" if s.enabled else "off"
        where = f"namespace {s.namespace}" if s.namespace else "tenant default"
        click.echo(printable(f"{where}: {state}, mode {s.mode}, share {s.share:.0%}, salt {s.salt!r}"))
    for user, arm in sorted(pins.items()):
        click.echo(printable(f"pinned: {user} -> {arm}"))


@click.group()
def holdback() -> None:
    """Run the holdback experiment: a share of users gets no memory, so `learnloop report` can compare."""


@holdback.command("show")
@pass_context
def show(ctx: CliContext) -> None:
    """The settings and the pinned users."""

    async def work(loop: Loop) -> tuple[list[HoldbackSettings], dict[str, str]]:
        return await loop.holdback.all_settings(), dict(await loop.holdback.pins())

    _show(ctx, *run(ctx, work))


@holdback.command("on")
@click.option("--share", type=float, default=0.1, show_default=True, help="Share of users held back.")
@click.option("--aa", is_flag=True, help="A/A check: both arms get memory; the report must find no effect.")
@click.option("--salt", default="", help="A new salt draws the arms afresh.")
@click.option("--namespace", help="Settings for this namespace only.")
@pass_context
def switch_on(ctx: CliContext, share: float, aa: bool, salt: str, namespace: str | None) -> None:
    """Start (or change) the experiment."""

    async def work(loop: Loop) -> tuple[list[HoldbackSettings], dict[str, str]]:
        await loop.holdback.configure(share=share, mode="aa" if aa else "holdback", salt=salt, namespace=namespace)
        return await loop.holdback.all_settings(), dict(await loop.holdback.pins())

    _show(ctx, *run(ctx, work))


@holdback.command("off")
@click.option("--namespace", help="Only this namespace's settings.")
@pass_context
def switch_off(ctx: CliContext, namespace: str | None) -> None:
    """Every user gets memory again (outcomes so far stay in the report)."""

    async def work(loop: Loop) -> tuple[list[HoldbackSettings], dict[str, str]]:
        await loop.holdback.switch_off(namespace=namespace)
        return await loop.holdback.all_settings(), dict(await loop.holdback.pins())

    _show(ctx, *run(ctx, work))


@holdback.command("pin")
@click.argument("user")
@click.argument("arm", type=click.Choice(["memory", "holdback", "none"]))
@pass_context
def pin(ctx: CliContext, user: str, arm: str) -> None:
    """Keep USER in ARM whatever the hash says (`none` removes the pin)."""

    async def work(loop: Loop) -> tuple[list[HoldbackSettings], dict[str, str]]:
        if arm == "none":
            await loop.holdback.unpin(user)
        else:
            await loop.holdback.pin(user, arm)
        return await loop.holdback.all_settings(), dict(await loop.holdback.pins())

    _show(ctx, *run(ctx, work))
