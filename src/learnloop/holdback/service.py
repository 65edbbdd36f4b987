"""`loop.holdback`: switch the experiment on or off, pin users, and read the report."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError, ValidationError
from ..models import Scope
from ..sdk_edge import sdk_edge
from ..stores.holdback import Arm, HoldbackSettings, HoldbackStore, Mode
from .assignment import Assignment, context_assignment, forget_cached
from .outcomes import turn_outcomes
from .report import HoldbackReport, build_report

if TYPE_CHECKING:
    from ..engine import Engine

__all__ = ["HoldbackService"]

_ARMS = ("memory", "holdback")
_MODES = ("holdback", "aa")
_MAX_TURNS = 500_000  # the newest turns a report reads at most
_MAX_RESAMPLES = 20_000


@sdk_edge
class HoldbackService:
    """The holdback experiment of one tenant (see `learnloop.holdback`)."""

    __learnloop_async__ = True

    def __init__(self, engine: Engine, tenant: str) -> None:
        self._engine = engine
        self.tenant = Scope(tenant=tenant).tenant

    def __repr__(self) -> str:
        return f"HoldbackService(tenant={self.tenant!r})"

    @property
    def store(self) -> HoldbackStore:
        store = self._engine.holdback
        if store is None:
            raise ConfigurationError(f"{self._engine.store!r} keeps no holdback settings")
        return store

    async def configure(
        self,
        *,
        share: float = 0.1,
        mode: Mode | str = "holdback",
        enabled: bool = True,
        salt: str = "",
        namespace: str | None = None,
    ) -> HoldbackSettings:
        """Run the experiment: `share` of the users (0 < share < 1) get no memory in their context. `mode="aa"`
        gives both arms memory (the A/A check). `enabled=False` switches it off; `namespace` sets that namespace
        apart from the tenant's default. A new `salt` draws the arms afresh."""
        if isinstance(share, bool) or not isinstance(share, int | float) or not 0 < share < 1:
            raise ValidationError("share must be a number between 0 and 1 (exclusive)", field="share")
        if mode not in _MODES:
            raise ValidationError(f"mode must be one of {', '.join(_MODES)}", field="mode")
        if not isinstance(enabled, bool):
            raise ValidationError("enabled must be true or false", field="enabled")
        if not isinstance(salt, str) or len(salt) > 100:
            raise ValidationError("salt must be a string of at most 100 characters", field="salt")
        settings = HoldbackSettings(
            share=float(share),
            mode=mode,  # type: ignore[arg-type]
            enabled=enabled,
            salt=salt,
            namespace=_namespace(namespace),
        )
        await self._engine.ensure_started()
        stored = await self.store.put_settings(self.tenant, settings, self._engine.clock())
        forget_cached(self._engine, self.tenant)
        return stored

    async def switch_off(self, *, namespace: str | None = None) -> HoldbackSettings | None:
        """Every user gets memory again (the settings are kept, with `enabled` false)."""
        current = await self.settings(namespace=namespace, inherited=False)
        if current is None:
            return None
        await self._engine.ensure_started()
        stored = await self.store.put_settings(
            self.tenant, dataclasses.replace(current, enabled=False), self._engine.clock()
        )
        forget_cached(self._engine, self.tenant)
        return stored

    async def settings(self, *, namespace: str | None = None, inherited: bool = True) -> HoldbackSettings | None:
        """The settings that govern `namespace` (its own, else the tenant's when `inherited`)."""
        await self._engine.ensure_started()
        wanted = _namespace(namespace)
        found = {s.namespace: s for s in await self.store.list_settings(self.tenant)}
        return found.get(wanted) or (found.get("") if inherited else None)

    async def all_settings(self) -> list[HoldbackSettings]:
        await self._engine.ensure_started()
        return await self.store.list_settings(self.tenant)

    async def pin(self, user: str, arm: Arm | str) -> None:
        """Keep `user` in `arm` whatever the hash says."""
        if arm not in _ARMS:
            raise ValidationError("arm must be 'memory' or 'holdback'", field="arm")
        await self._engine.ensure_started()
        await self.store.pin(self.tenant, _user(user), arm, self._engine.clock())  # type: ignore[arg-type]
        forget_cached(self._engine, self.tenant)

    async def unpin(self, user: str) -> None:
        await self._engine.ensure_started()
        await self.store.pin(self.tenant, _user(user), None, self._engine.clock())
        forget_cached(self._engine, self.tenant)

    async def pins(self) -> dict[str, Arm]:
        await self._engine.ensure_started()
        return await self.store.pins(self.tenant)

    async def assignment(self, user: str, *, namespace: str | None = None) -> Assignment:
        """The arm `user` is in now (what their next turn's context follows)."""
        await self._engine.ensure_started()
        return await context_assignment(self._engine, Scope(tenant=self.tenant, user=_user(user)), namespace)

    async def report(
        self,
        *,
        days: float | None = None,
        namespace: str | None = None,
        resamples: int = 2_000,
        seed: int = 0,
        now: datetime | None = None,
    ) -> HoldbackReport:
        """Both arms compared on every outcome (see `learnloop.holdback.report`); `days` limits it to the turns
        begun in that window (user turn numbers count from the start of the window), `namespace` to the turns
        of one namespace."""
        if days is not None and (isinstance(days, bool) or not isinstance(days, int | float) or not days > 0):
            raise ValidationError("days must be a positive number", field="days")
        if isinstance(resamples, bool) or not isinstance(resamples, int) or not 100 <= resamples <= _MAX_RESAMPLES:
            raise ValidationError(f"resamples must be a whole number from 100 to {_MAX_RESAMPLES}", field="resamples")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValidationError("seed must be a non-negative whole number", field="seed")
        await self._engine.ensure_started()
        now = now or self._engine.clock()
        since = None if days is None else now - timedelta(days=days)
        turns = await self.store.armed_turns(self.tenant, since, _MAX_TURNS)
        settings = [_settings_view(s) for s in await self.store.list_settings(self.tenant)]
        return build_report(
            self.tenant,
            turn_outcomes(turns, None if namespace is None else _namespace(namespace)),
            now=now,
            since=since,
            settings=settings,
            resamples=resamples,
            seed=seed,
        )


def _namespace(namespace: str | None) -> str:
    if namespace is None:
        return ""
    if not isinstance(namespace, str) or not namespace.strip() or len(namespace) > 64:
        raise ValidationError("namespace must be 1-64 characters", field="namespace")
    return namespace.strip()


def _user(user: str) -> str:
    if not isinstance(user, str) or not user.strip() or len(user) > 128:
        raise ValidationError("user must be 1-128 characters", field="user")
    return user.strip()


def _settings_view(settings: HoldbackSettings) -> dict[str, Any]:
    view = dataclasses.asdict(settings)
    view["namespace"] = settings.namespace or None
    return view
