"""Who is calling: API keys from a header or the pages' cookie, resolved to a `Principal`.

Every route takes a `Principal` and works on `loop.for_tenant(principal.tenant)` with the principal's user
scope, so the store's tenant/user scoping applies to every read and write. Something outside that scope
is reported as not found (404), never as forbidden, so ids cannot be probed across tenants or users.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from ..errors import AuthenticationError, PermissionDenied
from ..loop import Loop
from .keys import Principal
from .state import Service, get_service

__all__ = ["COOKIE", "Api", "ApiDep", "api_context", "api_for", "authenticate", "principal_of"]

COOKIE = "learnloop_key"
# Cookie-authenticated writes must carry this header: a cross-site form cannot set it, so a page on another
# site cannot make the browser act with the cookie (SameSite=Strict is the first line, this the second).
CSRF_HEADER = "x-requested-with"
CSRF_VALUE = "learnloop"
_SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}

_bearer = HTTPBearer(auto_error=False, description="An API key: `Authorization: Bearer ll_…`")
_header = APIKeyHeader(name="X-API-Key", auto_error=False, description="The same API key in a header")


def presented_key(request: Request) -> tuple[str | None, bool]:
    """The key a request carries (Authorization: Bearer, then X-API-Key, then the pages' cookie) and
    whether it came from the cookie."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip(), False
    header = request.headers.get("x-api-key", "").strip()
    if header:
        return header, False
    cookie = request.cookies.get(COOKIE)
    return (cookie, True) if cookie else (None, False)


async def principal_of(request: Request) -> Principal:
    raw, from_cookie = presented_key(request)
    if raw is None:
        raise AuthenticationError("missing API key: send 'Authorization: Bearer <key>' or 'X-API-Key: <key>'")
    if from_cookie and request.method not in _SAFE_METHODS and request.headers.get(CSRF_HEADER) != CSRF_VALUE:
        raise PermissionDenied(f"writes authenticated by cookie need the header '{CSRF_HEADER}: {CSRF_VALUE}'")
    principal = await get_service(request).keys.resolve(raw)
    request.state.principal = principal
    return principal


async def authenticate(
    request: Request,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    header: Annotated[str | None, Depends(_header)],
) -> Principal:
    """The FastAPI dependency; the two security parameters only document the schemes in OpenAPI."""
    del bearer, header
    return await principal_of(request)


@dataclass(frozen=True)
class Api:
    """What a route works with: the caller, and the loop bound to the caller's tenant."""

    principal: Principal
    loop: Loop
    service: Service

    @property
    def scope_user(self) -> str | None:
        return self.principal.scope_user

    def acting_for(self, requested: str | None) -> str | None:
        return self.principal.acting_for(requested)

    @property
    def actor(self) -> str:
        """Who the event log names for changes made through this key."""
        p = self.principal
        return f"person:{p.user}" if p.user else f"person:key-{p.key_id}"

    def now(self) -> datetime:
        return self.loop.engine.clock()


def api_for(request: Request, principal: Principal) -> Api:
    service = get_service(request)
    return Api(principal=principal, loop=service.loop.for_tenant(principal.tenant), service=service)


async def api_context(request: Request, principal: Annotated[Principal, Depends(authenticate)]) -> Api:
    return api_for(request, principal)


ApiDep = Annotated[Api, Depends(api_context)]
