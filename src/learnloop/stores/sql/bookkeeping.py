"""Bookkeeping writes nobody waits for (a retrieval's hits and streaks, the promotions they earn), gathered
by the store's thread and committed together (see `stores.worker.ConnectionWorker.defer`)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ...errors import LearnloopError
from ...models import Scope
from ..base import ApplyResult, FollowUp, Operation
from ..records import Counted, Touch
from .dialect import Connection, dialect_of
from .transactions import write_transaction
from .writes import apply_operations, candidate_rows

__all__ = ["Bookkeeping", "apply_bookkeeping"]

# Called with each committed item's scope and the counters its `Touch` operations changed.
Touched = Callable[[Scope, list[Counted]], None]


@dataclass(frozen=True)
class Bookkeeping:
    scope: Scope
    operations: list[Operation]
    then: FollowUp | None


def apply_bookkeeping(
    conn: Connection, batch: list[tuple[Any, Future[Any]]], now: datetime, touched_rows: Touched
) -> None:
    """Commit gathered bookkeeping writes in one transaction; each runs in its own savepoint so that one
    failing (say, its learning was deleted meanwhile) does not undo the others."""
    results: list[tuple[Future[Any], ApplyResult | BaseException]] = []
    retrieved: list[tuple[Scope, list[Counted]]] = []
    failures: tuple[type[Exception], ...] = (LearnloopError, *dialect_of(conn).errors)
    with write_transaction(conn):
        for item, future in batch:
            assert isinstance(item, Bookkeeping)
            conn.execute("SAVEPOINT bookkeeping")
            try:
                touched: list[Counted] = []
                learnings, events = apply_operations(conn, item.scope, item.operations, now, touched=touched)
                if item.then is not None:
                    # Whole rows only for what a follow-up may act on: most shown learnings are no longer candidates.
                    fresh = candidate_rows(conn, item.scope, _followed(item.operations, touched))
                    more = list(item.then(fresh))
                    if more:
                        extra_learnings, extra_events = apply_operations(conn, item.scope, more, now)
                        learnings, events = learnings + extra_learnings, events + extra_events
            except failures as exc:
                conn.execute("ROLLBACK TO bookkeeping")
                conn.execute("RELEASE bookkeeping")
                results.append((future, exc))
                continue
            conn.execute("RELEASE bookkeeping")
            retrieved.append((item.scope, touched))
            results.append((future, ApplyResult(learnings=learnings, events=events)))
    for scope, touched in retrieved:
        touched_rows(scope, touched)
    for future, outcome in results:  # only after the commit: a result promises durability
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)


def _followed(operations: list[Operation], touched: list[Counted]) -> list[int]:
    """The touched learnings a follow-up is given (see `Touch.follow_from`)."""
    least = next((op.follow_from for op in operations if isinstance(op, Touch) and op.follow_from), None)
    if least is None:
        return [c.id for c in touched]
    return [c.id for c in touched if c.streak >= least[0] or c.hits >= least[1]]
