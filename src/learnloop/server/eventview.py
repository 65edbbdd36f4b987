"""How an event from the log is presented to live clients and log readers: its panel and a one-line summary.

Seed 003's clients show two panels: `learning` (something was learned or used: created, merged, retrieved,
imported) and `knowledge_update` (existing knowledge changed: edited, superseded, promoted, deprecated,
deleted, …). An event stored with an explicit panel keeps it.
"""

from __future__ import annotations

import json
from typing import Any

from ..models import Event, EventAction, Panel

__all__ = ["event_payload", "panel_of", "summary"]

_KNOWLEDGE_UPDATES = {
    EventAction.SUPERSEDED,
    EventAction.PROMOTED,
    EventAction.CONFIRMED,
    EventAction.DEMOTED,
    EventAction.DEPRECATED,
    EventAction.RESTORED,
    EventAction.EDITED,
    EventAction.DELETED,
    EventAction.PURGED,
    EventAction.USER_FORGOTTEN,
    EventAction.VOCABULARY_CHANGED,
}
_TEXT_CHARS = 200


def panel_of(event: Event) -> Panel:
    if event.panel == Panel.KNOWLEDGE_UPDATE:
        return Panel.KNOWLEDGE_UPDATE
    return Panel.KNOWLEDGE_UPDATE if event.action in _KNOWLEDGE_UPDATES else Panel.LEARNING


def _clip(text: object) -> str:
    value = str(text or "")
    return value if len(value) <= _TEXT_CHARS else value[: _TEXT_CHARS - 1] + "…"


def summary(event: Event) -> str:
    """One human line, e.g. `New learning #12 [candidate/equipment]: Grainfather boil-off is ~3.5 L/hr`."""
    after: dict[str, Any] = event.after or {}
    before: dict[str, Any] = event.before or {}
    ref = f"#{event.learning_id}" if event.learning_id is not None else ""
    label = f"[{after.get('status', '?')}/{after.get('category') or after.get('type', '?')}]"
    reason = f" ({_clip(event.reason)})" if event.reason else ""
    action = event.action
    if action == EventAction.CREATED:
        return f"New learning {ref} {label}: {_clip(after.get('text'))}"
    if action == EventAction.IMPORTED:
        return f"Imported learning {ref} {label}: {_clip(after.get('text'))}"
    if action == EventAction.MERGED:
        return f"Merged into {ref} (hits {after.get('hits', '?')}): {_clip(after.get('text'))}"
    if action == EventAction.EDITED:
        return f"Edited {ref}: {_clip(after.get('text'))}"
    if action == EventAction.CONFIRMED:
        raised = f"confidence {before.get('confidence', '?')} → {after.get('confidence', '?')}"
        return f"Confirmed {ref} ({raised}){reason}: {_clip(after.get('text'))}"
    if action == EventAction.DELETED:
        return f"Deleted {ref}: {_clip(before.get('text'))}{reason}"
    if action == EventAction.RETRIEVED:
        ids = [f"#{i}" for i in event.data.get("ids", [])]
        count = event.data.get("count", len(ids))
        asked = f" for “{_clip(event.data['query'])}”" if event.data.get("query") else ""
        which = f": {', '.join(ids[:10])}{' …' if len(ids) > 10 else ''}" if ids else ""
        return f"Recalled {count} learning{'s' if count != 1 else ''}{asked}{which}"
    if action == EventAction.PURGED:
        count = len(event.data.get("ids", []))
        return f"Purged {count} deprecated learning{'s' if count != 1 else ''}"
    if action == EventAction.USER_FORGOTTEN:
        return "A user was forgotten"
    if action == EventAction.VOCABULARY_CHANGED:
        names = ", ".join(str(n) for n in event.data.get("categories", []))
        return f"Vocabulary of {event.data.get('namespace', '?')} set to: {names}"
    if action == EventAction.LEARNING_DONE:
        told = f": {_clip(event.data['summary'])}" if event.data.get("summary") else ""
        return f"Learning agent {event.data.get('status', 'done')} (session {event.data.get('session', '?')}){told}"
    if not before and not after:  # the learning agent's steps and other events that carry their own summary
        return f"{action.replace('_', ' ').capitalize()}: {_clip(event.data.get('summary') or event.data.get('tool'))}"
    moved = f"{before.get('status', '?')} → {after.get('status', '?')}"
    return f"{action.capitalize()} {ref} ({moved}){reason}: {_clip(after.get('text') or before.get('text'))}"


def event_payload(event: Event) -> dict[str, Any]:
    """The JSON a live client receives: the event itself, its panel and summary (`type` as in seed 003)."""
    body = event.model_dump(mode="json")
    body["panel"] = panel_of(event).value
    body["type"] = "learning_done" if event.action == EventAction.LEARNING_DONE else "thinking"
    body["summary"] = summary(event)
    return body


def sse_frame(event: Event) -> str:
    """One Server-Sent Events message; the id is the event's sequence number, for Last-Event-ID."""
    return f"id: {event.seq}\ndata: {json.dumps(event_payload(event), ensure_ascii=False)}\n\n"
