"""The knowledge side of `loop.tools`: templates, recovery patterns, statistics, learned pairs, signals,
insights, context sections and privacy choices — and the plumbing the whole facade shares (settings,
store, scope, query vectors, the write gate and the call shapes shared rows keep: `shapes`, `sharing`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Mapping
from typing import Any

from ..engine import Engine
from ..errors import NotConfigured, ValidationError
from ..models import Scope, choice
from ..prompting import Section
from ..stores.base import Vector
from ..stores.tools import ToolStore
from . import insights
from .config import ToolConfig, remember_config
from .context import tool_sections
from .models import (
    AggregationReport,
    Insight,
    LearnedPair,
    PrivacyMode,
    QueryTemplate,
    RecoveryPattern,
    RecoverySuggestion,
    SeedTemplate,
    SignalKind,
    ToolSignal,
    ToolStat,
)
from .recovery import classify_error, suggest
from .shapes import Redactor, Shaper
from .sharing import ensure_scrubbed, tenant_constants
from .templates import MATCH_CONFIDENCE, match_template, rank_templates

__all__ = ["ToolKnowledgeView", "tool_store_of"]

_PRIVACY_TTL = 5.0
# Schemas change when tools are registered, here (which resets this) or, rarely, in another process; reading
# the catalog costs a pass over every schema, so it is not done per call.
_CONSTANTS_TTL = 300.0


def tool_store_of(engine: Engine) -> ToolStore | None:
    """The engine's tool store, if its backend has one."""
    return engine.tools


