"""Every JSON-RPC message is screened before the MCP SDK sees it, so that a malformed one gets the error reply
the JSON-RPC 2.0 specification names instead of silence.

- not UTF-8, not JSON, NaN or Infinity, nested deeper than the parser goes → -32700 Parse error (id null);
- JSON that is not one request object (a batch, `[1,2,3]`, a string), `"jsonrpc"` other than "2.0", a
  malformed envelope → -32600 Invalid Request (with the request's id when it has a usable one);
- a request carrying invalid text (a lone surrogate, NUL, control characters: `learnloop.textcheck`) or
  nested deeper than `textcheck.MAX_DEPTH` → -32602 Invalid params naming where, with its id.

Notifications and responses get no reply (the specification forbids one); a bad one is dropped. What passes is
handed on re-encoded as plain ASCII JSON, so the SDK's own strict parser reads exactly what was checked.

Used by the stdio transport (`screened_stdio`) and, as ASGI middleware (`ScreenedHttp`), by both HTTP servers.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError as PydanticValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..textcheck import first_problem

__all__ = ["MAX_MESSAGE_BYTES", "ScreenedHttp", "Verdict", "screen", "screened_stdio"]

log = logging.getLogger("learnloop.mcp")

#: Largest message accepted, in bytes (a tool call carries a learning or a tool's arguments, never files).
MAX_MESSAGE_BYTES = 4 * 1024 * 1024

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


@dataclass(frozen=True)
class Verdict:
    """`text` to hand on (the message re-encoded), or `error` to answer with (None: drop it silently)."""

    text: str | None = None
    error: dict[str, Any] | None = None


def _reply(code: int, message: str, request_id: Any = None) -> dict[str, Any]:
    usable = request_id if isinstance(request_id, str | int) and not isinstance(request_id, bool) else None
    return {"jsonrpc": "2.0", "id": usable, "error": {"code": code, "message": message}}


def _no_constants(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def screen(raw: bytes | str) -> Verdict:
    """The verdict on one message as it came off the wire."""
    if len(raw) > MAX_MESSAGE_BYTES:
        return Verdict(error=_reply(INVALID_REQUEST, f"Invalid Request: larger than {MAX_MESSAGE_BYTES} bytes"))
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            return Verdict(error=_reply(PARSE_ERROR, "Parse error: the message is not valid UTF-8"))
    try:
        document = json.loads(raw, parse_constant=_no_constants)
    except RecursionError:
        return Verdict(error=_reply(PARSE_ERROR, "Parse error: nested too deeply"))
    except ValueError as exc:
        return Verdict(error=_reply(PARSE_ERROR, f"Parse error: {exc}"))
    if not isinstance(document, dict):
        shape = "a batch (array)" if isinstance(document, list) else f"a JSON {type(document).__name__}"
        return Verdict(error=_reply(INVALID_REQUEST, f"Invalid Request: expected one message object, got {shape}"))
    request_id = document.get("id")
    notification = "method" in document and "id" not in document
    if document.get("jsonrpc") != "2.0":
        return Verdict(error=_reply(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"', request_id))
    found = first_problem(document, "")
    if found is not None:
        if notification or "method" not in document:
            return Verdict()  # a notification or a response: nothing may answer it
        where, problem = found
        return Verdict(error=_reply(INVALID_PARAMS, f"Invalid params: {where.lstrip('.')} {problem}", request_id))
    try:
        types.jsonrpc_message_adapter.validate_python(document, by_name=False)
    except PydanticValidationError:
        if notification:
            return Verdict()
        return Verdict(error=_reply(INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message", request_id))
    return Verdict(text=json.dumps(document))


class _ScreenedStdin:
    """The process's stdin as the SDK's stdio transport reads it (`async for line in ...`), with every line
    screened: good ones passed on, error replies queued for the writer, bad notifications dropped."""

    def __init__(self, replies: MemoryObjectSendStream[dict[str, Any]]) -> None:
        self._replies = replies
        self._file = anyio.wrap_file(sys.stdin.buffer)

    async def __aiter__(self) -> AsyncIterator[str]:
        async with self._replies:
            async for raw in self._file:
                line = raw.rstrip(b"\r\n")
                if not line.strip():
                    continue
                verdict = screen(line)
                if verdict.text is not None:
                    yield verdict.text + "\n"
                elif verdict.error is not None:
                    log.warning("MCP message refused: %s", verdict.error["error"]["message"][:200])
                    await self._replies.send(verdict.error)


@asynccontextmanager
async def screened_stdio() -> AsyncIterator[tuple[Any, Any]]:
    """`mcp.server.stdio.stdio_server()` whose incoming lines pass `screen` first; the error replies go out on
    the same stdout writer as every other message."""
    replies, pending = anyio.create_memory_object_stream[dict[str, Any]](64)
    async with stdio_server(stdin=_ScreenedStdin(replies)) as (read, write):  # type: ignore[arg-type]
        answer = write.clone()

        async def send_replies() -> None:
            async with pending, answer:
                async for reply in pending:
                    await answer.send(SessionMessage(types.jsonrpc_message_adapter.validate_python(reply)))

        async with anyio.create_task_group() as group:
            group.start_soon(send_replies)
            try:
                yield read, write
            finally:
                group.cancel_scope.cancel()


class ScreenedHttp:
    """ASGI middleware for a streamable HTTP MCP endpoint: a POST body that fails `screen` is answered with
    the JSON-RPC error (HTTP 400) before the SDK parses it; a good one is handed on unchanged."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_MESSAGE_BYTES:
                await _respond(
                    send, 413, _reply(INVALID_REQUEST, f"Invalid Request: larger than {MAX_MESSAGE_BYTES} bytes")
                )
                return
            chunks.append(chunk)
            more = bool(message.get("more_body"))
        body = b"".join(chunks)
        verdict = screen(body)
        if verdict.text is None:
            if verdict.error is None:
                await _respond(send, 202, None)
                return
            await _respond(send, 400, verdict.error)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def _respond(send: Send, status: int, payload: dict[str, Any] | None) -> None:
    body = b"" if payload is None else json.dumps(payload).encode()
    headers = [(b"content-length", str(len(body)).encode())]
    if payload is not None:
        headers.append((b"content-type", b"application/json"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
