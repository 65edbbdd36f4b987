"""The optional parts of a backend, found on its `Store`: tool knowledge, the learning agent's tables, the
write gate's quarantine, the HTTP service's keys and counters, and whole-tenant archives.

A backend offers a part as an attribute (`store.tools`, `store.agent`, `store.quarantine`, `store.service`,
`store.archive`, `store.conversations`) that implements the part's protocol; a backend without one simply
lacks the attribute.
Callers outside `stores/` ask here, so none of them needs to know which backend it runs on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

# The protocols name records of the layers that use them (`learnloop.tools`, `learnloop.agent`), and those
# layers ask here for their part: importing the protocols only for the type checker keeps the two apart.
if TYPE_CHECKING:
    from .agent import AgentStore
    from .archive import TenantArchive
    from .base import Store
    from .conversations import ConversationStore
    from .quarantine import QuarantineStore
    from .service import ServiceStore
    from .tools import ToolStore

__all__ = ["agent_part", "archive_part", "conversation_part", "quarantine_part", "service_part", "tool_part"]


def tool_part(store: Store) -> ToolStore | None:
    return cast("ToolStore | None", getattr(store, "tools", None))


def agent_part(store: Store) -> AgentStore | None:
    return cast("AgentStore | None", getattr(store, "agent", None))


def quarantine_part(store: Store) -> QuarantineStore | None:
    return cast("QuarantineStore | None", getattr(store, "quarantine", None))


def service_part(store: Store) -> ServiceStore | None:
    return cast("ServiceStore | None", getattr(store, "service", None))


def archive_part(store: Store) -> TenantArchive | None:
    return cast("TenantArchive | None", getattr(store, "archive", None))


def conversation_part(store: Store) -> ConversationStore | None:
    return cast("ConversationStore | None", getattr(store, "conversations", None))
