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
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ...errors import LearnloopError
from ...models import Scope
from ..base import ApplyResult, FollowUp, Operation
from ..records import Counted, Touch
from .dialect import Connection, dialect_of
from .touch_batch import apply_touches, batchable
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
    failing (say, its learning was deleted meanwhile) does not undo the others, except consecutive retrievals,
    written together (`touch_batch`; one by one as the others if that batch fails). Returns the follow-ups of
    the `Bookkeeping` items, to commit later; `FollowUps` items in `batch` are committed here."""
    outcome = _Outcome()
    failures: tuple[type[Exception], ...] = (LearnloopError, *dialect_of(conn).errors)
    with write_transaction(conn):
        run: Deferred = []
        for item, future in batch:
            if isinstance(item, Bookkeeping) and _batchable(item):
                run.append((item, future))
                continue
            _apply_run(conn, run, now, outcome, failures)
            run = []
            _apply_one(conn, item, future, now, outcome, failures)
        _apply_run(conn, run, now, outcome, failures)
    for scope, touched in outcome.retrieved:
        touched_rows(scope, touched)
    for future, result in outcome.results:  # only after the commit: a result promises durability
        if isinstance(result, BaseException):
            future.set_exception(result)
        else:
            future.set_result(result)
    return outcome.later


@dataclass
class _Outcome:
    """What a flush settles after its commit, and the follow-ups it hands back."""

    results: list[tuple[Future[Any], ApplyResult | BaseException]] = field(default_factory=list)
    retrieved: list[tuple[Scope, list[Counted]]] = field(default_factory=list)
    later: Deferred = field(default_factory=list)


def _batchable(item: Bookkeeping) -> bool:
    """A retrieval's counters and event, whose follow-up (if any) waits for a pause."""
    return batchable(item.operations) and (item.then is None or _waits(item.operations))


def _apply_run(
    conn: Connection, run: Deferred, now: datetime, outcome: _Outcome, failures: tuple[type[Exception], ...]
) -> None:
    if len(run) < 2:
        for item, future in run:
            _apply_one(conn, item, future, now, outcome, failures)
        return
    conn.execute("SAVEPOINT bookkeeping")
    try:
        written = apply_touches(conn, [(item.scope, item.operations) for item, _ in run], now)
    except failures:
        conn.execute("ROLLBACK TO bookkeeping")
        conn.execute("RELEASE bookkeeping")
        for item, future in run:
            _apply_one(conn, item, future, now, outcome, failures)
        return
    conn.execute("RELEASE bookkeeping")
    for (item, future), (touched, events) in zip(run, written, strict=True):
        done = ApplyResult(learnings=[None] * len(item.operations), events=events)
        _counted(item, future, touched, done, outcome)


def _apply_one(
    conn: Connection,
    item: Any,
    future: Future[Any],
    now: datetime,
    outcome: _Outcome,
    failures: tuple[type[Exception], ...],
) -> None:
    conn.execute("SAVEPOINT bookkeeping")
    try:
        if isinstance(item, FollowUps):
            outcome.results.append((future, _followed_up(conn, item, now)))
        else:
            assert isinstance(item, Bookkeeping)
            touched: list[Counted] = []
            learnings, events = apply_operations(conn, item.scope, item.operations, now, touched=touched)
            done = ApplyResult(learnings=learnings, events=events)
            if item.then is not None and not _waits(item.operations):
                follow = FollowUps(item.scope, _followed(item.operations, touched), item.then, done)
                outcome.results.append((future, _followed_up(conn, follow, now)))
                outcome.retrieved.append((item.scope, touched))
            else:
                _counted(item, future, touched, done, outcome)
    except failures as exc:
        conn.execute("ROLLBACK TO bookkeeping")
        conn.execute("RELEASE bookkeeping")
        if isinstance(item, FollowUps):  # the counters it follows are committed: report them
            log.warning("a retrieval's promotions failed: %s", exc)
            outcome.results.append((future, item.done))
        else:
            outcome.results.append((future, exc))
        return
    conn.execute("RELEASE bookkeeping")


def _counted(item: Bookkeeping, future: Future[Any], touched: list[Counted], done: ApplyResult, out: _Outcome) -> None:
    """Settle a committed item whose follow-up (if any) waits for a pause."""
    if item.then is not None:
        # Whole rows only for what a follow-up may act on: most shown learnings are no longer candidates, and
        # most retrievals earn nothing.
        ids = _followed(item.operations, touched)
        if ids:
            out.later.append((FollowUps(item.scope, ids, item.then, done), future))
        else:
            out.results.append((future, done))
    else:
        out.results.append((future, done))
    out.retrieved.append((item.scope, touched))


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
