"""Who is calling the MCP server: a `Principal` (tenant, user, scope).

Over stdio the principal is fixed by configuration. Over HTTP every request carries an API key
(`Authorization: Bearer <key>`) and a `KeyResolver` maps it to a principal. The resolver is a plain callable so
that any key store can sit behind it; `shared_secret` is the simplest one: a single secret for the configured
tenant and user. A key that acts for a whole tenant (no user) may name the user it acts for in the
`X-Learnloop-User` header; a user-bound key acts for its own user only.
"""

from __future__ import annotations

import hmac
import inspect
import json
from collections.abc import Awaitable, Callable
from typing import NamedTuple

from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import PermissionDenied, ValidationError
from ..models import check_identifier

__all__ = [
    "PRINCIPAL_KEY",
    "USER_HEADER",
    "BearerAuth",
    "KeyResolver",
    "Principal",
    "acting_for",
    "require_write",
    "resolve_key",
    "shared_secret",
]

# Where the middleware leaves the principal in the ASGI scope; the MCP handlers read it back from the request.
PRINCIPAL_KEY = "learnloop.principal"
USER_HEADER = "x-learnloop-user"

_WRITE_SCOPES = frozenset({"write", "admin"})


class Principal(NamedTuple):
    """The caller: learnings are read and written for `tenant` and `user` (None = the tenant's global ones).

    `scope` is a space- or comma-separated list; `write` or `admin` allow changes, anything else reads only.
    """

    tenant: str
    user: str | None
    scope: str = "write"

    @property
    def can_write(self) -> bool:
        return not _WRITE_SCOPES.isdisjoint(self.scope.replace(",", " ").split())


KeyResolver = Callable[[str], Principal | Awaitable[Principal | None] | None]
"""`resolve(api_key) -> Principal | None` (sync or async); None means the key is unknown."""


def shared_secret(secret: str, tenant: str, user: str | None) -> KeyResolver:
    """A resolver accepting exactly one key, mapped to the configured tenant and user with write scope."""
    if not secret:
        raise ValueError("the shared MCP key must not be empty")
    expected = secret.encode()
    principal = Principal(tenant=tenant, user=user, scope="write")

    def resolve(api_key: str) -> Principal | None:
        # Constant-time comparison: the key is the only thing standing between the network and the memory.
        return principal if hmac.compare_digest(api_key.encode(), expected) else None

    return resolve


async def resolve_key(resolver: KeyResolver, api_key: str) -> Principal | None:
    found = resolver(api_key)
    if inspect.isawaitable(found):
        found = await found
    if found is None:
        return None
    tenant, user, scope = found
    return Principal(tenant=tenant, user=user, scope=scope)


def require_write(principal: Principal, tool: str) -> None:
    if not principal.can_write:
        raise PermissionDenied(f"{tool} changes learnings; this key's scope ({principal.scope!r}) only reads")


def _header(scope: Scope, wanted: bytes) -> str | None:
    for name, value in scope.get("headers", []):
        if name == wanted:
            return bytes(value).decode("latin-1").strip() or None
    return None


def _bearer(scope: Scope) -> str | None:
    kind, _, token = (_header(scope, b"authorization") or "").partition(" ")
    if kind.lower() != "bearer":
        return None
    return token.strip() or None


def acting_for(principal: Principal, requested: str | None) -> Principal:
    """The principal with the user named by the request, if its key may act for that user."""
    if requested is None or requested == principal.user:
        return principal
    if principal.user is not None:
        raise PermissionDenied(f"this key acts for user {principal.user!r} only")
    return principal._replace(user=check_identifier(requested, "user"))


class BearerAuth:
    """ASGI middleware: every HTTP request needs a bearer key the resolver knows; 401 otherwise.

    The check runs per request (not per MCP session), so a session id alone never grants access.
    """

    def __init__(self, app: ASGIApp, resolver: KeyResolver) -> None:
        self.app = app
        self.resolver = resolver

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        key = _bearer(scope)
        principal = None if key is None else await resolve_key(self.resolver, key)
        if principal is None:
            message = "missing bearer API key" if key is None else "unknown API key"
            await _refuse(send, 401, "unauthenticated", message)
            return
        try:
            principal = acting_for(principal, _header(scope, USER_HEADER.encode()))
        except (PermissionDenied, ValidationError) as exc:
            await _refuse(send, 403, exc.code, exc.message)
            return
        scope[PRINCIPAL_KEY] = principal
        await self.app(scope, receive, send)


async def _refuse(send: Send, status: int, code: str, message: str) -> None:
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="learnloop"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
