"""How turns behave: when an unfinished turn is abandoned, when silence counts as feedback, how work retries."""

from __future__ import annotations

from dataclasses import dataclass

from ..capture.feedback import SCORES, FeedbackType
from ..errors import ValidationError
from ..tokens import TokenCounter

__all__ = ["TurnConfig"]


@dataclass(frozen=True)
class TurnConfig:
    # A turn not finished this long after it began is abandoned (its tool calls still teach the tool layer).
    expire_seconds: float = 3_600.0
    # Seed 001 §4.4: no reply within 30 minutes is a slight positive for the answer (once per turn).
    silence_seconds: float = 1_800.0
    silence_score: float = SCORES[FeedbackType.NO_REPLY]
    # How often a process looks for expired and silent turns, and for work another process left behind.
    housekeeping_seconds: float = 60.0
    lease_seconds: float = 60.0  # a claim on a turn's work not finished in this time is taken over
    max_attempts: int = 5
    retry_backoff: float = 2.0  # seconds before the second attempt, doubled for each later one
    max_tool_calls: int = 200
    # Seed 001 §8.6: the user's latest message repeated within this many seconds, on any channel, is a duplicate
    # (it gets the first turn's response and learns nothing); 0 turns the window off.
    duplicate_seconds: float = 30.0
    # None: hand each finished turn to the learning agent when one is configured (a model, or a queue-only
    # process); False never, True always (the package waits in the queue for a worker).
    agent: bool | None = None
    # Seed 001 §8.9: a turn's context (learnings, tool sections, profile, experience files) within this many
    # tokens, counted by `token_counter` (None: the local embedding model's bundled tokenizer, an approximation
    # of the app's LLM's; see `learnloop.tokens`). `retrieve_context` keeps seed 004's 1,500 characters.
    max_tokens: int = 2_000
    token_counter: TokenCounter | None = None

    def __post_init__(self) -> None:
        for name in ("expire_seconds", "silence_seconds", "housekeeping_seconds", "lease_seconds", "retry_backoff"):
            if not getattr(self, name) > 0:
                raise ValidationError(f"{name} must be positive", field=name)
        if not self.duplicate_seconds >= 0:
            raise ValidationError("duplicate_seconds must not be negative", field="duplicate_seconds")
        if self.max_tokens < 10:
            raise ValidationError("max_tokens must be at least 10", field="max_tokens")
        if self.max_attempts < 1 or self.max_tool_calls < 1:
            raise ValidationError("max_attempts and max_tool_calls must be at least 1", field="max_attempts")
