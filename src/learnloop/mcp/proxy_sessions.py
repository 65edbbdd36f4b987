"""The proxy's per-client sessions: which tools a client was shown in its current correlation window."""

from __future__ import annotations

import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["ProxySession", "SessionTable"]


@dataclass
class ProxySession:
    id: str
    user: str | None = None  # whose signals the session records
    listed: list[str] | None = None  # exposed names shown for the current window
    context: str | None = None
    extra: list[str] = field(default_factory=list)  # found by search in this window
    used_at: float = 0.0


class SessionTable:
    """The proxy's sessions by key, least recently used first: at most `limit` of them, none idle for more
    than `ttl` seconds (every client that ever connected would otherwise stay in memory)."""

    def __init__(self, limit: int = 1024, ttl: float = 3600.0, clock: Callable[[], float] = time.monotonic) -> None:
        if limit < 1 or ttl <= 0:
            raise ValueError("a session table needs limit >= 1 and ttl > 0")
        self.limit, self.ttl, self._clock = limit, ttl, clock
        self._sessions: OrderedDict[str, ProxySession] = OrderedDict()

    def get(self, key: str, user: str | None) -> ProxySession:
        now = self._clock()
        # Least recently used first: the idle ones are at the front.
        while self._sessions:
            oldest = next(iter(self._sessions.values()))
            if now - oldest.used_at <= self.ttl:
                break
            self._sessions.popitem(last=False)
        session = self._sessions.get(key)
        if session is None:
            session = self._sessions[key] = ProxySession(id=f"proxy-{uuid.uuid4().hex[:12]}", user=user)
            while len(self._sessions) > self.limit:
                self._sessions.popitem(last=False)
        self._sessions.move_to_end(key)
        session.used_at = now
        return session

    def __len__(self) -> int:
        return len(self._sessions)

    def __contains__(self, key: object) -> bool:
        return key in self._sessions
