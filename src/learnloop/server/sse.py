"""`GET /api/events`: every learning event of the caller's tenant (or user) as Server-Sent Events.

The event log is the source of truth and the bus is only a doorbell: on each ring, and on a short poll
for events other processes wrote, the stream reads the log after the last sequence number it sent. So the
stream is in order, never skips an event, resumes exactly from `Last-Event-ID` (the event `seq`), and sees
writes of every process sharing the database. On PostgreSQL another process's commit rings the bell too
(LISTEN/NOTIFY, `stores.postgres.listener`), so the poll is only a fallback there.

A stream lives longer than the request that opened it, so the key is checked again at every poll and
heartbeat (through the key ring's short cache): a revoked key, or a user-bound key whose user was forgotten
(forgetting deletes the user's keys), ends the stream within the cache's lifetime plus one poll.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import StreamingResponse

from ..errors import AuthenticationError
from ..models import Event
from .auth import Api, ApiDep, presented_key
from .errors import ERROR_RESPONSES
from .eventview import sse_frame
from .schemas import IDENT

__all__ = ["router", "stream_events"]

router = APIRouter(prefix="/api", tags=["events"], responses=ERROR_RESPONSES)

_BATCH = 500
_RETRY_MS = 2000


@router.get(
    "/events",
    summary="Live stream of learning events (Server-Sent Events)",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "`id:` is the event seq; `data:` a JSON event with `panel` (learning or knowledge_update)",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        }
    },
)
async def events(
    request: Request,
    api: ApiDep,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID", max_length=32)] = None,
    after: Annotated[int | None, Query(ge=0, le=2**53, description="Start after this seq")] = None,
    tail: Annotated[int, Query(ge=0, le=500, description="Without a start, first replay this many")] = 0,
    user: Annotated[str | None, Query(pattern=IDENT, max_length=128, description="Only this user's")] = None,
    max_seconds: Annotated[float | None, Query(gt=0, le=86_400, description="Close after this long")] = None,
) -> StreamingResponse:
    """Resumes after `Last-Event-ID` (sent by browsers when they reconnect), else after `after`, else with
    the last `tail` events; then streams live. Sends a comment as heartbeat when idle."""
    scope_user = api.acting_for(user) if user is not None else api.scope_user
    start = _parse_seq(last_event_id)
    if start is None:
        start = after
    if start is None:
        start = await api.service.store.tail_start(api.loop.scope(scope_user), tail)
    key, _ = presented_key(request)
    assert key is not None  # `api` was resolved from it
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(
        stream_events(api, key, scope_user, start, max_seconds), media_type="text/event-stream", headers=headers
    )


def _parse_seq(value: str | None) -> int | None:
    if value is None or not value.strip().isdigit():
        return None
    seq = int(value.strip())
    return seq if seq <= 2**53 else None


async def stream_events(
    api: Api, key: str, user: str | None, start: int, max_seconds: float | None
) -> AsyncIterator[str]:
    """`key` is the API key the stream was opened with, checked again before every read of the log."""
    options = api.service.options
    bus = api.loop.engine.bus
    started = last_sent = time.monotonic()
    last = start
    yield f"retry: {_RETRY_MS}\n\n"
    # Subscribe before the first read, so an event committed in between rings the bell.
    async with bus.subscribe(api.principal.tenant, user) as subscription:
        while True:
            if not await _still_valid(api, key):
                # A comment, not an event: clients see the stream end; reconnecting gets the 401.
                yield ": the API key was revoked (or its user forgotten); the stream ends\n\n"
                return
            batch = await _read(api, user, last)
            for event in batch:
                yield sse_frame(event)
                last = event.seq
            now = time.monotonic()
            if batch:
                last_sent = now
                if len(batch) == _BATCH:
                    continue  # more are waiting in the log
            elif now - last_sent >= options.heartbeat:
                yield ": heartbeat\n\n"
                last_sent = now
            waits = [options.poll_interval, max(0.01, options.heartbeat - (now - last_sent))]
            if max_seconds is not None:
                left = max_seconds - (now - started)
                if left <= 0:
                    return
                waits.append(left)
            if await subscription.wait(min(waits)):
                _drain(subscription.queue)
                subscription.overflowed = False


async def _still_valid(api: Api, key: str) -> bool:
    """Whether `key` still resolves to the principal that opened the stream."""
    try:
        return await api.service.keys.resolve(key) == api.principal
    except AuthenticationError:
        return False


async def _read(api: Api, user: str | None, after: int) -> list[Event]:
    return await api.loop.events(after=after, limit=_BATCH, user=user)


def _drain(queue: asyncio.Queue[Event]) -> None:
    """Several events often commit together; one read of the log serves them all."""
    while not queue.empty():
        queue.get_nowait()
