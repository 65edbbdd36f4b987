"""Every stored text goes through the write gate, with one policy per field. This module is that table.

* **refuse** — a learning and what describes it (text, topic, tags, source context) and the reasons a person
  gives for a change: harmful text is refused (`WriteRefused`), nothing is written.
* **redact** — records that must exist (a turn, a tool call's arguments and error, an interaction handed to
  the learning agent, feedback, an import): each harmful span is replaced by its kind (``[secret:aws]``,
  ``<redacted:RULE>`` in the tool layer), the record is kept, the value is never stored raw.
* **hash** — identifiers that point at a record of the app's (session, message, interaction ids): kept as
  given, unless the gate finds a secret or personal data in one (a phone number used as a message id, a key
  pasted into a session field); then a pseudonym ``id:<hash>`` is stored instead, the same one every time, so
  correlation still works. The gate's entropy-based detectors do not run on identifiers: a random id is what
  an id looks like.
* **exempt** — keys the app chose and the store is addressed by (tenant, user, the learning agent's session
  and package ids, tool-layer sessions: validated as identifiers, `models.check_identifier`), the app's own
  configuration (vocabularies, tool catalog) and what learnloop writes itself (rule ids, hashes, counters).

`FIELD_POLICIES` is the table; README.md shows the same one (a test reads both).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from weakref import WeakKeyDictionary

from ..errors import WriteRefused
from ..models import Source
from .gate import WriteGate
from .redaction import HARMFUL_KINDS, redact

__all__ = [
    "FIELD_POLICIES",
    "FieldPolicy",
    "Policy",
    "harmful",
    "hashed_source",
    "identifier",
    "policy_of",
    "redact_text",
    "redact_values",
    "refuse_if_harmful",
]

Policy = Literal["refuse", "redact", "hash", "exempt"]


@dataclass(frozen=True, slots=True)
class FieldPolicy:
    field: str
    policy: Policy
    entry_points: str


FIELD_POLICIES: tuple[FieldPolicy, ...] = (
    FieldPolicy("learnings.text", "refuse", "save, save_learning tool, observe, learning agent, update"),
    FieldPolicy("learnings.topic", "refuse", "save, update"),
    FieldPolicy("learnings.tags", "refuse", "save, update"),
    FieldPolicy("learnings.source_context", "refuse", "save, save_learning tool"),
    FieldPolicy("events.reason", "refuse", "update, deprecate, restore, delete, promote (a person's reason)"),
    FieldPolicy("agent_experience_files.content", "refuse", "learning agent tools"),
    FieldPolicy("agent_knowledge_pages.text", "refuse", "learning agent tools, knowledge port"),
    FieldPolicy("learnings.source_session", "hash", "save, save_learning tool, observe"),
    FieldPolicy("learnings.source_message", "hash", "save, save_learning tool, observe"),
    FieldPolicy("learnings.source_interaction", "hash", "save, save_learning tool, observe"),
    FieldPolicy("turns.session", "hash", "observe"),
    FieldPolicy("turns.topic_terms", "redact", "observe (terms of the redacted message; none of a refused one)"),
    FieldPolicy("turns.message_hash", "redact", "observe (hash of the redacted message)"),
    FieldPolicy("events.reason (feedback)", "redact", "observe feedback, report_failure"),
    FieldPolicy("tool_signals.arguments", "redact", "tool calls (record_call, MCP proxy)"),
    FieldPolicy("tool_signals.error", "redact", "tool calls"),
    FieldPolicy("tool_signals.query_text", "redact", "tool routing and calls (privacy mode full)"),
    FieldPolicy("tool_template_examples.text", "redact", "tool calls (privacy mode full)"),
    FieldPolicy("tool_signals.intent", "redact", "tool calls, set_context"),
    FieldPolicy("agent_queue.body", "redact", "submit_interaction (every text of the package)"),
    FieldPolicy("agent_messages.content", "redact", "the learning agent's conversation"),
    FieldPolicy("learnings (import)", "redact", "import: text, topic, tags, source context"),
    FieldPolicy(
        "channel_identities.channel_key",
        "hash",
        "identities: resolve, link, unlink (always: it is a phone number or a session token)",
    ),
    FieldPolicy(
        "channel_identities.masked_id",
        "redact",
        "identities: resolve, attach (the last 4 letters or digits, the rest dots)",
    ),
    FieldPolicy(
        "channel_identities.username, metadata",
        "redact",
        "identities: resolve, attach (what the channel says of the person)",
    ),
    FieldPolicy("canonical_users.display_name", "redact", "identities: resolve"),
    FieldPolicy("tenant, user_id", "exempt", "every entry point (validated identifiers)"),
    FieldPolicy("agent_sessions.session, agent_queue.package_id", "exempt", "submit_interaction (validated ids)"),
    FieldPolicy("tool_signals.session", "exempt", "tool calls (the tool layer's correlation key)"),
    FieldPolicy("vocabularies, tool_catalog", "exempt", "the app's own configuration"),
    FieldPolicy(
        "link_codes.code_hash", "exempt", "identities: issue_link_code (a keyed hash; the code is never stored)"
    ),
)
_BY_FIELD = {policy.field: policy.policy for policy in FIELD_POLICIES}


def policy_of(field: str) -> Policy:
    return _BY_FIELD[field]


def refuse_if_harmful(gate: WriteGate, text: str | None, field: str) -> None:
    """WriteRefused when `gate` refuses `text` as a secret, personal data or injection (size rules are the
    learning text's, checked where it is saved)."""
    if not text:
        return
    verdict = gate.check(text)
    if not verdict.allowed and verdict.kind in HARMFUL_KINDS:
        raise WriteRefused(verdict.reason or "refused", verdict.rule, verdict.kind, field)


def redact_text(gate: WriteGate, text: str) -> str:
    """`text` with each harmful span replaced by its kind (see `redaction`)."""
    return redact(gate, text) if text else text


def redact_values(gate: WriteGate, value: Any, depth: int = 0) -> Any:
    """Every string in a JSON-like value redacted (mapping keys too); other values as they are."""
    if isinstance(value, str):
        return redact_text(gate, value)
    if depth > 32:
        return value
    if isinstance(value, Mapping):
        return {redact_text(gate, str(k)): redact_values(gate, v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_values(gate, v, depth + 1) for v in value]
    return value


@functools.lru_cache(maxsize=8192)
def harmful(gate: WriteGate, text: str) -> bool:
    """Does `gate` refuse `text` as a secret, personal data or injection? (Cached: retrieval asks this of the
    same stored texts again and again, to never serve what the current gate refuses.)"""
    verdict = gate.check(text)
    return not verdict.allowed and verdict.kind in HARMFUL_KINDS


def _identifier_gate(gate: WriteGate) -> WriteGate:
    found = _ID_GATES.get(gate)
    if found is None:
        found = _ID_GATES[gate] = gate.without("size", "empty", "unstable", *_ENTROPY_RULES)
    return found


# Rules that fire on randomness alone: an identifier is random by design.
_ENTROPY_RULES = (
    "secret.generic_token",
    "secret.ds.base64_entropy",
    "secret.ds.hex_entropy",
    "secret.prose.named_hex_key",
    "secret.prose.otp_key",
    "unstable",
)
_ID_GATES: WeakKeyDictionary[WriteGate, WriteGate] = WeakKeyDictionary()


def identifier(gate: WriteGate, value: str | None) -> str | None:
    """`value` as given, or its pseudonym ``id:<hash>`` when the gate finds a secret or personal data in it."""
    if not value:
        return value
    verdict = _identifier_gate(gate).check(value)
    if verdict.allowed or verdict.kind not in HARMFUL_KINDS:
        return value
    digest = hashlib.blake2b(value.encode(), digest_size=12, person=b"learnloop-id").hexdigest()
    return f"id:{digest}"


def hashed_source(gate: WriteGate, source: Source) -> Source:
    """The source with its session, message and interaction ids under the *hash* policy."""
    ids = {name: identifier(gate, getattr(source, name)) for name in ("session", "message", "interaction")}
    changed = {name: value for name, value in ids.items() if value != getattr(source, name)}
    return source.model_copy(update=changed) if changed else source
