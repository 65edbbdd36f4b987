"""What every command shares: the settings read once from flags and environment, and output helpers."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from ..config import Settings
from ..errors import LearnloopError
from ..factory import build_loop
from ..lifecycle import effective_confidence
from ..loop import Loop
from ..models import Learning, utcnow
from ..sync import run_sync
from .terminal import printable, safe_json

__all__ = ["CliContext", "echo_json", "format_learning", "pass_context", "run"]

T = TypeVar("T")


@dataclass
class CliContext:
    settings: Settings
    as_json: bool

    def open_loop(self) -> Loop:
        return build_loop(self.settings)


pass_context = click.make_pass_decorator(CliContext)


def run(ctx: CliContext, work: Callable[[Loop], Coroutine[Any, Any, T]]) -> T:
    """Open the loop, run one coroutine against it, close it; learnloop errors become clean messages."""

    async def main() -> T:
        loop = ctx.open_loop()
        try:
            return await work(loop)
        finally:
            await loop.aclose()

    try:
        return run_sync(main())
    except LearnloopError as exc:
        raise click.ClickException(printable(f"{exc.message} [{exc.code}]")) from exc


def echo_json(value: Any) -> None:
    click.echo(safe_json(value))


def _confidence(learning: Learning) -> str:
    now = effective_confidence(learning, utcnow())
    decayed = f", {now:.2f} now: a preference fades unless restated" if abs(now - learning.confidence) >= 0.005 else ""
    return f"{learning.confidence:.2f}{decayed}"


def format_learning(learning: Learning, *, long: bool = False) -> str:
    owner = learning.user or "(global)"
    head = (
        f"#{learning.id} [{learning.status.value}/{learning.label}] {learning.text}"
        if not long
        else f"#{learning.id} {learning.text}"
    )
    if not long:
        return printable(f"{head}  — {owner}, {learning.updated_at:%Y-%m-%d}")
    rows = [
        head,
        f"  status      {learning.status.value} (confidence {_confidence(learning)})",
        f"  category    {learning.category or '-'}   type {learning.type.value}   namespace {learning.namespace}",
        f"  user        {owner}   origin {learning.origin.value}",
        f"  hits        {learning.hits}   streak {learning.streak}   failures {learning.failures}",
        f"  version     {learning.version}" + (f" (supersedes #{learning.supersedes})" if learning.supersedes else ""),
        f"  created     {learning.created_at:%Y-%m-%d %H:%M:%S} UTC",
        f"  updated     {learning.updated_at:%Y-%m-%d %H:%M:%S} UTC",
    ]
    if learning.topic or learning.tags:
        rows.append(f"  topic/tags  {learning.topic or '-'} / {', '.join(learning.tags) or '-'}")
    if learning.source.context or learning.source.session:
        rows.append(f"  source      {learning.source.context or ''} (session {learning.source.session or '-'})")
    return "\n".join(printable(row) for row in rows)
