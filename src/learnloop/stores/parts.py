"""The optional parts of a backend beside its `Store`: tool knowledge, the learning agent's tables, the write
gate's quarantine, the HTTP service's keys and counters, whole-tenant archives, and the turns' conversation
records, user profiles, the reads of seed 001's metrics, channel identities.

A backend builds its parts once and hands them over as `StoreParts` (`SQLiteStore.parts()`); a backend without
a part leaves it None. They reach the code that uses them through the `Engine`'s constructor (`Engine.tools`,
`Engine.agent_store`, ...), never by looking on the store.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

# The protocols name records of the layers that use them (`learnloop.tools`, `learnloop.agent`), and those
# layers take their part from the engine: importing the protocols only for the type checker keeps the two
# apart (and `stores.base` free of them).
if TYPE_CHECKING:
    from .agent import AgentStore
    from .archive import TenantArchive
    from .conversations import ConversationStore
    from .holdback import HoldbackStore
    from .identities import IdentityStore
    from .learning_metrics import LearningMetricsStore
    from .profiles import ProfileStore
    from .quarantine import QuarantineStore
    from .service import ServiceStore
    from .tools import ToolStore

__all__ = ["PartedStore", "StoreParts", "parts_of"]


@dataclass(frozen=True)
class StoreParts:
    tools: ToolStore | None = None
    agent: AgentStore | None = None
    quarantine: QuarantineStore | None = None
    service: ServiceStore | None = None
    archive: TenantArchive | None = None
    conversations: ConversationStore | None = None
    holdback: HoldbackStore | None = None
    profiles: ProfileStore | None = None
    learning_metrics: LearningMetricsStore | None = None
    identities: IdentityStore | None = None


@runtime_checkable
class PartedStore(Protocol):
    """A store whose backend offers optional parts on the same database."""

    def parts(self) -> StoreParts: ...


def parts_of(store: object) -> StoreParts:
    """The parts `store`'s backend offers (none for a store that offers none)."""
    return store.parts() if isinstance(store, PartedStore) else StoreParts()
