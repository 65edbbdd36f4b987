"""Merging two canonical users after their identities were linked (seed 001 §8.8): the redeemer's former user
joins the issuer's.

Each learning of the merged-away user is saved again for the joined user through the governed write (the gate
and dedupe apply: it may be created, merged into what the joined user knew, or skipped as known, which keeps it
among that learning's sources); the original is then deprecated naming its successor and why, and moves to the
joined user as history. Those are two transactions per learning; run again after a crash, the save finds the
text already known and skips, so nothing is lost or doubled. The rest (history, counters, profile) then moves
in one transaction (`stores.sql.user_merge`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..capture.write import SaveAction, SaveRequest, save
from ..errors import ConflictError, NotFound
from ..models import EventAction, Learning, Scope, Status
from ..stores.base import EventDraft, ListQuery, Update

if TYPE_CHECKING:
    from ..engine import Engine
    from ..stores.identities import IdentityStore

__all__ = ["MERGE_ACTOR", "MergeReport", "merge_users"]

MERGE_ACTOR = "system:link"
_PAGE = 200


@dataclass
class MergeReport:
    moved: int = 0
    left: list[int] = field(default_factory=list)  # refused by the gate as it is now: kept where they were
    into: str = ""  # the user everything went to (the end of the chain when the one asked for joined another)
    done: bool = False  # False: a turn of the merged-away user is still running; a later pass finishes
    finished: bool = False  # this call finished it (another process's pass may have, meanwhile)


# Each round follows a change the last one met (a new end of the chain, a learning made meanwhile); more than a
# few in one call means merges keep arriving: the next pass (`IdentityService.finish_merges`) goes on.
_ROUNDS = 4


async def merge_users(
    engine: Engine, store: IdentityStore, tenant: str, from_user: str, into: str, half_life_days: float
) -> MergeReport:
    report = MergeReport(into=into)
    for _ in range(_ROUNDS):
        report.into = await store.merge_target(tenant, from_user)
        if report.into == from_user:  # never merged (or unlinked meanwhile): nothing to move
            report.into, report.done = into, True
            return report
        await _move_learnings(engine, tenant, from_user, report)
        step = await store.finish_merge(tenant, from_user, report.into, half_life_days, report.left)
        if step.done or step.waiting:
            report.done, report.finished = step.done, step.finished
            return report
    return report


async def _move_learnings(engine: Engine, tenant: str, from_user: str, report: MergeReport) -> None:
    admin = Scope(tenant=tenant)
    seen = set(report.left)
    while True:
        # What could not move stays first in the listing: read past it.
        query = ListQuery(user=from_user, order="oldest", offset=len(report.left), limit=_PAGE)
        page = await engine.store.list_learnings(admin, query)
        todo = [x for x in page.items if x.user == from_user and x.id not in seen]
        if not todo:
            return
        for learning in todo:
            seen.add(learning.id)
            if await _move(engine, tenant, learning, report.into):
                report.moved += 1
            else:
                report.left.append(learning.id)


async def _move(engine: Engine, tenant: str, learning: Learning, into: str) -> bool:
    reason = f"merged into user {into} (channels linked)"
    changes: dict[str, object] = {"user": into}
    if learning.status is not Status.DEPRECATED:
        request = SaveRequest(
            text=learning.text,
            user=into,
            namespace=learning.namespace,
            category=learning.category,
            type=learning.type,
            topic=learning.topic,
            tags=learning.tags,
            status=learning.status,
            confidence=learning.confidence,
            origin=learning.origin,
            source=learning.source,
            actor=MERGE_ACTOR,
            at=learning.said_at or learning.created_at,
        )
        result = await save(engine, Scope(tenant=tenant, user=into), request)
        successor = result.learning.id if result.learning is not None else result.related_id
        if result.action is SaveAction.REFUSED or successor is None:
            return False
        changes |= {"status": Status.DEPRECATED, "superseded_by": successor, "status_reason": reason}
    action = EventAction.SUPERSEDED if "status" in changes else EventAction.EDITED
    op = Update(
        id=learning.id,
        changes=changes,
        event=EventDraft(actor=MERGE_ACTOR, action=action, reason=reason),
        expect_revision=learning.revision,
    )
    try:
        await engine.apply(Scope(tenant=tenant), [op])
    except (ConflictError, NotFound):
        # Changed or deleted meanwhile: the text was saved for the joined user; the next run reads it afresh.
        return False
    return True
