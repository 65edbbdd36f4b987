"""Every error leaves the service as `{"error": {"code", "message", ...details}}` with a fitting status.

learnloop's error tree maps to statuses here, in one place. Request validation errors from FastAPI get the
same shape (code `validation_error`, the offending fields listed), and so do unknown routes and methods.
Anything unexpected is logged with its traceback and answered with a 500 that says nothing internal.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..errors import (
    AuthenticationError,
    ChannelSendError,
    ConflictError,
    EmbedderError,
    InvalidTransition,
    LearnloopError,
    LinkCodeInvalid,
    LinkLocked,
    LLMError,
    NotConfigured,
    NotFound,
    PermissionDenied,
    ResponderError,
    StoreError,
    UserRequired,
    ValidationError,
)

__all__ = ["ERROR_RESPONSES", "UserRequired", "error_body", "install_error_handlers", "status_for"]

log = logging.getLogger("learnloop.server")


# Most specific class first: InvalidCategory is a ValidationError and shares its 422.
_STATUS: list[tuple[type[LearnloopError], int]] = [
    (NotFound, 404),
    (LinkCodeInvalid, 400),
    (LinkLocked, 429),
    (ValidationError, 422),
    (InvalidTransition, 409),
    (ConflictError, 409),
    (AuthenticationError, 401),
    (PermissionDenied, 403),
    # A feature the deployment has not set up (no LLM for the learning agent): the request conflicts with
    # the current configuration, which the caller can fix; it is not a server failure.
    (NotConfigured, 409),
    (StoreError, 503),
    (EmbedderError, 503),
    (LLMError, 502),
    (ResponderError, 502),
    (ChannelSendError, 502),
]

_HTTP_CODES = {
    400: "bad_request",
    429: "too_many_requests",
    401: "unauthenticated",
    403: "permission_denied",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "too_large",
    415: "unsupported_media_type",
    422: "validation_error",
}


def status_for(error: LearnloopError) -> int:
    for cls, status in _STATUS:
        if isinstance(error, cls):
            return status
    return 500


def error_body(code: str, message: str, **details: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, **details}}


def _error_schema(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "error": {
                            "type": "object",
                            "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
                            "required": ["code", "message"],
                        }
                    },
                    "required": ["error"],
                }
            }
        },
    }


# Documented on every API route, so clients (and schemathesis) know the error shape.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: _error_schema("Missing, malformed or revoked API key"),
    403: _error_schema("The key's role does not allow this operation"),
    404: _error_schema("Not found, or outside the key's tenant or user"),
    409: _error_schema("Lifecycle transition not allowed, or a concurrent change"),
    422: _error_schema("Invalid input; `allowed` lists the vocabulary for a bad category"),
}


def _validation_details(exc: RequestValidationError) -> list[dict[str, Any]]:
    # `input` and `ctx` may hold the whole (possibly huge or binary) input or exception objects.
    return [
        {"loc": [str(part) for part in e.get("loc", ())], "msg": str(e.get("msg", "")), "type": str(e.get("type", ""))}
        for e in exc.errors()[:20]
    ]


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(LearnloopError)
    async def learnloop_error(request: Request, exc: LearnloopError) -> JSONResponse:
        status = status_for(exc)
        if status >= 500:
            log.error("%s on %s %s: %s", exc.code, request.method, request.url.path, exc.message)
        headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
        if isinstance(exc, LinkLocked):
            headers = {"Retry-After": str(exc.details.get("retry_after", 60))}
        return JSONResponse(error_body(exc.code, exc.message, **_jsonable(exc.details)), status, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def request_invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        details = _validation_details(exc)
        first = details[0] if details else {"loc": [], "msg": "invalid request"}
        where = ".".join(p for p in first["loc"] if p not in ("body", "query", "path", "header")) or "request"
        message = f"{where}: {first['msg']}" + (f" (and {len(details) - 1} more)" if len(details) > 1 else "")
        return JSONResponse(error_body("validation_error", message, errors=details), 422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        message = exc.detail if isinstance(exc.detail, str) else code.replace("_", " ")
        return JSONResponse(error_body(code, message), exc.status_code, headers=exc.headers)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return JSONResponse(error_body("internal_error", "internal error; see the server log"), 500)


def _jsonable(details: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in details.items():
        if key in ("code", "message"):
            continue
        out[key] = value if isinstance(value, str | int | float | bool | list | dict | type(None)) else str(value)
    return out
