"""`loop.profiles`: the user profile of seed 001 (§2 layer 2, §6.1, §9) — learned from each turn's message,
shown as the `[USER PROFILE]` section of a turn's context, inspectable, editable and forgettable.

    await loop.profiles.learn("alice", "revenue last month?")   # a turn's work does this once per turn
    profile = await loop.profiles.get("alice")                   # favourite metrics, time range, query types …
    await loop.profiles.edit("alice", ProfileEdit(preferred_time_range="last_7_days"))
    await loop.profiles.forget("alice")

Frequencies decay with a 30-day half-life (seed 001 §4.5, user patterns), so a profile follows a user whose
questions change. What a person sets by hand wins over what the patterns say, and passes the write gate first.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..capture.fields import harmful
from ..errors import ConfigurationError, NotFound, ValidationError
from ..models import DEFAULT_NAMESPACE, Scope
from ..prompting import Section
from ..sdk_edge import sdk_edge
from ..stores.profiles import ProfileRecord, ProfileStore
from .llm import llm_analysis
from .models import PatternShare, ProfileEdit, ProfilePattern, UserProfile
from .rules import DEFAULT_RULES, OTHER, IntentRules, QueryAnalysis

if TYPE_CHECKING:
    from ..engine import Engine

__all__ = ["PROFILE_PRIORITY", "PROFILE_TITLE", "ProfileConfig", "ProfileService"]

PROFILE_TITLE = "[USER PROFILE]"
# Seed 001 §8.9: user preferences and patterns come third, after recovery patterns and templates; with the
# user's learnings (the same rank, and before them: a profile is four short lines).
PROFILE_PRIORITY = 3
_REGISTRY = "_learnloop_profile_configs"
KINDS = ("query_type", "intent", "metric", "time_range", "complexity")


@dataclass(frozen=True)
class ProfileConfig:
    rules: IntentRules = DEFAULT_RULES
    # An app's vocabulary per namespace (a turn's namespace picks them); others use `rules`.
    rules_by_namespace: Mapping[str, IntentRules] = field(default_factory=dict)
    half_life_days: float = 30.0
    # True: the engine's chat model reads each message's intent (the rules when there is none, or it fails).
    llm: bool = False
    # The section shows from this many interactions on (one question says little about a user).
    min_interactions: int = 3
    favourite_share: float = 0.2  # a metric is a favourite from this share of the user's metric mentions
    time_range_share: float = 0.3
    max_favourites: int = 3
    max_query_types: int = 3

    def __post_init__(self) -> None:
        if not self.half_life_days > 0:
            raise ValidationError("half_life_days must be positive", field="half_life_days")
        if self.min_interactions < 1:
            raise ValidationError("min_interactions must be at least 1", field="min_interactions")

    def rules_for(self, namespace: str | None) -> IntentRules:
        return self.rules_by_namespace.get(namespace or DEFAULT_NAMESPACE, self.rules)


def _configs(engine: Engine) -> dict[str, ProfileConfig]:
    found: dict[str, ProfileConfig] | None = engine.__dict__.get(_REGISTRY)
    if found is None:
        found = engine.__dict__[_REGISTRY] = {}
    return found


@sdk_edge
class ProfileService:
    """User profiles of one tenant: `loop.profiles`."""

    __learnloop_async__ = True

    def __init__(self, engine: Engine, tenant: str) -> None:
        self._engine = engine
        self.tenant = Scope(tenant=tenant).tenant

    def __repr__(self) -> str:
        return f"ProfileService(tenant={self.tenant!r})"

    @property
    def config(self) -> ProfileConfig:
        return _configs(self._engine).get(self.tenant, ProfileConfig())

    def configure(self, config: ProfileConfig) -> None:
        """The vocabulary's rules, decay and display thresholds for this tenant (this process)."""
        _configs(self._engine)[self.tenant] = config

    @property
    def store(self) -> ProfileStore:
        store = self._engine.profiles
        if store is None:
            raise ConfigurationError(f"{self._engine.store!r} keeps no profiles: profiles need a backend that does")
        return store

    def _scope(self, user: str) -> Scope:
        if not isinstance(user, str) or not user.strip():
            raise ValidationError("a profile belongs to a user: name one", field="user")
        return Scope(tenant=self.tenant, user=user)

    async def analyse(self, message: str, *, namespace: str | None = None) -> QueryAnalysis:
        """Coarse and fine intent, metrics, time range and complexity of one message (nothing is stored)."""
        if not isinstance(message, str) or not message.strip():
            raise ValidationError("message is empty", field="message")
        rules = self.config.rules_for(namespace)
        llm = self._engine.llm
        if self.config.llm and llm is not None:
            return await llm_analysis(llm, rules, message)
        return rules.analyse(message)

    async def learn(
        self, user: str, message: str, *, namespace: str | None = None, at: datetime | None = None
    ) -> QueryAnalysis:
        """Count one message of `user` into their profile (seed 001 §6.1's `learn_from_query`)."""
        scope = self._scope(user)
        analysis = await self.analyse(message, namespace=namespace)
        await self._engine.ensure_started()
        await self.store.observe(scope, patterns_of(analysis), at or self._engine.clock(), self.config.half_life_days)
        return analysis

    async def get(self, user: str) -> UserProfile:
        """The user's profile as of now; NotFound when nothing is known of them."""
        await self._engine.ensure_started()
        record = await self.store.get(self._scope(user))
        if record is None:
            raise NotFound(f"no profile for user {user!r}")
        return profile_of(record, self.config, self._engine.clock())

    async def edit(self, user: str, edit: ProfileEdit) -> UserProfile:
        """Set (or, with null, clear) what the profile says by hand; the rest stays learned."""
        scope = self._scope(user)
        await self._engine.ensure_started()
        current = await self.store.get(scope)
        overrides: dict[str, Any] = dict(current.overrides) if current else {}
        for name in edit.model_fields_set:
            value = getattr(edit, name)
            if value is None:
                overrides.pop(name, None)
                continue
            texts = value if isinstance(value, list) else [value]
            for text in texts:
                if not isinstance(text, str) or not text.strip() or len(text) > 100:
                    raise ValidationError(f"{name}: each value must be 1-100 characters", field=name)
                if harmful(self._engine.gate, text):
                    raise ValidationError(f"{name}: the write gate refuses {text[:20]!r}…", field=name)
            overrides[name] = [t.strip() for t in value] if isinstance(value, list) else value.strip()
        record = await self.store.set_overrides(scope, overrides, self._engine.clock())
        return profile_of(record, self.config, self._engine.clock())

    async def forget(self, user: str, *, kind: str | None = None, values: Sequence[str] | None = None) -> int:
        """Forget the whole profile (no `kind`), or one kind of pattern (some `values` of it, or all); returns
        how many rows went. `loop.forget(user)` forgets the profile with everything else."""
        scope = self._scope(user)
        await self._engine.ensure_started()
        if kind is None:
            return await self.store.forget(scope)
        if kind not in KINDS:
            raise ValidationError(f"kind must be one of {', '.join(KINDS)}", field="kind")
        return await self.store.remove_patterns(scope, kind, values)

    async def section(self, user: str | None) -> Section | None:
        """The `[USER PROFILE]` section of a turn's context, or None (no user, or too little known yet)."""
        if user is None or self._engine.profiles is None:
            return None
        record = await self.store.get(self._scope(user))
        if record is None or (record.interactions < self.config.min_interactions and not record.overrides):
            return None
        return profile_section(profile_of(record, self.config, self._engine.clock()))


