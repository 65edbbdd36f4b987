"""The holdback experiment over HTTP: `GET /api/holdback` (the report), its chart as SVG, the settings and pins."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Response
from pydantic import BaseModel, Field

from ...holdback import HoldbackReport, HoldbackSettings
from ...holdback.chart import report_svg
from ..auth import Api, ApiDep
from ..errors import ERROR_RESPONSES
from ..schemas import IDENT, NAME

__all__ = ["router"]

router = APIRouter(prefix="/api/holdback", tags=["holdback"], responses=ERROR_RESPONSES)

UserPath = Annotated[str, Path(pattern=IDENT, max_length=128)]
Days = Annotated[float | None, Query(gt=0, le=3660, description="Only turns begun in this many days")]
Seed = Annotated[int, Query(ge=0, le=2**32 - 1, description="Bootstrap seed: the same data and seed, the same report")]
Resamples = Annotated[int, Query(ge=100, le=20_000, description="Bootstrap resamples")]
Namespace = Annotated[str | None, Query(pattern=NAME, max_length=64, description="Only this namespace's turns")]


class HoldbackSettingsIn(BaseModel):
    share: float = Field(0.1, gt=0, lt=1, description="Share of users held back (no memory in their context)")
    mode: Literal["holdback", "aa"] = Field("holdback", description="'aa': both arms get memory (the A/A check)")
    enabled: bool = True
    salt: str = Field("", max_length=100, description="A new salt draws the arms afresh")
    namespace: str | None = Field(None, pattern=NAME, max_length=64, description="Settings for this namespace only")


class PinIn(BaseModel):
    arm: Literal["memory", "holdback"]


class HoldbackSettingsOut(BaseModel):
    settings: list[dict[str, Any]]
    pins: dict[str, str]


def _view(settings: HoldbackSettings) -> dict[str, Any]:
    return {
        "namespace": settings.namespace or None,
        "share": settings.share,
        "mode": settings.mode,
        "enabled": settings.enabled,
        "salt": settings.salt,
        "updated_at": settings.updated_at,
    }


async def _settings(api: Api) -> HoldbackSettingsOut:
    return HoldbackSettingsOut(
        settings=[_view(s) for s in await api.loop.holdback.all_settings()],
        pins=dict(await api.loop.holdback.pins()),
    )


async def _report(api: Api, days: float | None, namespace: str | None, seed: int, resamples: int) -> HoldbackReport:
    # The report compares users of the whole tenant: a user-bound key does not see it.
    api.principal.require_tenant_key("the holdback report")
    return await api.loop.holdback.report(days=days, namespace=namespace, seed=seed, resamples=resamples, now=api.now())


@router.get("", summary="Does memory help? Both arms compared, with 95% intervals and a verdict")
async def report(
    api: ApiDep, days: Days = None, namespace: Namespace = None, seed: Seed = 0, resamples: Resamples = 2_000
) -> HoldbackReport:
    return await _report(api, days, namespace, seed, resamples)


@router.get("/chart.svg", summary="The report's chart as SVG", response_class=Response)
async def chart(
    api: ApiDep, days: Days = None, namespace: Namespace = None, seed: Seed = 0, resamples: Resamples = 2_000
) -> Response:
    found = await _report(api, days, namespace, seed, resamples)
    return Response(report_svg(found), media_type="image/svg+xml")


@router.get("/settings", summary="The experiment's settings and the pinned users")
async def get_settings(api: ApiDep) -> HoldbackSettingsOut:
    api.principal.require_tenant_key("the holdback settings")
    return await _settings(api)


@router.put("/settings", summary="Start, change or switch off the experiment (admin)")
async def put_settings(api: ApiDep, body: HoldbackSettingsIn) -> HoldbackSettingsOut:
    api.principal.require_admin("changing the holdback experiment")
    await api.loop.holdback.configure(
        share=body.share, mode=body.mode, enabled=body.enabled, salt=body.salt, namespace=body.namespace
    )
    return await _settings(api)


@router.put("/pins/{user}", summary="Pin a user to an arm (admin)")
async def pin(api: ApiDep, user: UserPath, body: PinIn) -> HoldbackSettingsOut:
    api.principal.require_admin("pinning a user")
    await api.loop.holdback.pin(user, body.arm)
    return await _settings(api)


@router.delete("/pins/{user}", summary="Unpin a user (admin)")
async def unpin(api: ApiDep, user: UserPath) -> HoldbackSettingsOut:
    api.principal.require_admin("unpinning a user")
    await api.loop.holdback.unpin(user)
    return await _settings(api)
