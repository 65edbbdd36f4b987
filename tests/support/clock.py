"""A clock the test moves by hand, to pass as `clock=` to stores and engines."""

from __future__ import annotations

from datetime import datetime, timedelta

from learnloop.models import utcnow

__all__ = ["Clock"]


class Clock:
    """Time the test moves by hand; shared by every store ("process") given the same instance."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or utcnow()

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)
