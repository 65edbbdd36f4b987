"""The holdback experiment's storage (`learnloop.holdback`): settings per tenant (and namespace), users pinned
to an arm, and the turns the report measures. A backend offers it as `StoreParts.holdback`.

Outcomes are not copied into a table of their own: a turn begun under the experiment carries its arm on its
conversation record (`context["holdback"]`), and the record holds its verdict, tool calls and session; the report
reads them from there, so an outcome that arrives later (the next message's verdict, silence) is never stale.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

__all__ = ["Arm", "ArmedTurn", "HoldbackSettings", "HoldbackStore", "Mode"]

Arm = Literal["memory", "holdback"]
Mode = Literal["holdback", "aa"]


@dataclass(frozen=True)
class HoldbackSettings:
    """`share` of the users are held back (by a stable hash of tenant, namespace, salt and user). In mode `aa`
    both arms get memory: the report must then find no effect. `namespace` '' is the tenant's default."""

    share: float = 0.1
    mode: Mode = "holdback"
    enabled: bool = True
    salt: str = ""
    namespace: str = ""
    updated_at: datetime | None = None


@dataclass(frozen=True)
class ArmedTurn:
    """One conversation turn of a tenant as the report reads it. `arm` and `experiment` are None for a turn
    begun with no experiment running (it still counts in its user's turn numbers)."""

    user: str
    session: str
    started_at: datetime
    status: str
    arm: Arm | None
    experiment: Mode | None
    feedback_type: str | None
    feedback_score: float | None
    tool_calls: list[dict[str, Any]]
    namespace: str = ""


class HoldbackStore(Protocol):
    async def list_settings(self, tenant: str) -> list[HoldbackSettings]: ...

    async def put_settings(self, tenant: str, settings: HoldbackSettings, at: datetime) -> HoldbackSettings: ...

    async def delete_settings(self, tenant: str, namespace: str) -> bool: ...

    async def pins(self, tenant: str) -> dict[str, Arm]: ...

    async def pin(self, tenant: str, user: str, arm: Arm | None, at: datetime) -> None:
        """Pin `user` to `arm`; None removes the pin."""
        ...

    async def armed_turns(self, tenant: str, since: datetime | None, limit: int) -> list[ArmedTurn]:
        """The tenant's turns begun since `since` (all when None), oldest first, at most `limit` (the newest)."""
        ...
