"""learnloop: make LLM agents learn from use.

import learnloop
loop = learnloop.open("brew.db", vocabulary={"equipment": "Boil-off rates, dead space"})
await loop.save("Grainfather Gen 1 boil-off is ~3.5 L/hr", category="equipment", user="alice")
print((await loop.retrieve_context("alice", "how much water boils off?")).block)
"""

from .capture.write import SaveAction, SaveResult
from .config import Settings
from .errors import (
    AuthenticationError,
    ConfigurationError,
    ConflictError,
    EmbedderError,
    InvalidCategory,
    InvalidTransition,
    LearnloopError,
    LinkCodeInvalid,
    LinkLocked,
    LLMError,
    NotConfigured,
    NotFound,
    PermissionDenied,
    StoreError,
    ValidationError,
    WriteRefused,
)
from .factory import build_loop, open
from .lifecycle import LifecyclePolicy
from .loop import Loop
from .models import (
    Category,
    Event,
    Filters,
    Learning,
    LearningType,
    Limits,
    Origin,
    Page,
    RetrievalResult,
    RetrievedItem,
    Source,
    Status,
    Vocabulary,
)
from .retrieval import RetrievalConfig

__version__ = "0.1.0"

__all__ = [
    "AuthenticationError",
    "Category",
    "ConfigurationError",
    "ConflictError",
    "EmbedderError",
    "Event",
    "Filters",
    "InvalidCategory",
    "InvalidTransition",
    "LLMError",
    "Learning",
    "LearningType",
    "LearnloopError",
    "LifecyclePolicy",
    "Limits",
    "LinkCodeInvalid",
    "LinkLocked",
    "Loop",
    "NotConfigured",
    "NotFound",
    "Origin",
    "Page",
    "PermissionDenied",
    "RetrievalConfig",
    "RetrievalResult",
    "RetrievedItem",
    "SaveAction",
    "SaveResult",
    "Settings",
    "Source",
    "Status",
    "StoreError",
    "ValidationError",
    "Vocabulary",
    "WriteRefused",
    "__version__",
    "build_loop",
    "open",
]
