"""The knowledge the learning agent reads and corrects, behind `KnowledgePort`, and the default implementation.

An app with its own document store implements `KnowledgePort` and hands it to `loop.agent.configure(
knowledge=...)`; the agent's knowledge tools then read and edit the app's data. Without one, learnloop's
`DocumentKnowledgeBase` serves them from pages and pointers kept in the same store as everything else, with
pointer embeddings from the loop's embedder.

Re-analysis (seed 003's re-ground: look at a page again because something was missed or misread) is a hook:
`loop.agent.on_reanalysis(handler)`. Without a handler, learnloop's own knowledge base is re-analysed by the
learning model, which adds pending pointers (`agent.reground`); an app's knowledge port without a handler
gets the request recorded as an event on the knowledge_update panel, where the app (or a person) picks it up.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
from pydantic import BaseModel

from ..capture.gate import WriteGate
from ..engine import Engine
from ..errors import NotFound, ValidationError
from .gating import check_strings, check_text, content_gate
from .records import KnowledgeEdit, KnowledgePage, KnowledgePointer, Workspace
from .store import AgentStore

__all__ = [
    "DocumentKnowledgeBase",
    "KnowledgePort",
    "PageField",
    "PointerField",
    "ReanalysisHandler",
    "ReanalysisRequest",
    "pointer_text",
]

PointerField = Literal["description", "cross_references"]
PageField = Literal["content", "cross_references"]
POINTER_FIELDS: tuple[str, ...] = ("description", "cross_references")
PAGE_FIELDS: tuple[str, ...] = ("content", "cross_references")
_SNIPPET = 300


@runtime_checkable
class KnowledgePort(Protocol):
    """What the agent's knowledge tools need. Ids outside the workspace raise `NotFound`; reads see what the
    workspace may read, edits change only what it owns."""

    async def read_pointer(self, workspace: Workspace, pointer_id: str) -> dict[str, Any]: ...

    async def read_page(self, workspace: Workspace, page_id: str) -> dict[str, Any]: ...

    async def search(self, workspace: Workspace, query: str, k: int) -> list[dict[str, Any]]: ...

    async def edit_pointer(
        self, workspace: Workspace, pointer_id: str, field: PointerField, content: Any
    ) -> KnowledgeEdit: ...

    async def edit_page(self, workspace: Workspace, page_id: str, field: PageField, content: Any) -> KnowledgeEdit: ...

    async def update_cross_references(
        self, workspace: Workspace, pointer_id: str, references: list[Any]
    ) -> KnowledgeEdit: ...


class ReanalysisRequest(BaseModel):
    """Look at a page again. `request_id` is the same when a retried package asks again, so a handler can
    run each request once."""

    request_id: str
    tenant: str
    user: str | None
    session: str
    project: str
    owner: str | None
    page_id: str
    instruction: str


ReanalysisHandler = Callable[[ReanalysisRequest], Awaitable[dict[str, Any] | None]]


def pointer_text(title: str, description: str) -> str:
    """What a pointer's embedding is computed from."""
    return f"{title}\n{description}".strip()


def _snippet(text: str) -> str:
    return text if len(text) <= _SNIPPET else text[:_SNIPPET] + "…"


def _check_references(references: object) -> list[Any]:
    if not isinstance(references, list):
        raise ValidationError("cross_references must be a list", field="cross_references")
    return references


