"""Retention policy and the schedule of idle maintenance passes, for every backend.

Two logs are bounded by time: the change log processes replay to keep their search partitions current (kept
an hour by default: it only serves processes catching up), and the 'retrieved' events (kept 30 days, then
folded into per-hour counts so the metrics stay the same). A backend prunes them in passes it runs when idle;
this module says how long rows are kept, how rows are bucketed, and when a pass is due. The passes themselves
(which rows, in which transaction) are the backend's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

__all__ = [
    "COMPACT_EVERY",
    "COUNTER_BUCKET",
    "DEFAULT_RETENTION",
    "PRUNE_EVERY",
    "PassSchedule",
    "RetentionPolicy",
]

# Counters and folded retrievals are kept per hour: fine enough for charts, small enough to keep for years.
COUNTER_BUCKET = 3600
# Seconds between change-log prune passes of one process: the log grows by at most this beyond its retention.
PRUNE_EVERY = 300.0
# Seconds between retrieval-compaction passes of one process: an idle store checks at most this often.
COMPACT_EVERY = 300.0


@dataclass(frozen=True)
class RetentionPolicy:
    """How long the change log and the 'retrieved' events are kept before a pass may remove them."""

    change_log: timedelta = timedelta(hours=1)
    retrieval_events: timedelta = timedelta(days=30)


DEFAULT_RETENTION = RetentionPolicy()


class PassSchedule:
    """When a maintenance pass is due: at most once every `every` seconds of `clock`, again at once while the
    last pass reported a backlog, and on a later step (not now) when the pass could not get its lock."""

    def __init__(self, every: float, clock: Callable[[], datetime]) -> None:
        self.every = every
        self.clock = clock
        self._last: float | None = None

    def start(self, *, busy: bool = False) -> float | None:
        """The time to run a pass at (epoch seconds), recorded as its start; None when no pass is due or the
        caller is `busy` (in the middle of its own transaction)."""
        now = self.clock().timestamp()
        # A clock that went back counts as due: otherwise it would stall the pass until it caught up again.
        if busy or (self._last is not None and self._last <= now < self._last + self.every):
            return None
        self._last = now
        return now

    def finished(self, *, more: bool) -> None:
        """A backlog makes the next step due at once."""
        if more:
            self._last = None

    def blocked(self) -> None:
        """Another writer held the lock: the pass never waits for it, and is due again on the next step."""
        self._last = None
