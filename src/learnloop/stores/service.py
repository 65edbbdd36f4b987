"""The storage contract of the HTTP service: API keys, write counters, the event stream's start and metric
aggregates. It lives beside the learnings (one database); a backend offers it as `StoreParts.service`."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol, TypeVar, runtime_checkable

from ..models import Scope
from .retention import COUNTER_BUCKET

__all__ = ["COUNTER_BUCKET", "KeyRecord", "MetricRows", "Role", "ServiceStore", "with_compacted_retrievals"]

Role = Literal["admin", "app", "user"]


@dataclass(frozen=True)
class KeyRecord:
    """One stored API key: everything but the secret, which only the holder has."""

    key_id: str
    tenant: str
    user: str | None
    role: Role
    name: str
    salt: str
    digest: str
    created_at: datetime
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True)
class MetricRows:
    """Raw aggregates for one scope; `learnloop.server.metrics` turns them into figures.

    Bucketed rows start with the bucket's start time (epoch seconds). Retrievals (and the 'retrieved' action
    counts) are the live events plus those already folded into `retrieval_counts` (see `event_retention`).
    """

    learnings: list[tuple[str, str, int]]  # status, origin, count
    action_totals: list[tuple[str, int]]  # action, count (all time)
    actions: list[tuple[int, str, int]]  # bucket, action, count
    status_moves: list[tuple[int, str | None, str | None, int]]  # bucket, from, to, count
    purged: list[tuple[int, int]]  # bucket, learnings purged (all were deprecated)
    retrievals: list[tuple[int, int, int]]  # bucket, retrievals, retrievals that returned something
    retrieval_totals: tuple[int, int]
    counters: list[tuple[int, str, int]]  # bucket, counter name, value
    counter_totals: list[tuple[str, int]]


@runtime_checkable
class ServiceStore(Protocol):
    """Bookkeeping the caller should not wait for (`touch_key`, `add_count`) is queued, not awaited; `flush`
    waits for it."""

    async def create_key(self, record: KeyRecord) -> None: ...

    async def get_key(self, key_id: str) -> KeyRecord | None: ...

    async def list_keys(self, tenant: str | None = None) -> list[KeyRecord]: ...

    async def has_active_admin(self, tenant: str) -> bool: ...

    async def revoke_key(self, key_id: str, at: datetime) -> bool: ...

    def touch_key(self, key_id: str, at: datetime) -> None: ...

    def add_count(self, tenant: str, name: str, at: datetime, value: int = 1) -> None: ...

    async def flush(self) -> None: ...

    async def tail_start(self, scope: Scope, count: int) -> int:
        """The event cursor after which the scope's last `count` events follow (for count 0: now)."""
        ...

    async def metric_rows(self, scope: Scope, since: datetime, bucket_seconds: int, counters: bool) -> MetricRows: ...


K = TypeVar("K")


def with_compacted_retrievals(
    live: MetricRows, compacted: Sequence[tuple[int, int, int]], compacted_totals: tuple[int, int]
) -> MetricRows:
    """`live` (read from the event log) with the retrievals already folded into per-hour counts added back
    (`compacted`: bucket, retrievals, hits; see `stores.retention`), so totals, series and hit rates are what
    they were before the events were folded."""
    per_bucket = _add_up([(t, n, h) for t, n, h in live.retrievals], compacted)
    action_totals = _add_up([(a, n, 0) for a, n in live.action_totals], [("retrieved", compacted_totals[0], 0)])
    actions = _add_up([((t, a), n, 0) for t, a, n in live.actions], [((t, "retrieved"), n, 0) for t, n, _ in compacted])
    return dataclasses.replace(
        live,
        action_totals=[(action, n) for action, (n, _) in action_totals.items() if n],
        actions=[(t, action, n) for (t, action), (n, _) in actions.items()],
        retrievals=[(t, n, h) for t, (n, h) in sorted(per_bucket.items())],
        retrieval_totals=(
            live.retrieval_totals[0] + compacted_totals[0],
            live.retrieval_totals[1] + compacted_totals[1],
        ),
    )


def _add_up(*parts: Sequence[tuple[K, int, int]]) -> dict[K, tuple[int, int]]:
    """Rows of (key, count, hits) from several sources, summed per key (in first-seen order)."""
    out: dict[K, tuple[int, int]] = {}
    for rows in parts:
        for key, count, hits in rows:
            n, h = out.get(key, (0, 0))
            out[key] = (n + int(count or 0), h + int(hits or 0))
    return out