class DocumentKnowledgeBase:
    """`KnowledgePort` on the store's pages and pointers (`Engine.agent_store`), embedded with the loop's embedder.

    Every text it stores passes `gate` (default: the learning agent's content gate), whoever writes it: the
    learning agent's model reads pages and pointers back, so they are a way into its prompt."""

    def __init__(self, engine: Engine, store: AgentStore, gate: WriteGate | None = None) -> None:
        self._engine = engine
        self._store = store
        self._gate = gate or content_gate(engine)

    # -- admin ---------------------------------------------------------------------------------------

    def _check_page(self, page: KnowledgePage) -> None:
        for field in ("title", "content", "kind"):
            check_text(self._gate, getattr(page, field), field)
        check_strings(self._gate, page.cross_references, "cross_references")

    def _check_pointer(self, pointer: KnowledgePointer) -> None:
        for field in ("title", "description"):
            check_text(self._gate, getattr(pointer, field), field)
        check_strings(self._gate, pointer.cross_references, "cross_references")

    async def add_page(self, workspace: Workspace, page: KnowledgePage) -> KnowledgePage:
        """Add or replace a page; WriteRefused (a ValidationError naming the rule) if the gate refuses a text."""
        self._check_page(page)
        return await self._store.put_page(workspace, page, self._engine.clock())

    async def add_pointer(self, workspace: Workspace, pointer: KnowledgePointer) -> KnowledgePointer:
        """Add or replace a pointer; WriteRefused if the gate refuses a text."""
        self._check_pointer(pointer)
        vector = await self._engine.embed_one(pointer_text(pointer.title, pointer.description))
        return await self._store.put_pointer(workspace, pointer, vector, self._engine.clock())

    # -- the port ------------------------------------------------------------------------------------

    async def _pointer(self, workspace: Workspace, pointer_id: str, *, own: bool = False) -> KnowledgePointer:
        found = await self._store.get_pointer(workspace, pointer_id, visible=not own)
        if found is None:
            if own and await self._store.get_pointer(workspace, pointer_id) is not None:
                raise NotFound(
                    f"pointer {pointer_id!r} is shared knowledge, read-only in this workspace", id=pointer_id
                )
            raise NotFound(f"pointer {pointer_id!r} not found", id=pointer_id)
        return found

    async def _page(self, workspace: Workspace, page_id: str, *, own: bool = False) -> KnowledgePage:
        found = await self._store.get_page(workspace, page_id, visible=not own)
        if found is None:
            if own and await self._store.get_page(workspace, page_id) is not None:
                raise NotFound(f"page {page_id!r} is shared knowledge, read-only in this workspace", id=page_id)
            raise NotFound(f"page {page_id!r} not found", id=page_id)
        return found

    async def read_pointer(self, workspace: Workspace, pointer_id: str) -> dict[str, Any]:
        pointer = await self._pointer(workspace, pointer_id)
        return pointer.model_dump(include={"id", "page_id", "title", "description", "cross_references", "metadata"})

    async def read_page(self, workspace: Workspace, page_id: str) -> dict[str, Any]:
        page = await self._page(workspace, page_id)
        pointers = await self._store.list_pointers(workspace, page_id=page_id, limit=50)
        return {
            **page.model_dump(include={"id", "title", "content", "kind", "cross_references"}),
            "pointers": [{"id": p.id, "title": p.title} for p in pointers],
        }

    async def pointers_of(self, workspace: Workspace, page_id: str, limit: int = 200) -> list[KnowledgePointer]:
        """The pointers found on a page so far (what a re-analysis must not find again)."""
        return await self._store.list_pointers(workspace, page_id=page_id, limit=limit)

    async def search(self, workspace: Workspace, query: str, k: int) -> list[dict[str, Any]]:
        pointers, matrix = await self._store.pointer_vectors(workspace)
        if matrix is None:
            return []
        vector = await self._engine.embed_one(query, purpose="query")
        scores = matrix @ vector
        order = np.argsort(-scores)[:k]
        return [
            {
                "pointer_id": pointers[i].id,
                "page_id": pointers[i].page_id,
                "title": pointers[i].title,
                "description": _snippet(pointers[i].description),
                "score": round(float(scores[i]), 4),
            }
            for i in order
        ]

    async def edit_pointer(
        self, workspace: Workspace, pointer_id: str, field: PointerField, content: Any
    ) -> KnowledgeEdit:
        if field not in POINTER_FIELDS:
            raise ValidationError(f"only {' and '.join(POINTER_FIELDS)} of a pointer can be edited", field="field")
        pointer = await self._pointer(workspace, pointer_id, own=True)
        vector = None
        check_strings(self._gate, content, field)
        if field == "description":
            if not isinstance(content, str):
                raise ValidationError("a description is a string", field="new_content")
            # The description is what search matches; an edit that left the old vector would keep the old meaning.
            vector = await self._engine.embed_one(pointer_text(pointer.title, content))
        else:
            content = _check_references(content)
        before = getattr(pointer, field)
        await self._store.update_knowledge(
            workspace, "pointer", pointer_id, {field: content}, vector, self._engine.clock()
        )
        return KnowledgeEdit(
            target="pointer", id=pointer_id, field=field, before=before, after=content, reembedded=vector is not None
        )

    async def edit_page(self, workspace: Workspace, page_id: str, field: PageField, content: Any) -> KnowledgeEdit:
        if field not in PAGE_FIELDS:
            raise ValidationError(f"only {' and '.join(PAGE_FIELDS)} of a page can be edited", field="field")
        if field == "content" and not isinstance(content, str):
            raise ValidationError("page content is a string", field="new_content")
        if field == "cross_references":
            content = _check_references(content)
        check_strings(self._gate, content, field)
        page = await self._page(workspace, page_id, own=True)
        before = getattr(page, field)
        await self._store.update_knowledge(workspace, "page", page_id, {field: content}, None, self._engine.clock())
        return KnowledgeEdit(target="page", id=page_id, field=field, before=before, after=content)

    async def update_cross_references(
        self, workspace: Workspace, pointer_id: str, references: list[Any]
    ) -> KnowledgeEdit:
        return await self.edit_pointer(workspace, pointer_id, "cross_references", references)
