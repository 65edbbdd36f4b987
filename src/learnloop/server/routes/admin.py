"""Tenant administration: vocabulary, purge, forgetting a user, export and import, and who am I."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import ValidationError as PydanticValidationError

from ...errors import ValidationError
from ...models import Vocabulary
from ...portability import ImportReport
from ..auth import ApiDep
from ..errors import ERROR_RESPONSES
from ..schemas import IDENT, NAME, MeOut, PurgeIn, PurgeOut, VocabularyIn

__all__ = ["IMPORT_PATH", "router"]

IMPORT_PATH = "/api/import"

router = APIRouter(prefix="/api", tags=["administration"], responses=ERROR_RESPONSES)

UserPath = Annotated[str, Path(pattern=IDENT, max_length=128)]
UserQuery = Annotated[str | None, Query(pattern=IDENT, max_length=128)]
_NDJSON = "application/x-ndjson"


@router.get("/me", summary="The calling key: tenant, role and user")
async def me(api: ApiDep) -> MeOut:
    p = api.principal
    return MeOut(tenant=p.tenant, role=p.role.value, user=p.user, key_id=p.key_id)


@router.get("/vocabulary", summary="A namespace's categories")
async def get_vocabulary(
    api: ApiDep, namespace: Annotated[str, Query(pattern=NAME, max_length=64)] = "learning"
) -> Vocabulary:
    return await api.loop.vocabulary(namespace)


@router.get("/vocabularies", summary="Every vocabulary the tenant has stored")
async def list_vocabularies(api: ApiDep) -> list[Vocabulary]:
    return await api.loop.vocabularies()


@router.put("/vocabulary", summary="Set a namespace's categories (admin)")
async def put_vocabulary(api: ApiDep, body: VocabularyIn) -> Vocabulary:
    """Replaces the categories the tool schema offers and saves are checked against. Existing learnings
    keep their category."""
    api.principal.require_admin("changing the vocabulary")
    try:
        vocabulary = Vocabulary.model_validate(body.model_dump())
    except PydanticValidationError as exc:
        raise ValidationError(str(exc.errors()[0]["msg"]), field="categories") from exc
    return await api.loop.set_vocabulary(vocabulary, actor=api.actor)


@router.post("/learnings/purge-deprecated", summary="Delete deprecated learnings older than a cut-off")
async def purge_deprecated(api: ApiDep, body: PurgeIn) -> PurgeOut:
    user = api.acting_for(body.user) if body.user is not None else api.scope_user
    ids = await api.loop.purge_deprecated(timedelta(days=body.older_than_days), user=user, actor=api.actor)
    return PurgeOut(purged=ids)


@router.delete("/users/{user}", summary="Forget a user")
async def forget_user(api: ApiDep, user: UserPath) -> dict[str, int]:
    """Removes every row, index entry and event of the user (and their user-bound keys); tenant-global
    learnings they contributed stay, anonymised. A user-bound key may forget only its own user."""
    target = api.acting_for(user) or user
    removed = await api.loop.forget(target)
    # The user's keys are gone from the store; refuse them here now rather than when the cache runs out
    # (open event streams check their key again at every poll), and stop learning-agent workers still
    # busy with the user's sessions instead of at their next write.
    api.service.keys.forget_user(api.principal.tenant, target)
    await api.loop.agent.reap_workers()
    return removed


@router.get(
    "/export",
    summary="Export learnings as JSON Lines",
    response_class=StreamingResponse,
    responses={200: {"content": {_NDJSON: {"schema": {"type": "string"}}}, "description": "One learning a line"}},
)
async def export(api: ApiDep, user: UserQuery = None) -> StreamingResponse:
    scope_user = api.acting_for(user) if user is not None else api.scope_user

    async def lines() -> AsyncIterator[bytes]:
        async for line in api.loop.export_jsonl(user=scope_user):
            yield (line + "\n").encode()

    return StreamingResponse(lines(), media_type=_NDJSON)


@router.post(
    "/import",
    summary="Import learnings from JSON Lines",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {_NDJSON: {"schema": {"type": "string"}}, "text/plain": {"schema": {"type": "string"}}},
        }
    },
    responses={413: {"description": "Body too large"}},
)
async def import_lines(request: Request, api: ApiDep, user: UserQuery = None) -> ImportReport:
    """All or nothing: one bad line rejects the whole file (422 naming the line). Lines already present
    (same owner, namespace and text) are skipped, so an interrupted import can be run again."""
    scope_user = api.acting_for(user) if user is not None else api.scope_user
    body = await _read_limited(request, api.service.options.max_import_bytes)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValidationError("import body is not UTF-8 text", field="body") from exc
    # `import_jsonl` checks every line (shape, owner, write gate, embedding size and values) and raises a
    # ValidationError naming the lines before it writes anything; the error handler makes that the 422.
    try:
        return await api.loop.import_jsonl(text.splitlines(), user=scope_user, actor="import")
    except RecursionError as exc:  # a line nested deeper than the JSON parser goes
        raise ValidationError("import rejected, nothing written: a line is nested too deeply", field="body") from exc


async def _read_limited(request: Request, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(413, f"import body is larger than {limit} bytes; split the file")
        chunks.append(chunk)
    return b"".join(chunks)
