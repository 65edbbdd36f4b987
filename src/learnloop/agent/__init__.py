"""The background learning agent (seed 003): interaction packages queued after each turn, one worker per
session, an LLM with tools over experience files and a knowledge base, events on the live stream.

The main agent never waits for it: `loop.submit_interaction(...)` queues a package and returns; the session's
worker runs the learning agent at its own pace; `loop.experience_context(session)` is what the main agent
reads before its next answer.
"""

from .experience import ExperienceContext
from .knowledge import DocumentKnowledgeBase, KnowledgePort, ReanalysisHandler, ReanalysisRequest
from .package import InteractionPackage, PackageToolCall
from .records import (
    AgentSession,
    ExperienceFile,
    ExperienceFileInfo,
    KnowledgeEdit,
    KnowledgePage,
    KnowledgePointer,
    QueueCounts,
    QueuedInteraction,
    Workspace,
)
from .runtime import AgentConfig
from .service import AgentService, AgentStatus

__all__ = [
    "AgentConfig",
    "AgentService",
    "AgentSession",
    "AgentStatus",
    "DocumentKnowledgeBase",
    "ExperienceContext",
    "ExperienceFile",
    "ExperienceFileInfo",
    "InteractionPackage",
    "KnowledgeEdit",
    "KnowledgePage",
    "KnowledgePointer",
    "KnowledgePort",
    "PackageToolCall",
    "QueueCounts",
    "QueuedInteraction",
    "ReanalysisHandler",
    "ReanalysisRequest",
    "Workspace",
]
