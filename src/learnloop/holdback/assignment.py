"""Which arm a user is in, and whether their context may show memory.

A user's arm is a stable hash of (tenant, namespace of the settings, salt, user): the same in every process and
after every restart, with nothing stored per user. A pin overrides the hash. `context_assignment` is the one
question every part of a turn's context asks before it adds memory (learnings, templates, experience files, a
user profile): `if assignment.shows_memory: ...`. Learning itself never asks: a held-back user's turns still
teach, so switching them on later loses nothing.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..models import Scope
from ..stores.holdback import Arm, HoldbackSettings, Mode

if TYPE_CHECKING:
    from ..engine import Engine

__all__ = ["NOT_ENROLLED", "Assignment", "context_assignment", "forget_cached", "hashed_arm", "settings_for"]

# Settings and pins a process read are reused this long: a retrieval must not wait on a second query, and a
# change made by another process shows within it (this process's own changes show at once).
_CACHE_SECONDS = 5.0
_REGISTRY = "_learnloop_holdback_cache"


@dataclass(frozen=True)
class Assignment:
    """`experiment` is None when no experiment runs for the user (no settings, switched off, no user)."""

    arm: Arm = "memory"
    experiment: Mode | None = None
    pinned: bool = False

    @property
    def shows_memory(self) -> bool:
        """Whether the turn's context may hold memory: not in the holdback arm of a running holdback."""
        return not (self.experiment == "holdback" and self.arm == "holdback")

    def record(self) -> dict[str, Any] | None:
        """What the turn's conversation record keeps of it (the report groups outcomes by it)."""
        if self.experiment is None:
            return None
        return {"arm": self.arm, "experiment": self.experiment, "pinned": self.pinned}


NOT_ENROLLED = Assignment()


def hashed_arm(tenant: str, user: str, settings: HoldbackSettings) -> Arm:
    digest = hashlib.sha256("\x1f".join((tenant, settings.namespace, settings.salt, user)).encode()).digest()
    return "holdback" if int.from_bytes(digest[:8], "big") / 2**64 < settings.share else "memory"


def settings_for(all_settings: list[HoldbackSettings], namespace: str | None) -> HoldbackSettings | None:
    """The namespace's own settings when it has them, else the tenant's."""
    by_namespace = {s.namespace: s for s in all_settings}
    return by_namespace.get(namespace or "") or by_namespace.get("")


@dataclass
class _Cached:
    settings: list[HoldbackSettings]
    pins: dict[str, Arm]
    read_at: float


def _cache(engine: Engine) -> dict[str, _Cached]:
    found: dict[str, _Cached] = engine.__dict__.setdefault(_REGISTRY, {})
    return found


def forget_cached(engine: Engine, tenant: str) -> None:
    """After this process changed the tenant's settings or pins: the next assignment reads them afresh."""
    _cache(engine).pop(tenant, None)


async def _read(engine: Engine, tenant: str) -> _Cached | None:
    store = engine.holdback
    if store is None:
        return None
    cache = _cache(engine)
    found = cache.get(tenant)
    now = time.monotonic()
    if found is None or now - found.read_at > _CACHE_SECONDS:
        found = cache[tenant] = _Cached(await store.list_settings(tenant), await store.pins(tenant), now)
    return found


async def context_assignment(engine: Engine, scope: Scope, namespace: str | None) -> Assignment:
    """The arm of `scope`'s user for a context in `namespace` (see the module's docstring)."""
    if scope.user is None:
        return NOT_ENROLLED
    cached = await _read(engine, scope.tenant)
    if cached is None:
        return NOT_ENROLLED
    settings = settings_for(cached.settings, namespace)
    if settings is None or not settings.enabled:
        return NOT_ENROLLED
    pinned = cached.pins.get(scope.user)
    if pinned is not None:
        return Assignment(arm=pinned, experiment=settings.mode, pinned=True)
    return Assignment(arm=hashed_arm(scope.tenant, scope.user, settings), experiment=settings.mode)
