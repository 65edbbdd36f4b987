"""What a person is told when something fails: a sentence chosen by the error's kind, never its message."""

from __future__ import annotations

from learnloop.channels.base import friendly_error
from learnloop.errors import LLMError, StoreError, WriteRefused


def test_friendly_errors_never_repeat_the_message() -> None:
    secret = "postgres://admin:hunter2@db/prod"
    for error in (StoreError(secret), LLMError(secret), RuntimeError(secret), WriteRefused(secret, "secret")):
        text = friendly_error(error)
        assert secret not in text and "hunter2" not in text and text.startswith("Sorry")
    assert "language model" in friendly_error(LLMError("x"))
