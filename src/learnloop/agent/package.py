"""`InteractionPackage`: one turn of the main agent, as the learning agent sees it (seed 003 R1, generalised).

The main agent (or the app around it) builds one after every turn and hands it to
`loop.submit_interaction`, which queues it durably and returns at once. Field names carry no app vocabulary:
what seed 003 calls pointers are `items_retrieved`, its workspace actions are `actions`.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, ValidationInfo, field_validator

from ..capture.fields import redact_values
from ..capture.gate import WriteGate
from ..errors import ValidationError
from ..models import check_identifier, utcnow

__all__ = ["MAX_PACKAGE_BYTES", "MAX_TURN", "InteractionPackage", "PackageToolCall", "redacted_package"]

MAX_PACKAGE_BYTES = 256 * 1024
MAX_TURN = 2**53  # stored as a SQLite integer (64-bit); the bound keeps `MAX(turn) + 1` inside it too
_SHOWN_CHARS = 2000  # per text field in the learning agent's view of a package


class PackageToolCall(BaseModel):
    """A tool the main agent called during the turn, and how it went."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    ok: bool | None = None
    error: str | None = None
    result: str | None = None
    latency_ms: float | None = None


class InteractionPackage(BaseModel):
    """What happened in one turn. `id` makes submission idempotent: a package is queued at most once."""

    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    session: str
    user: str | None = None
    user_query: str
    assistant_response: str = ""
    items_retrieved: list[dict[str, Any]] = Field(default_factory=list)
    experience_read: list[str] = Field(default_factory=list)
    actions: list[dict[str, Any]] = Field(default_factory=list)
    tool_calls: list[PackageToolCall] = Field(default_factory=list)
    turn: int | None = Field(default=None, ge=0, le=MAX_TURN)
    at: datetime = Field(default_factory=utcnow)
    meta: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id", "session")
    @classmethod
    def _identifier(cls, value: str, info: ValidationInfo) -> str:
        return check_identifier(value, info.field_name or "id")

    @field_validator("user")
    @classmethod
    def _user(cls, value: str | None) -> str | None:
        return None if value is None else check_identifier(value, "user")

    def to_json(self) -> str:
        body = self.model_dump_json()
        if len(body.encode()) > MAX_PACKAGE_BYTES:
            raise ValidationError(
                f"an interaction package is at most {MAX_PACKAGE_BYTES // 1024} KiB of JSON", field="package"
            )
        return body

    def as_prompt(self) -> str:
        """The package as the user message of the learning agent's conversation."""
        who = f"user {self.user}" if self.user else "a user"
        when = self.at.isoformat(timespec="seconds")
        lines = [
            f"New interaction (turn {self.turn}, session {self.session}, {who}, {when}).",
            "",
            "User query:",
            _clip(self.user_query),
            "",
            "Assistant response:",
            _clip(self.assistant_response) or "(none)",
        ]
        if self.items_retrieved:
            lines += ["", "Items retrieved for the answer:"]
            lines += [f"- {_compact(item)}" for item in self.items_retrieved[:50]]
        lines += ["", "Experience files the assistant read: " + (", ".join(self.experience_read) or "(none)")]
        if self.actions:
            lines += ["", "Actions taken:"]
            lines += [f"- {_compact(action)}" for action in self.actions[:50]]
        if self.tool_calls:
            lines += ["", "Tool calls:"]
            for call in self.tool_calls[:50]:
                outcome = "ok" if call.ok else ("failed" if call.ok is False else "outcome unknown")
                detail = f": {_clip(call.error, 300)}" if call.error else ""
                result = f" → {_clip(call.result, 300)}" if call.result else ""
                lines.append(f"- {call.name}({_compact(call.arguments)}) {outcome}{detail}{result}")
        if self.meta:
            lines += ["", f"Other context: {_compact(self.meta)}"]
        return "\n".join(lines)


def _clip(text: str | None, limit: int = _SHOWN_CHARS) -> str:
    if not text:
        return ""
    return text if len(text) <= limit else text[:limit] + " …(cut)"


def _compact(value: Any) -> str:
    return _clip(json.dumps(value, ensure_ascii=False, default=str, sort_keys=True), 400)


# The package's texts; its ids, user, turn and time are the app's keys (the *exempt* policy).
_TEXT_FIELDS = (
    "user_query",
    "assistant_response",
    "items_retrieved",
    "experience_read",
    "actions",
    "tool_calls",
    "meta",
)


def redacted_package(gate: WriteGate, package: InteractionPackage) -> InteractionPackage:
    """`package` with every harmful span in its texts replaced by its kind (the *redact* policy). A package
    over the size limit is refused first (`to_json`): redaction reads every character."""
    package.to_json()
    body = package.model_dump(mode="json")
    changed = {name: redacted for name in _TEXT_FIELDS if (redacted := redact_values(gate, body[name])) != body[name]}
    return package if not changed else InteractionPackage.model_validate(body | changed)
