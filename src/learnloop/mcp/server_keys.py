"""Where HTTP callers' keys are checked: the service's key store (`learnloop keys create`), and optionally one
shared secret given on the command line. Both end as a `KeyResolver`."""

from __future__ import annotations

import logging

from ..errors import AuthenticationError
from ..loop import Loop
from .server_auth import KeyResolver, Principal, resolve_key

__all__ = ["chain", "store_keys"]

log = logging.getLogger(__name__)

# The key store's roles as MCP scopes: admin and app keys act for the whole tenant, user keys for one user;
# all of them may change learnings within that reach.
_SCOPES = {"admin": "admin", "app": "write", "user": "write"}


def store_keys(loop: Loop) -> KeyResolver | None:
    """The service's API keys, when this store keeps them (SQLite) and the service parts are installed."""
    try:
        from ..server.keys import KeyRing
    except ImportError as exc:  # the `server` extra is missing
        log.warning("API keys from `learnloop keys` are not accepted (%s); only --key is", exc)
        return None
    store = loop.engine.service
    if store is None:
        return None
    ring = KeyRing(store)

    async def resolve(api_key: str) -> Principal | None:
        try:
            found = await ring.resolve(api_key)
        except AuthenticationError:
            return None
        return Principal(tenant=found.tenant, user=found.user, scope=_SCOPES[found.role.value])

    return resolve


def chain(*resolvers: KeyResolver) -> KeyResolver:
    """The first resolver that knows the key decides."""

    async def resolve(api_key: str) -> Principal | None:
        for resolver in resolvers:
            found = await resolve_key(resolver, api_key)
            if found is not None:
                return found
        return None

    return resolve
