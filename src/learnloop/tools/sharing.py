"""Keeping the knowledge a tenant shares free of its users' values (see `shapes`).

New shared rows hold shapes from the start. Rows written before that — or shaped under another gate — are
reduced once per process and tenant, before anything reads them (`ensure_scrubbed`, from the facade and
from the retrieval path), and again whenever a user's privacy choice changes. Nothing user-specific is left
in a shared row afterwards, so forgetting a user, which deletes the user's own rows, leaves none behind.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from weakref import WeakKeyDictionary

from ..stores.tools import ToolStore
from .config import ToolConfig
from .shapes import Redactor, Shaper, schema_constants

__all__ = ["ensure_scrubbed", "tenant_constants", "tenant_shaper"]

log = logging.getLogger("learnloop.tools")

# Per store, the tenants whose shared rows this process has scrubbed.
_SCRUBBED: WeakKeyDictionary[object, set[str]] = WeakKeyDictionary()


async def tenant_constants(store: ToolStore, tenant: str) -> dict[str, frozenset[str]]:
    """Per tool of the tenant's catalog, the values its input schema declares."""
    found: dict[str, frozenset[str]] = {}
    for tool in await store.list_tools(tenant):
        constants = schema_constants(tool.input_schema)
        if constants:
            found[tool.name] = constants
    return found


async def tenant_shaper(store: ToolStore, tenant: str, redactor: Redactor, config: ToolConfig) -> Shaper:
    return Shaper(redactor, config.key_params, await tenant_constants(store, tenant))


async def ensure_scrubbed(
    store: ToolStore, tenant: str, shaper: Callable[[], Awaitable[Shaper]], *, again: bool = False
) -> int:
    """Scrub the tenant's shared rows once in this process (`again`: even if done already)."""
    done = _SCRUBBED.setdefault(store, set())
    if tenant in done and not again:
        return 0
    changed = await store.scrub_shared(tenant, await shaper())
    done.add(tenant)
    if changed:
        log.info("reduced %d shared tool-knowledge rows of tenant %r to call shapes", changed, tenant)
    return changed
