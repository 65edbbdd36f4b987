"""The public API is what `learnloop.__all__` says; changing it is a deliberate act, so it is locked here."""

from __future__ import annotations

import learnloop

PUBLIC = {
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
    "LinkCodeInvalid",
    "LinkLocked",
    "Limits",
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
}


def test_all_is_locked() -> None:
    assert set(learnloop.__all__) == PUBLIC


def test_every_public_name_exists() -> None:
    for name in learnloop.__all__:
        assert hasattr(learnloop, name), name


def test_errors_share_one_root() -> None:
    others = {
        "LinkCodeInvalid",
        "LinkLocked",
        "NotFound",
        "InvalidCategory",
        "InvalidTransition",
        "NotConfigured",
        "PermissionDenied",
        "WriteRefused",
    }
    errors = [getattr(learnloop, n) for n in learnloop.__all__ if n.endswith("Error") or n in others]
    assert all(issubclass(e, learnloop.LearnloopError) for e in errors)
    assert len({e.code for e in errors}) == len(errors)
