"""Checks on what arrives before any route sees it: a body's declared size, and the text of query strings.

A body whose `Content-Length` is over its route's limit is a 413 here, before the route runs; a body without
one (chunked) is counted as it streams, and the read that crosses the limit raises the same 413 inside the
route. Either way an over-limit body of moderate size is read to its end (and thrown away) before the answer:
a server that closes a socket with unread bytes in it resets the connection, and the reset can destroy the
413 before the client, still sending, reads it. A body beyond `DRAIN_BYTES`, or one that waits for
`100-continue`, is answered at once.

JSON bodies are checked field by field by the request models (`schemas.Strict`); query parameters have no model
every route shares, so their text is checked here, once, for every route and page.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from urllib.parse import parse_qsl

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..textcheck import text_problem
from .errors import error_body

__all__ = [
    "DRAIN_BYTES",
    "MAX_REQUEST_HEAD_BYTES",
    "BodySizeLimit",
    "QueryTextCheck",
    "discard",
    "drain",
    "waits_for_continue",
]

# The longest request line and headers the HTTP parser reads (uvicorn's `h11_max_incomplete_event_size`; its
# default, 16 KB, ended a longer request with a reset while the client was still sending): a 1 MB query string
# is read, and answered with a 422 naming the parameter that is too long or not text.
MAX_REQUEST_HEAD_BYTES = 2 * 1024 * 1024

# How much of a refused body is read and thrown away so that the 413 reaches the client (see above); loopback
# reads it in milliseconds, and a client sending more than this gets the answer and a closed connection.
DRAIN_BYTES = 32 * 1024 * 1024


class BodySizeLimit:
    """Pure ASGI: a request declaring a body larger than `limit_for(path)` bytes is answered 413 at once; one
    that streams more than that fails its read with a 413 (an `HTTPException` the route's handlers answer).

    (FastAPI's own limiter answers in plain text; clients get the API's JSON error shape from this one.)"""

    def __init__(self, app: ASGIApp, limit_for: Callable[[str], int]) -> None:
        self.app = app
        self.limit_for = limit_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            declared = _content_length(scope)
            limit = self.limit_for(scope.get("path", ""))
            message = f"the request body is larger than this route accepts ({limit} bytes)"
            if declared is not None and declared > limit:
                if declared <= DRAIN_BYTES and not waits_for_continue(scope):
                    await drain(receive)
                await _answer(send, 413, error_body("too_large", message, limit=limit), close=True)
                return
            received = 0

            async def counted() -> Message:
                nonlocal received
                message_in = await receive()
                if message_in["type"] == "http.request":
                    received += len(message_in.get("body", b""))
                    if received > limit:
                        if message_in.get("more_body", False):
                            await drain(receive)
                        raise HTTPException(413, message)
                return message_in

            await self.app(scope, counted, send)
            return
        await self.app(scope, receive, send)


async def drain(receive: Receive, budget: int = DRAIN_BYTES) -> None:
    """Read the rest of a request body, up to `budget` bytes, and throw it away."""
    seen = 0
    while seen <= budget:
        message = await receive()
        if message["type"] != "http.request" or not message.get("more_body", False):
            return
        seen += len(message.get("body", b""))


async def discard(chunks: AsyncIterator[bytes], budget: int = DRAIN_BYTES) -> None:
    """The same for a body a route reads as a stream: the rest of it, up to `budget` bytes."""
    seen = 0
    async for chunk in chunks:
        seen += len(chunk)
        if seen > budget:
            return


def waits_for_continue(scope: Scope) -> bool:
    return any(name == b"expect" and value.lower() == b"100-continue" for name, value in scope.get("headers", ()))


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class QueryTextCheck:
    """Pure ASGI: a query parameter with a NUL, a control character or a lone surrogate is a 422 naming it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = scope.get("query_string", b"") if scope["type"] == "http" else b""
        if raw:
            # Decoded as Starlette decodes it (percent-escapes as UTF-8, invalid bytes replaced), so this checks
            # exactly the values the routes will read.
            for name, value in parse_qsl(raw.decode("latin-1"), keep_blank_values=True):
                problem = text_problem(value) or text_problem(name)
                if problem is not None:
                    shown = name if text_problem(name) is None else "(a parameter name)"
                    message = f"query parameter {shown} {problem}"
                    await _answer(send, 422, error_body("validation_error", message, field=shown))
                    return
        await self.app(scope, receive, send)


async def _answer(send: Send, status: int, payload: dict[str, object], *, close: bool = False) -> None:
    body = json.dumps(payload).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if close:  # the unread body would otherwise be read (and thrown away) before the next request
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
