"""Tenant administration: vocabulary, purge, forgetting a user, export and import, and who am I."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import ValidationError as PydanticValidationError

from ...errors import ValidationError
from ...models import Vocabulary
from ..auth import ApiDep
from ..errors import ERROR_RESPONSES
from ..import_jobs import ImportJob
from ..schemas import IDENT, NAME, MeOut, PurgeIn, PurgeOut, VocabularyIn
from ..wire import DRAIN_BYTES, discard, waits_for_continue

__all__ = ["IMPORT_PATH", "router"]

IMPORT_PATH = "/api/import"

router = APIRouter(prefix="/api", tags=["administration"], responses=ERROR_RESPONSES)

UserPath = Annotated[str, Path(pattern=IDENT, max_length=128)]
UserQuery = Annotated[str | None, Query(pattern=IDENT, max_length=128)]
JobPath = Annotated[str, Path(pattern=r"^[0-9a-f]{16}$", description="The job id POST /api/import answered")]
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
    summary="Import learnings from JSON Lines (a background job)",
    status_code=202,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {_NDJSON: {"schema": {"type": "string"}}, "text/plain": {"schema": {"type": "string"}}},
        }
    },
    responses={200: {"description": "With `wait=true`: the finished job"}, 413: {"description": "Body too large"}},
)
async def import_lines(
    request: Request,
    response: Response,
    api: ApiDep,
    user: UserQuery = None,
    wait: Annotated[bool, Query(description="Answer when the import is done (200) instead of at once (202)")] = False,
) -> ImportJob:
    """The body is spooled to disk as it arrives (413 over the key's size or line limit), then imported in
    the background in batches, each one transaction: `GET /api/import/{job}` (the `Location`) shows rows
    imported, skipped and rejected with line numbers and reasons. Bad lines do not stop the others; lines
    already present (same owner, namespace and text) are skipped, so an import can be run again, and an
    interrupted one resumes with `POST /api/import/{job}/resume`."""
    scope_user = api.acting_for(user) if user is not None else api.scope_user
    limit = api.service.options.import_limits[api.principal.role.value]
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit[0]:
        if int(declared) <= DRAIN_BYTES and not waits_for_continue(request.scope):
            await discard(request.stream())  # so that the 413 reaches a client that is still sending
        raise HTTPException(413, f"the import is larger than this key may send ({limit[0]} bytes)")
    jobs = api.service.imports
    job_id, size, lines = await jobs.spool(request.stream(), limit)
    job = jobs.create(job_id, api.principal.tenant, scope_user, "import", size, lines)
    jobs.start(job_id, api.service.loop)
    response.headers["Location"] = f"{IMPORT_PATH}/{job_id}"
    if not wait:
        return job
    await jobs.wait(job_id)
    response.status_code = 200
    return jobs.get(job_id, api.principal.tenant, api.scope_user)


@router.get("/import/{job}", summary="An import job's progress and outcome")
async def import_job(api: ApiDep, job: JobPath) -> ImportJob:
    return api.service.imports.get(job, api.principal.tenant, api.scope_user)


@router.post(
    "/import/{job}/resume", summary="Resume an interrupted import after its last committed line", status_code=202
)
async def resume_import(api: ApiDep, job: JobPath) -> ImportJob:
    jobs = api.service.imports
    jobs.resumable(job, api.principal.tenant, api.scope_user)
    jobs.start(job, api.service.loop)
    return jobs.get(job, api.principal.tenant, api.scope_user)
