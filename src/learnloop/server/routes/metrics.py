"""`GET /api/metrics` (JSON, over time) and `GET /metrics` (Prometheus text; a browser gets the charts page)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import PlainTextResponse, Response

from ...learning_metrics import compute_learning_metrics
from ..auth import Api, ApiDep, api_for, principal_of
from ..errors import ERROR_RESPONSES
from ..keys import Role
from ..metrics import Bucket, Metrics, compute_metrics, prometheus_text
from ..pages import metrics_page, wants_html
from ..schemas import IDENT

__all__ = ["router"]

router = APIRouter(tags=["metrics"], responses=ERROR_RESPONSES)


async def _metrics(
    api: Api, user: str | None, days: float, bucket: Bucket | None, channel: str | None = None
) -> Metrics:
    scope_user = api.acting_for(user) if user is not None else api.scope_user
    # Write counters are tenant-wide; a user-bound key sees only what its own events show.
    metrics = await compute_metrics(
        api.service.store,
        api.loop.scope(scope_user),
        now=api.now(),
        days=days,
        bucket=bucket,
        counters=api.principal.role is not Role.USER and scope_user is None,
    )
    step = 3600 if metrics.bucket == "hour" else 86_400
    scope = api.loop.scope(scope_user)
    metrics.learning = await compute_learning_metrics(
        api.loop.engine, scope, now=api.now(), days=days, bucket_seconds=step, channel=channel
    )
    return metrics


@router.get("/api/metrics", summary="Learning metrics, in total and over time")
async def metrics(
    api: ApiDep,
    days: Annotated[float, Query(gt=0, le=366, description="Window of the series")] = 7,
    bucket: Annotated[Bucket | None, Query(description="Series step; default hour up to 2 days, else day")] = None,
    user: Annotated[str | None, Query(pattern=IDENT, max_length=128)] = None,
    channel: Annotated[
        str | None, Query(pattern=IDENT, max_length=64, description="Cut the learning figures to one channel's turns")
    ] = None,
) -> Metrics:
    return await _metrics(api, user, days, bucket, channel)


@router.get("/metrics", include_in_schema=False)
async def prometheus(request: Request) -> Response:
    """Prometheus scrapes this with a key (Authorization: Bearer); a browser asking for HTML gets the page."""
    if wants_html(request):
        return await metrics_page(request)
    api = api_for(request, await principal_of(request))
    return PlainTextResponse(
        prometheus_text(await _metrics(api, None, 1, None)), media_type="text/plain; version=0.0.4"
    )
