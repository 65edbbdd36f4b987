"""Bookkeeping writes nobody waits for (a retrieval's hits and streaks, the promotions they earn), gathered
by the store's thread and committed together (see `stores.worker.ConnectionWorker.defer`)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ...errors import LearnloopError
from ...models import Learning, Scope
from ..base import ApplyResult, FollowUp, Operation
from .dialect import Connection, dialect_of
from .transactions import write_transaction
from .writes import apply_operations

__all__ = ["Bookkeeping", "apply_bookkeeping"]

# Called with each committed item's scope and the rows its `Touch` operations changed.
Touched = Callable[[Scope, list[Learning]], None]


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
    retrieved: list[tuple[Scope, list[Learning]]] = []
    failures: tuple[type[Exception], ...] = (LearnloopError, *dialect_of(conn).errors)
    with write_transaction(conn):
        for item, future in batch:
            assert isinstance(item, Bookkeeping)
            conn.execute("SAVEPOINT bookkeeping")
            try:
                touched: list[Learning] = []
                learnings, events = apply_operations(conn, item.scope, item.operations, now, touched=touched)
                if item.then is not None:
                    more = list(item.then(touched))
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
