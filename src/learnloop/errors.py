"""One error tree. Every exception learnloop raises on purpose derives from `LearnloopError`.

Each class carries a stable machine-readable `code`; the HTTP layer maps classes to status codes, the
MCP layer turns them into tool errors, and the SDK lets them propagate unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

__all__ = [
    "AuthenticationError",
    "ChannelSendError",
    "ConfigurationError",
    "ConflictError",
    "EmbedderError",
    "InvalidCategory",
    "InvalidTransition",
    "LLMError",
    "LearnloopError",
    "LinkCodeInvalid",
    "LinkLocked",
    "NotConfigured",
    "NotFound",
    "PermissionDenied",
    "ResponderError",
    "StoreError",
    "UserRequired",
    "ValidationError",
    "WebhookRejected",
    "WriteRefused",
]


class LearnloopError(Exception):
    """Root of every error learnloop raises deliberately."""

    code: ClassVar[str] = "learnloop_error"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, **self.details}


class ConfigurationError(LearnloopError):
    """A setting, spec string or plugin name cannot be used."""

    code = "configuration_error"


class ValidationError(LearnloopError):
    """Input is malformed: missing text, wrong type, out-of-range value."""

    code = "validation_error"


class InvalidCategory(ValidationError):
    """A category is not in the namespace's vocabulary."""

    code = "invalid_category"

    def __init__(self, category: str, allowed: Sequence[str], namespace: str) -> None:
        allowed_list = list(allowed)
        super().__init__(
            f"category {category!r} is not in the vocabulary of namespace {namespace!r}; "
            f"allowed: {', '.join(allowed_list)}",
            category=category,
            allowed=allowed_list,
            namespace=namespace,
        )


class WriteRefused(ValidationError):
    """The write gate refused a text (a secret, personal data, an injection attempt, an unstable fact …).

    The message names the rule and never repeats the refused text.
    """

    code = "write_refused"

    def __init__(self, reason: str, rule: str | None, kind: str | None = None, field: str = "text") -> None:
        super().__init__(f"refused by the write gate ({rule}): {reason}", rule=rule, kind=kind, field=field)


class UserRequired(ValidationError):
    """A write by a tenant-wide caller (admin or app key) that names neither the user it is for nor the
    tenant's global learnings: refused rather than silently stored where every user's context would show it."""

    code = "user_required"


class LinkCodeInvalid(ValidationError):
    """A link code that does not exist, expired or was used: nothing is linked, and the attempt counts towards
    the redeeming identity's lock-out."""

    code = "link_code_invalid"


class LinkLocked(LearnloopError):
    """Too many wrong link codes from one identity: no code is checked for it until `retry_at`."""

    code = "link_locked"


class NotFound(LearnloopError):
    """The object does not exist, or exists outside the caller's tenant/user scope.

    The two cases are deliberately indistinguishable so that ids cannot be probed across tenants.
    """

    code = "not_found"


class InvalidTransition(LearnloopError):
    """A lifecycle transition the transition table does not allow for this actor."""

    code = "invalid_transition"


class ConflictError(LearnloopError):
    """The object changed underneath the caller (optimistic concurrency), or a uniqueness clash."""

    code = "conflict"


class StoreError(LearnloopError):
    """The storage backend failed in a way the caller cannot fix by changing input."""

    code = "store_error"


class EmbedderError(LearnloopError):
    """The embedding model could not be loaded or did not answer."""

    code = "embedder_error"


class LLMError(LearnloopError):
    """The language model endpoint failed or answered with something unusable."""

    code = "llm_error"


class NotConfigured(LearnloopError):
    """A feature needs a part that is not configured (for example an LLM for the learning agent)."""

    code = "not_configured"


class AuthenticationError(LearnloopError):
    """No credentials, or credentials that match no key."""

    code = "unauthenticated"


class PermissionDenied(LearnloopError):
    """Valid credentials whose scope does not cover the operation."""

    code = "permission_denied"


class WebhookRejected(AuthenticationError):
    """An inbound channel webhook without a valid secret, signature or verify token; a route answers 401.

    Subclassing `AuthenticationError` gives it that status wherever the HTTP layer maps errors."""

    code = "webhook_rejected"


class ChannelSendError(LearnloopError):
    """A message could not be delivered through a channel's platform API (after the retries it allows).

    `status` is the last HTTP status (None when no answer came), `attempts` how many requests were made and
    `description` the platform's own reason, when it gave one."""

    code = "channel_send_error"

    def __init__(
        self, message: str, *, channel: str, status: int | None, attempts: int, description: str | None
    ) -> None:
        super().__init__(message, channel=channel, status=status, attempts=attempts, description=description)
        self.channel = channel
        self.status = status
        self.attempts = attempts
        self.description = description


class ResponderError(LearnloopError):
    """The app's responder (the agent that answers a channel message) failed or gave no answer."""

    code = "responder_error"
