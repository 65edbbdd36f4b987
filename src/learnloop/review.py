"""What a person does with dedupe's doubts: the review queue, resolving a link, undoing a merge or replacement.

Dedupe keeps both learnings when it cannot show they are one fact, and links them (`LearningLink`). A person
resolves a link four ways — keep both, keep the newer, keep the older, merge them into one text — and can undo
any merge or replacement dedupe made on its own: the replaced learning comes back, and a merge is split back
into the original learning and the text that was merged into it. Every step is one transaction with its
events, so history shows both states.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from .capture.dedupe import merged_text
from .capture.write import check_gate, normalise_text
from .engine import Engine
from .errors import ConflictError, NotFound, ValidationError
from .governance import get
from .lifecycle import check_transition
from .models import EventAction, Learning, LearningLink, Page, Resolution, Scope, Status
from .simhash import simhash64_hex
from .stores.base import (
    NEW_ID,
    AddSource,
    CarryLinks,
    EventDraft,
    Insert,
    NewLearning,
    Operation,
    ResolveLink,
    Update,
)

__all__ = ["ReviewItem", "queue", "resolve", "undo"]


class ReviewItem(BaseModel):
    """One open link with both learnings, newer first: what the review page shows side by side."""

    link: LearningLink
    new: Learning
    old: Learning


async def queue(engine: Engine, scope: Scope, *, offset: int = 0, limit: int = 50) -> Page[ReviewItem]:
    """Open links in the scope, newest first, with both learnings."""
    if not 1 <= limit <= 500 or offset < 0:
        raise ValidationError("limit must be within 1..500 and offset at least 0", field="limit")
    await engine.ensure_started()
    page = await engine.store.links(scope, open_only=True, offset=offset, limit=limit)
    ids = {i for link in page.items for i in (link.learning_id, link.other_id)}
    learnings = {learning.id: learning for learning in await engine.store.get_many(scope, sorted(ids))}
    items = [
        ReviewItem(link=link, new=learnings[link.learning_id], old=learnings[link.other_id])
        for link in page.items
        if link.learning_id in learnings and link.other_id in learnings
    ]
    return Page(items=items, total=page.total, offset=offset, limit=limit)


async def resolve(
    engine: Engine,
    scope: Scope,
    link_id: int,
    resolution: Resolution | str,
    *,
    text: str | None = None,
    actor: str = "person",
    reason: str | None = None,
) -> list[Learning]:
    """Settle a link; returns the learnings live afterwards (the merged one, for `merge`)."""
    try:
        decision = Resolution(resolution)
    except ValueError as exc:
        allowed = ", ".join(r.value for r in Resolution)
        raise ValidationError(f"resolution must be one of: {allowed}", field="resolution") from exc
    await engine.ensure_started()
    link = await engine.store.get_link(scope, link_id)
    if link is None:
        raise NotFound(f"link {link_id} not found", id=link_id)
    if not link.open:
        raise ConflictError(f"link {link_id} is already resolved ({link.resolution})", id=link_id)
    new, old = await get(engine, scope, link.learning_id), await get(engine, scope, link.other_id)
    for learning in (new, old):
        if learning.status is Status.DEPRECATED:
            raise ConflictError(f"learning {learning.id} is no longer live; nothing to resolve", id=learning.id)
    why = reason or f"review: {decision.value.replace('_', ' ')}"
    close = ResolveLink(link_id, decision, EventDraft(actor=actor, action=EventAction.RESOLVED, reason=why))
    ops: list[Operation] = [close]
    if decision is Resolution.KEEP_NEW:
        ops += [_retire(old, new.id, actor, f"{why}: replaced by #{new.id}"), CarryLinks(old.id, new.id)]
    elif decision is Resolution.KEEP_OLD:
        ops += [_retire(new, old.id, actor, f"{why}: #{old.id} kept instead"), CarryLinks(new.id, old.id)]
    elif decision is Resolution.MERGE:
        ops = [close, *await _merge_pair(engine, scope, old, new, text, actor, why)]
    result = await engine.apply(scope, ops)
    changed = {learning.id: learning for learning in result.learnings if learning is not None}
    live = [changed.get(x.id, x) for x in (new, old)] + [x for x in changed.values() if x.id not in (new.id, old.id)]
    return [learning for learning in live if learning.status is not Status.DEPRECATED]


async def undo(engine: Engine, scope: Scope, learning_id: int, *, actor: str = "person") -> list[Learning]:
    """Undo the merge or replacement that made `learning_id`: the learning it replaced is live again with
    the status it had, and a merged text is split back into the original and the text merged into it."""
    learning = await get(engine, scope, learning_id)
    if learning.supersedes is None or learning.status is Status.DEPRECATED:
        raise ConflictError(f"learning {learning_id} did not replace a learning that can be brought back")
    previous = await get(engine, scope, learning.supersedes)
    if previous.status is not Status.DEPRECATED or previous.superseded_by != learning.id:
        raise ConflictError(f"learning {previous.id} is no longer the one #{learning_id} replaced")
    before = await _status_before_replacement(engine, scope, previous)
    check_transition(Status.DEPRECATED, before, actor)
    sources = await engine.store.provenance(scope, learning_id)
    merged_in = [p for p in sources if p.action == "merged"]
    ops: list[Operation] = [
        Update(
            previous.id,
            {"status": before, "superseded_by": None, "status_reason": f"restored: undid #{learning_id}"},
            EventDraft(actor=actor, action=EventAction.UNDONE, reason=f"undid the change that made #{learning_id}"),
            expect_revision=previous.revision,
        )
    ]
    if merged_in and merged_in[-1].text:
        # A merge: the merged row goes, and the text merged in comes back as a learning of its own.
        incoming = merged_in[-1]
        split = f"merge undone: split back into #{previous.id} and the text merged into it"
        ops += [
            Update(
                learning_id,
                {"status": Status.DEPRECATED, "status_reason": split},
                EventDraft(actor=actor, action=EventAction.UNDONE, reason=split),
                expect_revision=learning.revision,
            ),
            CarryLinks(learning_id, previous.id),
        ]
        text = incoming.text or ""
        record = NewLearning(
            tenant=scope.tenant,
            user=learning.user,
            text=text,
            vector=await engine.embed_one(text),
            embedding_model=engine.embedder.model_id,
            simhash64=simhash64_hex(text),
            namespace=learning.namespace,
            category=learning.category,
            type=learning.type,
            topic=learning.topic,
            tags=tuple(learning.tags),
            status=learning.status,
            confidence=learning.confidence,
            origin=incoming.origin,
            source=incoming.source,
            status_reason=f"split from #{learning_id} when its merge was undone",
        )
        ops += [
            Insert(record, EventDraft(actor=actor, action=EventAction.CREATED, reason=split)),
            AddSource("created", incoming.origin, incoming.source, text=text),
        ]
    else:
        again = f"replacement undone: #{previous.id} is live again beside it"
        ops.append(
            Update(
                learning_id,
                {"supersedes": None, "status_reason": again},
                EventDraft(actor=actor, action=EventAction.UNDONE, reason=again),
                expect_revision=learning.revision,
            )
        )
    result = await engine.apply(scope, ops)
    return [x for x in result.learnings if x is not None and x.status is not Status.DEPRECATED]


async def _status_before_replacement(engine: Engine, scope: Scope, learning: Learning) -> Status:
    """The status a learning had before it was merged away or superseded (from its history)."""
    for event in reversed(await engine.store.history(scope, learning.id)):
        if event.after and event.after.get("status") == Status.DEPRECATED.value and event.before:
            return Status(event.before.get("status", Status.CANDIDATE.value))
    return Status.CANDIDATE


def _retire(learning: Learning, successor: int, actor: str, reason: str) -> Update:
    check_transition(learning.status, Status.DEPRECATED, actor)
    return Update(
        learning.id,
        {"status": Status.DEPRECATED, "superseded_by": successor, "status_reason": reason},
        EventDraft(actor=actor, action=EventAction.DEPRECATED, reason=reason),
        expect_revision=learning.revision,
    )


async def _merge_pair(
    engine: Engine, scope: Scope, old: Learning, new: Learning, text: str | None, actor: str, why: str
) -> list[Operation]:
    """One learning stating both, replacing both (their counters summed, their sources kept)."""
    merged = normalise_text(text) if text is not None else merged_text(old.text, new.text)
    check_gate(engine, merged)
    status = Status.VERIFIED if Status.VERIFIED in (old.status, new.status) else Status.CANDIDATE
    record = NewLearning(
        tenant=scope.tenant,
        user=old.user,
        text=merged,
        vector=await engine.embed_one(merged),
        embedding_model=engine.embedder.model_id,
        simhash64=simhash64_hex(merged),
        namespace=old.namespace,
        category=old.category or new.category,
        type=old.type,
        topic=old.topic or new.topic,
        tags=tuple(dict.fromkeys([*old.tags, *new.tags])),
        status=status,
        confidence=max(old.confidence, new.confidence),
        origin=old.origin,
        source=old.source,
        supersedes=old.id,
        version=max(old.version, new.version) + 1,
        hits=old.hits + new.hits,
        created_at=old.created_at,
        status_reason=f"merged from #{old.id} and #{new.id} by review",
    )
    data: dict[str, Any] = {"merged": [old.id, new.id]}
    retire = {"status": Status.DEPRECATED, "superseded_by": NEW_ID}
    return [
        Insert(record, EventDraft(actor=actor, action=EventAction.MERGED, reason=why, data=data)),
        AddSource("merged", new.origin, None, copy_from=old.id),
        AddSource("merged", new.origin, None, copy_from=new.id),
        *(
            Update(
                x.id,
                {**retire, "status_reason": f"{why}: merged into a new learning"},
                EventDraft(actor=actor, action=EventAction.MERGED, reason=why),
                expect_revision=x.revision,
            )
            for x in (old, new)
        ),
        CarryLinks(old.id),
        CarryLinks(new.id),
    ]