def patterns_of(analysis: QueryAnalysis) -> list[tuple[str, str]]:
    """The (kind, value) pairs one message counts into (seed 001 §6.1: intent, complexity, query type, metrics,
    time range)."""
    out = [("query_type", analysis.coarse), ("intent", analysis.fine), ("complexity", analysis.complexity)]
    out += [("metric", m) for m in analysis.metrics]
    if analysis.time_range:
        out.append(("time_range", analysis.time_range))
    return out


def profile_of(record: ProfileRecord, config: ProfileConfig, now: datetime) -> UserProfile:
    half_life = config.half_life_days * 86_400.0
    by_kind: dict[str, list[ProfilePattern]] = defaultdict(list)
    totals: dict[str, float] = defaultdict(float)
    decayed: list[tuple[str, str, float, int, datetime]] = []
    for row in record.patterns:
        weight = row.weight * 0.5 ** (max(0.0, (now - row.last_at).total_seconds()) / half_life)
        decayed.append((row.kind, row.value, weight, row.count, row.last_at))
        totals[row.kind] += weight
    for kind, value, weight, count, last_at in sorted(decayed, key=lambda d: (d[0], -d[2], d[1])):
        share = weight / totals[kind] if totals[kind] > 0 else 0.0
        by_kind[kind].append(
            ProfilePattern(
                kind=kind, value=value, weight=round(weight, 4), count=count, share=round(share, 4), last_at=last_at
            )
        )

    def shares(kind: str, limit: int, floor: float = 0.0) -> list[PatternShare]:
        return [PatternShare(value=p.value, share=p.share) for p in by_kind[kind] if p.share >= floor][:limit]

    overrides = record.overrides
    favourites = [s.value for s in shares("metric", config.max_favourites, config.favourite_share)]
    ranges = shares("time_range", 1, config.time_range_share)
    complexity = by_kind["complexity"][0].value if by_kind["complexity"] else None
    return UserProfile(
        user=record.user,
        interactions=record.interactions,
        favourite_metrics=list(overrides.get("favourite_metrics", favourites)),
        preferred_time_range=overrides.get("preferred_time_range", ranges[0].value if ranges else None),
        query_types=[s for s in shares("query_type", config.max_query_types) if s.value != OTHER],
        intents=shares("intent", 5),
        complexity=complexity,
        patterns=[p for kind in KINDS for p in by_kind[kind]],
        overrides=dict(overrides),
        updated_at=record.updated_at,
    )


def profile_section(profile: UserProfile) -> Section | None:
    """Seed 001 §9's `[USER PROFILE]` lines (only the ones the profile has something to say in)."""
    lines = []
    if profile.favourite_metrics:
        lines.append(f"Favourite metrics: {', '.join(profile.favourite_metrics)}")
    if profile.preferred_time_range:
        lines.append(f"Preferred time range: {profile.preferred_time_range}")
    if profile.query_types:
        common = ", ".join(f"{s.value} ({s.share:.0%})" for s in profile.query_types)
        lines.append(f"Common query types: {common}")
    if profile.complexity:
        lines.append(f"Usual query complexity: {profile.complexity}")
    if not lines:
        return None
    lines.append(f"Interaction count: {profile.interactions}")
    return Section(PROFILE_TITLE, lines, priority=PROFILE_PRIORITY)