class ToolKnowledgeView:
    """What a tenant's tool layer knows; `ToolIntelligence` adds the catalog, routing and signals."""

    def __init__(self, engine: Engine, tenant: str, config: ToolConfig | None = None) -> None:
        self._engine = engine
        self.tenant = Scope(tenant=tenant).tenant
        self._privacy: dict[str, tuple[float, PrivacyMode]] = {}
        self._constants: tuple[float, dict[str, frozenset[str]]] | None = None
        self.config = config or ToolConfig()

    @property
    def config(self) -> ToolConfig:
        return self._config

    @config.setter
    def config(self, value: ToolConfig) -> None:
        self._config = value
        store = tool_store_of(self._engine)
        if store is not None:
            remember_config(store, self.tenant, value)

    def configure(self, **changes: Any) -> ToolConfig:
        """Change settings: `loop.tools.configure(k=5, privacy="full", key_params={"analytics": ["sort_key"]})`."""
        if "privacy" in changes:
            changes["privacy"] = choice(PrivacyMode, changes["privacy"], "privacy")
        self.config = dataclasses.replace(self.config, **changes)
        return self.config

    @property
    def store(self) -> ToolStore:
        store = tool_store_of(self._engine)
        if store is None:
            raise NotConfigured(f"the store {self._engine.store!r} has no tool intelligence")
        return store

    def _scope(self, user: str | None) -> Scope:
        return Scope(tenant=self.tenant, user=user)

    async def _ready(self) -> ToolStore:
        await self._engine.ensure_started()
        store = self.store
        # Before the first read: shared rows written before shapes existed must not show user values.
        await ensure_scrubbed(store, self.tenant, self._shaper)
        return store

    @property
    def redactor(self) -> Redactor:
        """The engine's write gate, as applied to tool-call values and error texts."""
        return Redactor.of(self._engine.gate)

    async def _shaper(self) -> Shaper:
        """How this tenant's calls are reduced to shapes: the gate, the key parameters, the schemas' enums."""
        cached = self._constants
        if cached is None or time.monotonic() - cached[0] >= _CONSTANTS_TTL:
            cached = self._constants = (time.monotonic(), await tenant_constants(self.store, self.tenant))
        return Shaper(self.redactor, self.config.key_params, cached[1])

    async def _vector(self, query: str, given: Vector | None) -> Vector:
        if given is None:
            return await self._engine.embed_one(query, purpose="query")
        if given.shape != (self._engine.embedder.dimension,):
            raise ValidationError(f"query_vector must have shape ({self._engine.embedder.dimension},)")
        return given

    async def _privacy_of(self, user: str | None) -> PrivacyMode:
        if user is None:
            return self.config.privacy
        cached = self._privacy.get(user)
        if cached is not None and time.monotonic() - cached[0] < _PRIVACY_TTL:
            return cached[1]
        mode = await (await self._ready()).privacy(self.tenant, user) or self.config.privacy
        self._privacy[user] = (time.monotonic(), mode)
        return mode

    # -- knowledge ---------------------------------------------------------------------------------------

    async def templates(
        self,
        *,
        user: str | None = None,
        intent: str | None = None,
        tool: str | None = None,
        include_archived: bool = False,
    ) -> list[QueryTemplate]:
        store = await self._ready()
        now = self._engine.clock()
        found = await store.templates(
            self._scope(user), now, intent=intent, tool=tool, include_archived=include_archived
        )
        return sorted(
            found,
            key=lambda t: (
                t.status != "active",
                -t.effective_confidence,
                -t.last_used_at.timestamp(),
                t.avg_latency_ms,
            ),
        )

    async def best_template(
        self,
        *,
        intent: str | None = None,
        query: str | None = None,
        query_vector: Vector | None = None,
        tool: str | None = None,
        arguments: Mapping[str, Any] | None = None,
        user: str | None = None,
        min_confidence: float = MATCH_CONFIDENCE,
        exclude: Iterable[int] = (),
    ) -> QueryTemplate | None:
        """The template to use (seed 001 §4.1, §6.3), settled by confidence, recency, speed (§8.3). With an
        intent, a `tool` and its `arguments`: one of that tool whose parameters are more than 0.8 alike, else the
        intent's best at confidence 0.9; with an intent alone, its best at `min_confidence` (0.7); with a query
        and no intent, the best of those used for similar queries. `exclude` leaves templates out (ones that
        just failed: the next best is tried)."""
        store = await self._ready()
        vector = None if query is None and query_vector is None else await self._vector(query or "", query_vector)
        lookup_tool = None if arguments is not None else tool
        found = await store.templates(
            self._scope(user), self._engine.clock(), intent=intent, tool=lookup_tool, vector=vector
        )
        skipped = set(exclude)
        if intent is not None:
            shaper = await self._shaper()
            return match_template(
                found,
                intent,
                tool=tool,
                params=arguments,
                shape=shaper.shape,
                exclude=skipped,
                min_confidence=min_confidence,
            )
        floor = self.config.sections.template_similarity
        found = [t for t in found if t.similarity is not None and t.similarity >= floor and t.id not in skipped]
        ranked = rank_templates(found, min_effective=min_confidence)
        return ranked[0] if ranked else None

    async def seed_templates(self, seeds: Iterable[SeedTemplate | Mapping[str, Any]]) -> int:
        """Cold-start templates (seed 001 §8.2), shared by the tenant, starting at confidence 0.5. They are
        the app's: their parameters are kept as given, except what the write gate refuses."""
        store = await self._ready()
        shaper = await self._shaper()
        parsed = [s if isinstance(s, SeedTemplate) else SeedTemplate.model_validate(s) for s in seeds]
        gated = [s.model_copy(update={"params": self.redactor.arguments(s.params)}) for s in parsed]
        pairs = [(s, shaper.signature(s.tool, s.params)) for s in gated]
        return await store.seed_templates(self.tenant, pairs, self._engine.clock())

    async def recovery_patterns(
        self, *, user: str | None = None, tool: str | None = None, include_archived: bool = False
    ) -> list[RecoveryPattern]:
        store = await self._ready()
        now = self._engine.clock()
        return await store.recovery_patterns(self._scope(user), now, tool=tool, include_archived=include_archived)

    async def suggest_recovery(
        self,
        tool: str,
        arguments: Mapping[str, Any] | None,
        error: str | None,
        *,
        error_type: str | None = None,
        user: str | None = None,
    ) -> RecoverySuggestion | None:
        """What worked before when this call failed like this (exact fingerprint, else same error and tool)."""
        store = await self._ready()
        error_type = error_type or classify_error(error)
        fingerprint = (await self._shaper()).fingerprint(error_type, tool, dict(arguments or {}))
        scope, now = self._scope(user), self._engine.clock()
        patterns = await store.recovery_patterns(scope, now, fingerprint=fingerprint)
        patterns += await store.recovery_patterns(scope, now, error_type=error_type, tool=tool)
        return suggest(patterns, fingerprint, error_type, tool)

    async def stats(self, *, user: str | None = None, intent: str | None = None) -> list[ToolStat]:
        return await (await self._ready()).tool_stats(self._scope(user), intent=intent)

    async def learned_pairs(
        self, *, user: str | None = None, tool: str | None = None, limit: int = 100
    ) -> list[LearnedPair]:
        store = await self._ready()
        return await store.learned_pairs(self._scope(user), self._engine.clock(), tool=tool, limit=limit)

    async def signals(
        self,
        *,
        user: str | None = None,
        session: str | None = None,
        kind: SignalKind | str | None = None,
        after: int = 0,
        limit: int = 100,
    ) -> list[ToolSignal]:
        store = await self._ready()
        kind = None if kind is None else choice(SignalKind, kind, "kind")
        return await store.signals(self._scope(user), session=session, kind=kind, after=after, limit=limit)

    async def insights(self, *, type: str | None = None) -> list[Insight]:
        return await (await self._ready()).insights(self.tenant, self._engine.clock(), type=type)

    async def aggregate_insights(self) -> AggregationReport:
        """Run the cross-user aggregator now (it also runs every `insight_every` recorded calls)."""
        store = await self._ready()
        return await insights.aggregate(store, self.tenant, self.config, self._engine.clock(), await self._shaper())

    async def context_sections(
        self, user: str | None, query: str, *, query_vector: Vector | None = None, intent: str | None = None
    ) -> list[Section]:
        """The tool-layer sections of the context block for this user and query (seed 001 §8.9)."""
        store = await self._ready()
        vector = await self._vector(query, query_vector)
        now = self._engine.clock()
        scope, config = self._scope(user), self.config
        return await tool_sections(store, scope, query, vector, config, now, intent=intent, redactor=self.redactor)

    # -- privacy -----------------------------------------------------------------------------------------

    async def set_privacy(self, user: str, mode: PrivacyMode | str) -> None:
        """What is kept of `user`'s queries: "full", "hashed" (hash + embedding) or "opt_out" (nothing)."""
        mode = choice(PrivacyMode, mode, "mode")
        store = await self._ready()
        await store.set_privacy(self.tenant, user, mode, self._engine.clock())
        self._privacy[user] = (time.monotonic(), mode)
        # Shared rows hold no user values; a privacy change checks that again, under the current gate.
        await ensure_scrubbed(store, self.tenant, self._shaper, again=True)

    async def scrub_shared(self) -> int:
        """Reduce the tenant's shared templates, recovery patterns and insights to call shapes now (done once
        per process on first use anyway); returns how many rows changed."""
        store = await self._ready()
        return await ensure_scrubbed(store, self.tenant, self._shaper, again=True)

    async def privacy(self, user: str) -> PrivacyMode:
        return await self._privacy_of(user)
