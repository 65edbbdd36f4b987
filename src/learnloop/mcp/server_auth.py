"""Who is calling the MCP server: a `Principal` (tenant, user, scope).

Over stdio the principal is fixed by configuration. Over HTTP every request carries an API key
(`Authorization: Bearer <key>`) and a `KeyResolver` maps it to a principal. The resolver is a plain callable so
that any key store can sit behind it; `shared_secret` is the simplest one: a single secret for the configured
tenant and user.

A key that acts for a whole tenant (no user) names the user it acts for in the `X-Learnloop-User` header, or
`X-Learnloop-User: *global*` to work on the tenant's global learnings (shown to every user). Without either it
may read the global learnings but not write: a save would otherwise land in every user's context unasked
(`user_required`). A user-bound key acts for its own user only; naming anyone else gets "not found" on every
tool call, as if that user did not exist, never a "forbidden" that would confirm they do.
"""

from __future__ import annotations

import hmac
import inspect
import json
from collections.abc import Awaitable, Callable
from typing import NamedTuple

from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import NotFound, PermissionDenied, UserRequired, ValidationError
from ..models import check_identifier

__all__ = [
    "GLOBAL_USER",
    "PRINCIPAL_KEY",
    "USER_HEADER",
    "BearerAuth",
    "KeyResolver",
    "Principal",
    "UserRequired",
    "acting_for",
    "require_owner",
    "require_write",
    "resolve_key",
    "shared_secret",
]

# Where the middleware leaves the principal in the ASGI scope; the MCP handlers read it back from the request.
PRINCIPAL_KEY = "learnloop.principal"
USER_HEADER = "x-learnloop-user"
# What a tenant-wide caller names instead of a user to work on the tenant's global learnings. Not a valid user
# id (those start with a letter or digit), so it can never be mistaken for one.
GLOBAL_USER = "*global*"

_WRITE_SCOPES = frozenset({"write", "admin"})


class Principal(NamedTuple):
    """The caller: learnings are read and written for `tenant` and `user`. `user` None reads the tenant's
    global learnings only, and writes them only with `shared` (the caller said `*global*`, or the operator
    configured a server without a user).

    `scope` is a space- or comma-separated list; `write` or `admin` allow changes, anything else reads only.
    `unknown_user` is a user the request named but the key may not act for: every tool call answers that the
    user was not found.
    """

    tenant: str
    user: str | None
    scope: str = "write"
    shared: bool = False
    unknown_user: str | None = None

    @property
    def can_write(self) -> bool:
        return not _WRITE_SCOPES.isdisjoint(self.scope.replace(",", " ").split())


KeyResolver = Callable[[str], Principal | Awaitable[Principal | None] | None]
"""`resolve(api_key) -> Principal | None` (sync or async); None means the key is unknown."""


def shared_secret(secret: str, tenant: str, user: str | None, *, shared: bool = False) -> KeyResolver:
    """A resolver accepting exactly one key, mapped to the configured tenant and user with write scope. Without
    a user the key is tenant-wide: requests name their user, unless `shared` makes it stand for the tenant's
    global learnings."""
    if not secret:
        raise ValueError("the shared MCP key must not be empty")
    expected = secret.encode()
    principal = Principal(tenant=tenant, user=user, scope="write", shared=shared and user is None)

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
    # A Principal, or a plain (tenant, user, scope) tuple from a key store: the later fields have defaults.
    return Principal(*found)


def require_write(principal: Principal, tool: str) -> None:
    if not principal.can_write:
        raise PermissionDenied(f"{tool} changes learnings; this key's scope ({principal.scope!r}) only reads")


def require_owner(principal: Principal, tool: str) -> None:
    """A write must know whose learnings it changes: a user, or explicitly the tenant's global ones."""
    if principal.user is None and not principal.shared:
        raise UserRequired(
            f"{tool} needs to know whose learnings to change: send the header 'X-Learnloop-User: <user>', or "
            f"'X-Learnloop-User: {GLOBAL_USER}' for the tenant's global learnings (shown to every user)",
            field="user",
        )


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
    """The principal with the user (or `*global*`) named by the request. NotFound if the key is bound to
    another user: anything outside its user reads as missing, like in the REST API."""
    if requested is None or requested == principal.user:
        return principal
    if principal.user is not None:
        raise NotFound(f"user {requested!r} not found", user=requested)
    if requested == GLOBAL_USER:
        return principal._replace(shared=True)
    return principal._replace(user=check_identifier(requested, "user"), shared=False)


class BearerAuth:
    """ASGI middleware: every HTTP request needs a bearer key the resolver knows; 401 otherwise.

    The check runs per request (not per MCP session), so a session id alone never grants access. A user-bound
    key naming another user in `X-Learnloop-User` is answered 404 `not_found`; with `defer_unknown_user` the
    request goes on with `Principal.unknown_user` set instead, for an app that answers "not found" itself
    (`LearnloopMCP`: as a tool error, which a client shows the model, where a 404 looks like a wrong URL).
    """

    def __init__(self, app: ASGIApp, resolver: KeyResolver, *, defer_unknown_user: bool = False) -> None:
        self.app = app
        self.resolver = resolver
        self.defer_unknown_user = defer_unknown_user

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
        requested = _header(scope, USER_HEADER.encode())
        try:
            principal = acting_for(principal, requested)
        except NotFound as exc:
            # Never a 403: a user-bound key naming someone else gets what it gets for any id outside its reach.
            if not self.defer_unknown_user:
                await _refuse(send, 404, exc.code, exc.message)
                return
            principal = principal._replace(unknown_user=requested)
        except ValidationError as exc:
            await _refuse(send, 400, exc.code, exc.message)
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
