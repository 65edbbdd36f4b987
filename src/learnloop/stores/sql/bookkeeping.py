"""Bookkeeping writes nobody waits for (a retrieval's hits and streaks, then the promotions they earn), gathered
by the store's thread and committed together (see `stores.worker.ConnectionWorker.defer`).

A retrieval's counters commit with the others gathered; the promotions they earn (`Bookkeeping.then` of an
item whose `Touch` names `follow_from`) are handed back as a `FollowUps` item, which the worker commits at the
next pause in the searches or before a job that could observe it. A busy stretch of retrievals then writes narrow
counter rows only; the row updates, change-log entries and events of promotions (most of a flush's time in a new
user's first retrievals) wait until the searches pause. Losing them to a crash loses nothing: the counters are
committed, and the next retrieval that shows the learning decides its promotion again on them. A follow-up is
not run at all when no touched learning reached a threshold."""

from __future__ import annotations

import logging
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

__all__ = ["Bookkeeping", "FollowUps", "apply_bookkeeping"]

log = logging.getLogger("learnloop.store")

# Called with each committed item's scope and the counters its `Touch` operations changed.
Touched = Callable[[Scope, list[Counted]], None]
Deferred = list[tuple[Any, Future[Any]]]


@dataclass(frozen=True)
class Bookkeeping:
    scope: Scope
    operations: list[Operation]
    then: FollowUp | None


@dataclass(frozen=True)
class FollowUps:
    """`then` of a committed `Bookkeeping` item, for the learnings of `ids` as they are when it runs; its future
    is settled with `done` (what the item committed) and what the follow-up commits."""

    scope: Scope
    ids: list[int]
    then: FollowUp
    done: ApplyResult


def apply_bookkeeping(conn: Connection, batch: Deferred, now: datetime, touched_rows: Touched) -> Deferred:
    """Commit gathered bookkeeping writes in one transaction; each runs in its own savepoint so that one
    failing (say, its learning was deleted meanwhile) does not undo the others. Returns the follow-ups of the
    `Bookkeeping` items, to commit later; `FollowUps` items in `batch` are committed here."""
    results: list[tuple[Future[Any], ApplyResult | BaseException]] = []
    retrieved: list[tuple[Scope, list[Counted]]] = []
    later: Deferred = []
    failures: tuple[type[Exception], ...] = (LearnloopError, *dialect_of(conn).errors)
    with write_transaction(conn):
        for item, future in batch:
            conn.execute("SAVEPOINT bookkeeping")
            try:
                if isinstance(item, FollowUps):
                    results.append((future, _followed_up(conn, item, now)))
                else:
                    assert isinstance(item, Bookkeeping)
                    touched: list[Counted] = []
                    learnings, events = apply_operations(conn, item.scope, item.operations, now, touched=touched)
                    done = ApplyResult(learnings=learnings, events=events)
                    if item.then is None:
                        results.append((future, done))
                    elif _waits(item.operations):
                        # Whole rows only for what a follow-up may act on: most shown learnings are no longer
                        # candidates, and most retrievals earn nothing.
                        ids = _followed(item.operations, touched)
                        if ids:
                            later.append((FollowUps(item.scope, ids, item.then, done), future))
                        else:
                            results.append((future, done))
                    else:
                        follow = FollowUps(item.scope, _followed(item.operations, touched), item.then, done)
                        results.append((future, _followed_up(conn, follow, now)))
                    retrieved.append((item.scope, touched))
            except failures as exc:
                conn.execute("ROLLBACK TO bookkeeping")
                conn.execute("RELEASE bookkeeping")
                if isinstance(item, FollowUps):  # the counters it follows are committed: report them
                    log.warning("a retrieval's promotions failed: %s", exc)
                    results.append((future, item.done))
                else:
                    results.append((future, exc))
                continue
            conn.execute("RELEASE bookkeeping")
    for scope, touched in retrieved:
        touched_rows(scope, touched)
    for future, outcome in results:  # only after the commit: a result promises durability
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)
    return later


def _followed_up(conn: Connection, item: FollowUps, now: datetime) -> ApplyResult:
    more = list(item.then(candidate_rows(conn, item.scope, item.ids)))
    if not more:
        return item.done
    learnings, events = apply_operations(conn, item.scope, more, now)
    return ApplyResult(learnings=[*item.done.learnings, *learnings], events=[*item.done.events, *events])


def _waits(operations: list[Operation]) -> bool:
    """A retrieval's follow-up (its `Touch` names the promotion thresholds) waits for a pause; any other runs in
    the item's transaction."""
    return any(isinstance(op, Touch) and op.follow_from for op in operations)


def _followed(operations: list[Operation], touched: list[Counted]) -> list[int]:
    """The touched learnings a follow-up is given (see `Touch.follow_from`)."""
    least = next((op.follow_from for op in operations if isinstance(op, Touch) and op.follow_from), None)
    if least is None:
        return [c.id for c in touched]
    return [c.id for c in touched if c.streak >= least[0] or c.hits >= least[1]]
