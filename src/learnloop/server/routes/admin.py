"""Tenant administration: vocabulary, purge, forgetting a user, export and import, and who am I."""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import ValidationError as PydanticValidationError

from ...errors import ValidationError
from ...models import Vocabulary, check_identifier
from ...portability import ExportedLearning, ImportReport
from ..auth import ApiDep
from ..errors import ERROR_RESPONSES
from ..schemas import IDENT, NAME, MeOut, PurgeIn, PurgeOut, VocabularyIn

__all__ = ["router"]

router = APIRouter(prefix="/api", tags=["administration"], responses=ERROR_RESPONSES)

UserPath = Annotated[str, Path(pattern=IDENT, max_length=128)]
UserQuery = Annotated[str | None, Query(pattern=IDENT, max_length=128)]
_NDJSON = "application/x-ndjson"
_NAME = re.compile(NAME)


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
    return await api.loop.forget(api.acting_for(user) or user)


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
    lines = text.splitlines()
    _precheck(lines, forced_user=scope_user)
    return await api.loop.import_jsonl(lines, user=scope_user, actor="import")


async def _read_limited(request: Request, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(413, f"import body is larger than {limit} bytes; split the file")
        chunks.append(chunk)
    return b"".join(chunks)


def _precheck(lines: list[str], forced_user: str | None) -> None:
    """Reject, before anything is written, what the importer would only discover halfway through a file
    (unusable owners, embeddings that are not base64) or could not handle (absurdly nested JSON)."""
    problems: list[str] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            if line.lstrip().startswith('{"vocabulary"'):
                json.loads(line)  # the importer validates vocabulary lines; only nesting depth is checked here
                continue
            record = ExportedLearning.model_validate_json(line)
            if record.user is not None and forced_user is None:
                check_identifier(record.user, "user")
            if not _NAME.match(record.namespace):
                raise ValidationError(f"namespace {record.namespace!r} is not a valid name", field="namespace")
            if record.embedding is not None:
                base64.b64decode(record.embedding, validate=True)
        except (PydanticValidationError, ValueError, binascii.Error, RecursionError) as exc:
            problems.append(f"line {number}: {_first_message(exc)}")
        except ValidationError as exc:
            problems.append(f"line {number}: {exc.message}")
        if len(problems) >= 10:
            break
    if problems:
        raise ValidationError(f"import rejected, nothing written: {'; '.join(problems)}", problems=problems)


def _first_message(exc: Exception) -> str:
    if isinstance(exc, PydanticValidationError):
        return str(exc.errors()[0]["msg"])
    return str(exc) or type(exc).__name__
