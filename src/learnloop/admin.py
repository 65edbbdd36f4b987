"""`TenantAdmin`: one tenant's stored learnings as the people who look after them see them.

Look up, list, edit and govern learnings, read their history and the event log, manage vocabularies, and
export or import them. `Loop` is a `TenantAdmin` that also captures, recalls and runs the tool and agent layers;
the admin half lives here so that the facade's module stays about the application's side.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import AsyncIterator, Iterable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal

from . import governance, review
from .engine import Engine
from .errors import ValidationError
from .importing import ImportReport, ImportSettings, OnBatch, file_lines, import_lines
from .models import (
    DEFAULT_NAMESPACE,
    Event,
    EventAction,
    Learning,
    LearningLink,
    LearningType,
    Origin,
    Page,
    Provenance,
    Resolution,
    Scope,
    Status,
    Vocabulary,
    choice,
)
from .portability import export_lines
from .stores.base import EventDraft, ListQuery
from .textcheck import check_text

__all__ = ["Order", "TenantAdmin"]

Order = Literal["newest", "oldest", "updated"]


class TenantAdmin:
    """Read, govern, export and import one tenant's learnings; `user=None` acts on the whole tenant."""

    def __init__(self, engine: Engine, tenant: str = "default") -> None:
        self._engine = engine
        self.tenant = Scope(tenant=tenant).tenant

    @property
    def engine(self) -> Engine:
        return self._engine

    def scope(self, user: str | None) -> Scope:
        return Scope(tenant=self.tenant, user=user)

    # -- admin ---------------------------------------------------------------------------------------

    async def get(self, learning_id: int, *, user: str | None = None) -> Learning:
        return await governance.get(self._engine, self.scope(user), learning_id)

    async def list(
        self,
        *,
        user: str | None = None,
        owner: str | None = None,
        global_only: bool = False,
        category: str | None = None,
        status: Status | str | None = None,
        namespace: str | None = None,
        origin: Origin | str | None = None,
        text: str | None = None,
        order: Order = "newest",
        offset: int = 0,
        limit: int = 50,
    ) -> Page[Learning]:
        """Learnings visible to `user` (all of the tenant's when None), newest first, paginated.
        `owner` narrows a tenant-wide listing to one user's learnings."""
        if not 1 <= limit <= 1000 or offset < 0:
            raise ValidationError("limit must be within 1..1000 and offset at least 0", field="limit")
        await self._engine.ensure_started()
        query = ListQuery(
            user=owner,
            global_only=global_only,
            namespace=namespace,
            category=category,
            status=None if status is None else choice(Status, status, "status"),
            origin=None if origin is None else choice(Origin, origin, "origin"),
            text=text,
            order=order,
            offset=offset,
            limit=limit,
        )
        return await self._engine.store.list_learnings(self.scope(user), query)

    async def list_recent(self, user: str, limit: int = 10) -> builtins.list[Learning]:
        page = await self.list(user=user, owner=user, limit=limit, order="updated")
        return page.items

    async def update(
        self,
        learning_id: int,
        *,
        user: str | None = None,
        text: str | None = None,
        category: str | None = None,
        topic: str | None = None,
        tags: Sequence[str] | None = None,
        type: LearningType | str | None = None,
        actor: str = "person",
        reason: str | None = None,
    ) -> Learning:
        return await governance.update(
            self._engine,
            self.scope(user),
            learning_id,
            actor=actor,
            text=text,
            category=category,
            topic=topic,
            tags=tags,
            type=type,
            reason=reason,
        )

    async def delete(
        self, learning_id: int, *, user: str | None = None, actor: str = "person", reason: str | None = None
    ) -> Learning:
        """Remove a learning, its full-text and vector index entries; its history stays in the log."""
        return await governance.delete(self._engine, self.scope(user), learning_id, actor, reason)

    async def promote(
        self, learning_id: int, *, user: str | None = None, actor: str = "person", reason: str | None = None
    ) -> Learning:
        return await governance.promote(self._engine, self.scope(user), learning_id, actor, reason)

    async def promote_last_candidate(
        self, user: str, *, actor: str = "feedback", reason: str | None = None
    ) -> Learning | None:
        return await governance.promote_last_candidate(self._engine, self.scope(user), actor, reason)

    async def deprecate(
        self, learning_id: int, reason: str, *, user: str | None = None, actor: str = "person"
    ) -> Learning:
        return await governance.change_status(
            self._engine, self.scope(user), learning_id, Status.DEPRECATED, actor, reason
        )

    async def restore(
        self,
        learning_id: int,
        *,
        user: str | None = None,
        status: Status | str = Status.CANDIDATE,
        actor: str = "person",
        reason: str | None = None,
    ) -> Learning:
        """Bring a deprecated learning back. Only a person may; a learning that is not deprecated is an
        `InvalidTransition`."""
        return await governance.restore(
            self._engine, self.scope(user), learning_id, choice(Status, status, "status"), actor, reason
        )

    async def confirm(
        self, learning_id: int, *, user: str | None = None, actor: str = "person", reason: str | None = None
    ) -> Learning:
        """Someone says it is right: a candidate is promoted, a verified learning gains confidence."""
        return await governance.confirm(self._engine, self.scope(user), learning_id, actor, reason)

    async def report_failure(
        self, learning_ids: Sequence[int], *, user: str | None, reason: str, actor: str = "feedback"
    ) -> builtins.list[Learning]:
        """Negative feedback on learnings that were used: demote verified ones, deprecate candidates."""
        return await governance.report_failure(self._engine, self.scope(user), learning_ids, actor, reason)

    async def purge_deprecated(
        self, older_than: timedelta | datetime, *, user: str | None = None, actor: str = "person"
    ) -> builtins.list[int]:
        cutoff = older_than if isinstance(older_than, datetime) else self._engine.clock() - older_than
        return await governance.purge_deprecated(self._engine, self.scope(user), cutoff, actor)

    async def history(self, learning_id: int, *, user: str | None = None) -> builtins.list[Event]:
        await governance.get(self._engine, self.scope(user), learning_id)
        return await self._engine.store.history(self.scope(user), learning_id)

    async def events(self, *, after: int = 0, limit: int = 100, user: str | None = None) -> builtins.list[Event]:
        await self._engine.ensure_started()
        return await self._engine.store.events(self.scope(user), after=after, limit=limit)

    async def provenance(self, learning_id: int, *, user: str | None = None) -> builtins.list[Provenance]:
        """Every source a learning came from (several, once things were merged into it), oldest first."""
        await governance.get(self._engine, self.scope(user), learning_id)
        return await self._engine.store.provenance(self.scope(user), learning_id)

    # -- review: what dedupe left for a person -------------------------------------------------------

    async def review_queue(
        self, *, user: str | None = None, offset: int = 0, limit: int = 50
    ) -> Page[review.ReviewItem]:
        """Open possible duplicates and conflicts, newest first, each with both learnings."""
        return await review.queue(self._engine, self.scope(user), offset=offset, limit=limit)

    async def links(
        self, learning_id: int, *, user: str | None = None, open_only: bool = False
    ) -> builtins.list[LearningLink]:
        """The review links of one learning, open and resolved."""
        await governance.get(self._engine, self.scope(user), learning_id)
        page = await self._engine.store.links(self.scope(user), open_only=open_only, learning_id=learning_id, limit=500)
        return page.items

    async def resolve(
        self,
        link_id: int,
        resolution: Resolution | str,
        *,
        user: str | None = None,
        text: str | None = None,
        actor: str = "person",
        reason: str | None = None,
    ) -> builtins.list[Learning]:
        """Settle a possible duplicate or conflict: keep_both, keep_new, keep_old, or merge (into `text`, or
        one text stating both). Returns what is live afterwards."""
        return await review.resolve(
            self._engine, self.scope(user), link_id, resolution, text=text, actor=actor, reason=reason
        )

    async def undo(
        self, learning_id: int, *, user: str | None = None, actor: str = "person"
    ) -> builtins.list[Learning]:
        """Undo the merge or replacement that made this learning: what it replaced is live again, and a merge is
        split back into both texts. Returns what is live afterwards."""
        return await review.undo(self._engine, self.scope(user), learning_id, actor=actor)

    # -- vocabulary ----------------------------------------------------------------------------------

    async def vocabulary(self, namespace: str = DEFAULT_NAMESPACE) -> Vocabulary:
        return await self._engine.vocabulary(self.tenant, namespace)

    async def set_vocabulary(self, vocabulary: Vocabulary | dict[str, str], *, actor: str = "person") -> Vocabulary:
        if isinstance(vocabulary, dict):
            vocabulary = Vocabulary.from_mapping(vocabulary)
        await self._engine.ensure_started()
        draft = EventDraft(
            actor=actor,
            action=EventAction.VOCABULARY_CHANGED,
            data={"namespace": vocabulary.namespace, "categories": vocabulary.names},
        )
        event = await self._engine.store.put_vocabulary(self.tenant, vocabulary, draft)
        self._engine.forget_vocabulary(self.tenant, vocabulary.namespace)
        self._engine.bus.publish([event])
        return vocabulary

    async def vocabularies(self) -> builtins.list[Vocabulary]:
        await self._engine.ensure_started()
        return await self._engine.store.list_vocabularies(self.tenant)

    # -- portability ---------------------------------------------------------------------------------

    async def export_jsonl(self, *, user: str | None = None) -> AsyncIterator[str]:
        """One JSON line per learning (embedding included), in id order."""
        async for line in export_lines(self._engine, self.scope(user)):
            yield line

    async def export_to(self, path: str | Path, *, user: str | None = None) -> int:
        """Write `export_jsonl` to a file; returns the number of learnings written."""
        lines = [line async for line in self.export_jsonl(user=user)]
        text = "".join(line + "\n" for line in lines)
        try:
            await asyncio.to_thread(Path(path).write_text, text, encoding="utf-8")
        except OSError as exc:  # the caller's path: a missing folder, no permission, a name too long
            raise ValidationError(f"cannot write {str(path)[:200]!r}: {exc.strerror or exc}", field="path") from exc
        return sum(not line.startswith('{"vocabulary"') for line in lines)

    async def import_jsonl(
        self,
        lines: Iterable[str | bytes] | str | Path,
        *,
        user: str | None = None,
        actor: str = "import",
        start_line: int = 1,
        settings: ImportSettings | None = None,
        on_batch: OnBatch | None = None,
    ) -> ImportReport:
        """Import learnings exported by `export_jsonl` (a file path, or the lines themselves), streamed and
        written in batches. Bad lines are rejected one by one (`report.rejected_lines` says which and why),
        lines already present are skipped, and `start_line` resumes an import after `report.last_line`."""
        if isinstance(lines, str | Path):
            check_text(str(lines), "lines")
            if not await asyncio.to_thread(Path(lines).is_file):
                raise ValidationError(f"{str(lines)[:200]!r} is not a file to import", field="lines")
            lines = file_lines(str(lines))
        return await import_lines(
            self._engine, self.scope(user), lines, actor, start_line=start_line, settings=settings, on_batch=on_batch
        )
