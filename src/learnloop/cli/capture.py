"""`learnloop gate` and `learnloop observe`: try the write gate and the observer on your own data."""

from __future__ import annotations

import json
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path

import click

from ..capture import quarantine
from ..capture.gate import WriteGate, gate_lines
from ..capture.quarantine import Quarantined
from ..loop import Loop
from .context import CliContext, echo_json, pass_context, run


@click.command()
@click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--allow-personal-data", is_flag=True, help="Do not refuse emails, phone numbers and ids.")
@click.option("--max-chars", type=click.IntRange(10), default=None, help="Longest text accepted.")
@click.option("--explain", is_flag=True, help="Name the detector that fired (library and plugin, or learnloop's rule).")
@click.option("--recheck", is_flag=True, help="Check every stored learning now; quarantine what the gate refuses.")
@click.option("--quarantined", is_flag=True, help="List the quarantined learnings waiting for review.")
@click.option("--release", "release_id", type=click.IntRange(1), help="Put a quarantined learning back (by id).")
@click.pass_context
def gate(
    click_ctx: click.Context,
    file: str | None,
    allow_personal_data: bool,
    max_chars: int | None,
    explain: bool,
    recheck: bool,
    quarantined: bool,
    release_id: int | None,
) -> None:
    """Print one JSON verdict per line of FILE ({"text", "allowed", "reason", "rule", "kind"}); nothing is stored.

    With --recheck, --quarantined or --release it works on the database instead: stored learnings the current
    gate refuses are quarantined (deprecated, listed for review, never retrieved) until a person releases them.
    """
    actions = sum(map(bool, (file, recheck, quarantined, release_id)))
    if actions != 1:
        raise click.UsageError("give a FILE, or one of --recheck, --quarantined, --release")
    if file is None:
        _quarantine(click_ctx.find_object(CliContext), recheck, release_id)
        return
    text = sys.stdin.read() if file == "-" else Path(file).read_text("utf-8")
    checker = WriteGate(personal_data=not allow_personal_data, max_chars=max_chars or WriteGate().max_chars)
    refused = 0
    for verdict in gate_lines(text.splitlines(), checker):
        refused += not verdict["allowed"]
        echo_json(verdict if explain else {k: v for k, v in verdict.items() if k != "detector"})
    click.echo(f"{refused} refused", err=True)


def _quarantine(ctx: CliContext | None, recheck: bool, release_id: int | None) -> None:
    """The database side of `gate`: recheck every tenant, or list / release in the tenant of `--tenant`."""
    if ctx is None:
        raise click.UsageError("no database settings")
    tenant = ctx.settings.tenant

    async def work(loop: Loop) -> list[Quarantined]:
        engine = loop.engine
        if recheck:
            return await quarantine.recheck(engine)
        if release_id is not None:
            return [await quarantine.release(engine, tenant, release_id)]
        return await quarantine.quarantined(engine, tenant)

    for row in run(ctx, work):
        echo_json(row.to_dict())


@click.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--user", help="User for turns that do not name one.")
@click.option("--session", default="replay", show_default=True, help="Session for turns that do not name one.")
@click.option(
    "--retrieve/--no-retrieve", default=True, show_default=True, help="Recall before each turn, as an agent would."
)
@pass_context
def observe(ctx: CliContext, file: str, user: str | None, session: str, retrieve: bool) -> None:
    """Replay a conversation log through the observer.

    FILE is JSON Lines, one turn per line: {"user": …, "session": …, "user_message": …,
    "assistant_message": …, "meta": {…}, "at": "2026-01-01T10:00:00Z"} (only user_message is required).
    """
    raw = sys.stdin.read() if file == "-" else Path(file).read_text("utf-8")
    turns = []
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            turn = json.loads(line)
            if not isinstance(turn, dict) or not isinstance(turn.get("user_message"), str):
                raise ValueError("needs a string user_message")
            if turn.get("at") is not None:
                turn["at"] = datetime.fromisoformat(str(turn["at"]))
        except ValueError as exc:
            raise click.ClickException(f"line {number}: {exc}") from exc
        turns.append(turn)

    async def work(loop: Loop) -> Counter[str]:
        tally: Counter[str] = Counter()
        with click.progressbar(turns, label="observing", file=sys.stderr) as bar:
            for turn in bar:
                who = turn.get("user", user)
                recalled = (
                    await loop.retrieve_context(who, turn["user_message"])
                    if retrieve and turn["user_message"].strip()
                    else None
                )
                result = await loop.observe(
                    turn["user_message"],
                    turn.get("assistant_message", ""),
                    user=who,
                    session=turn.get("session", session),
                    retrieved=recalled,
                    meta=turn.get("meta"),
                    at=turn.get("at"),
                )
                tally["turns"] += 1
                tally["duplicates"] += result.duplicate
                for saved in result.saved:
                    tally[saved.action.value] += 1
                if result.feedback is not None:
                    tally[f"feedback.{result.feedback.type}"] += 1
        return tally

    tally = run(ctx, work)
    if ctx.as_json:
        echo_json(dict(tally))
    else:
        click.echo(", ".join(f"{key} {value}" for key, value in sorted(tally.items())))
