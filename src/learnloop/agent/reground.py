"""The default re-analysis (seed 003 R6, `trigger_reground`): look at a page again and add what was missed.

The learning agent asks for it when a page was misread or something on it was not found. Without an app's
handler (`loop.agent.on_reanalysis`), and when the knowledge is learnloop's own (`DocumentKnowledgeBase`),
this runs: the learning model reads the page, the pointers already found on it and the agent's instruction,
and names the parts it finds that no pointer covers yet; each becomes a new pointer with
`metadata.enrichment_status = "pending"` (seed 003: new pointers wait for enrichment, which an app's pass
picks up: `loop.agent.list_pointers(...)` lists them with their metadata). Pointer ids derive from the request id, so
a retried package writes the same pointers again instead of new ones. Every text passes the content gate; a
pointer it refuses is left out. An app with images or another analysis registers its own handler instead.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

from ..errors import ValidationError
from ..llms.base import ChatModel, Message
from .knowledge import DocumentKnowledgeBase, ReanalysisRequest
from .records import KnowledgePointer, Workspace

__all__ = ["PENDING", "REGROUND_MARK", "reground"]

log = logging.getLogger("learnloop.agent")

PENDING = "pending"
REGROUND_MARK = "You re-analyse one page of a knowledge base"
_MAX_PAGE_CHARS = 12_000
_MAX_NEW = 10

_SYSTEM = (
    f"{REGROUND_MARK}. Another agent found that something on it was missed or misread. Read the page, the "
    "parts already found on it (pointers) and the instruction, and list the parts of the page that no pointer "
    'covers yet or that a pointer gets wrong. Answer with JSON only: {"pointers": [{"title": "...", '
    '"description": "..."}]} — a short title and a description of what that part of the page holds, in the '
    'page\'s own words where possible. Answer {"pointers": []} if nothing is missing.'
)


def _prompt(page: dict[str, Any], existing: list[KnowledgePointer], instruction: str) -> str:
    found = [{"id": p.id, "title": p.title, "description": p.description[:300]} for p in existing]
    return json.dumps(
        {
            "instruction": instruction,
            "page": {"id": page["id"], "title": page["title"], "content": str(page["content"])[:_MAX_PAGE_CHARS]},
            "pointers_already_found": found,
        },
        ensure_ascii=False,
    )


def _proposals(content: str | None) -> list[tuple[str, str]]:
    try:
        parsed = json.loads(content or "")
    except ValueError:
        return []
    items = parsed.get("pointers") if isinstance(parsed, dict) else None
    out = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and isinstance(item.get("title"), str) and item["title"].strip():
            description = item.get("description")
            out.append((item["title"].strip()[:200], description.strip() if isinstance(description, str) else ""))
    return out[:_MAX_NEW]


def _pointer_id(request: ReanalysisRequest, n: int) -> str:
    digest = hashlib.blake2b(f"{request.request_id}:{n}".encode(), digest_size=6).hexdigest()
    return f"{request.page_id}~rg-{digest}"


async def reground(request: ReanalysisRequest, documents: DocumentKnowledgeBase, model: ChatModel) -> dict[str, Any]:
    """Re-analyse the request's page with `model` and add its new pointers as pending; what was created."""
    workspace = Workspace.of(request.tenant, request.owner, request.project)
    page = await documents.read_page(workspace, request.page_id)
    existing = await documents.pointers_of(workspace, request.page_id)
    prompt = _prompt(page, existing, request.instruction)
    messages = [Message(role="system", content=_SYSTEM), Message(role="user", content=prompt)]
    answer = await model.chat(messages, json_output=True)
    created: list[str] = []
    refused = 0
    known = {p.title.casefold() for p in existing}
    for n, (title, description) in enumerate(_proposals(answer.message.content)):
        if title.casefold() in known:
            continue  # already found: the model repeated it
        pointer = KnowledgePointer(
            id=_pointer_id(request, n),
            page_id=request.page_id,
            title=title,
            description=description,
            project=request.project,
            metadata={
                "enrichment_status": PENDING,
                "reground": {"request_id": request.request_id, "instruction": request.instruction[:500]},
            },
        )
        try:
            await documents.add_pointer(workspace, pointer)
        except ValidationError as exc:  # the content gate refused a text the model wrote
            log.info("re-analysis of page %r: a proposed pointer was refused (%s)", request.page_id, exc)
            refused += 1
            continue
        created.append(pointer.id)
        known.add(title.casefold())
    return {"new_pointers": created, "refused": refused, "enrichment_status": PENDING}
