"""When the learning agent's queue lets a worker claim a package, for every backend: the lease a claim holds,
when a claim counts as abandoned, and how long a worker waits before asking again. The backend finds the
session's oldest unfinished package and marks it claimed in its own transaction (SQLite: BEGIN IMMEDIATE;
PostgreSQL: the session's row, SELECT … FOR UPDATE SKIP LOCKED).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass

from ..agent.records import Job

__all__ = ["Claim", "abandoned", "waiting"]

_HOST = socket.gethostname()
# A worker never polls a held claim more often than this, however close its lease is to running out.
_MIN_WAIT = 0.05


@dataclass(frozen=True)
class Claim:
    """A claimed job; or nothing to do (`retry_in`: seconds until a held-back package is due); or the
    session is closed and its worker should stop (`stores.agent.ClaimResult`)."""

    job: Job | None = None
    closed: bool = False
    retry_in: float | None = None


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def abandoned(claimed_by: str | None, claimed_at: float | None, now: float, lease: float) -> bool:
    """A claim whose holder is gone: a dead process on this host (claimers are 'host:pid:…'), or a lease
    nobody renewed."""
    if claimed_at is None or claimed_at + lease < now:
        return True
    host, _, rest = (claimed_by or "").partition(":")
    pid_text = rest.partition(":")[0]
    if host == _HOST and pid_text.isdigit():
        pid = int(pid_text)
        return pid != os.getpid() and not _process_alive(pid)
    return False


def waiting(
    status: str, not_before: float, claimed_at: float | None, claimed_by: str | None, now: float, lease: float
) -> Claim | None:
    """What a claim of the session's oldest unfinished package (in `status` 'pending' or 'claimed') answers
    when it may not take it yet: wait for a live holder's lease, or for a retry's `not_before`. None: take it."""
    if status == "claimed" and not abandoned(claimed_by, claimed_at, now, lease):
        assert claimed_at is not None
        return Claim(retry_in=max(_MIN_WAIT, claimed_at + lease - now))
    if status == "pending" and not_before > now:
        return Claim(retry_in=not_before - now)
    return None
