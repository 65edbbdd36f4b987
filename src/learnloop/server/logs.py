"""Structured (JSON) log lines for every learning event, as seed 001's "Logging Strategy" asks:
`learning_created`, `learning_merged`, `learning_retrieved`, … with ids, statuses and counts.

Log lines carry no learning text and no free-text reasons: logs travel further than the database and must
not become a second copy of what users told their assistant.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TextIO

from ..models import Event
from .eventview import panel_of

__all__ = ["JsonFormatter", "configure_json_logging", "event_fields", "event_log_sink"]

EVENT_LOGGER = "learnloop.events"


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, event name, then the record's `fields`."""

    def format(self, record: logging.LogRecord) -> str:
        body: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            body.update(fields)
        if record.exc_info:
            body["exc"] = self.formatException(record.exc_info)
        return json.dumps(body, ensure_ascii=False, default=str)


def event_fields(event: Event) -> dict[str, Any]:
    after = event.after or {}
    before = event.before or {}
    fields: dict[str, Any] = {
        "seq": event.seq,
        "tenant": event.tenant,
        "user": event.user,
        "learning_id": event.learning_id,
        "actor": event.actor,
        "panel": panel_of(event).value,
    }
    status = after.get("status") or before.get("status")
    if status:
        fields["status"] = status
    if before.get("status") and after.get("status") and before["status"] != after["status"]:
        fields["from_status"] = before["status"]
    category = after.get("category") or before.get("category")
    if category:
        fields["category"] = category
    for key in ("origin", "version", "hits", "confidence"):
        if key in after:
            fields[key] = after[key]
    if "ids" in event.data:
        fields["ids"] = event.data["ids"]
        fields["count"] = event.data.get("count", len(event.data["ids"]))
    return fields


def event_log_sink(logger: logging.Logger | None = None) -> Callable[[Event], None]:
    """A bus sink writing `learning_<action>` (or the action itself for tenant-wide events) at INFO."""
    target = logger or logging.getLogger(EVENT_LOGGER)

    def sink(event: Event) -> None:
        if not target.isEnabledFor(logging.INFO):
            return
        name = (
            f"learning_{event.action}" if event.learning_id is not None or event.action == "retrieved" else event.action
        )
        target.info(name, extra={"fields": event_fields(event)})

    return sink


def configure_json_logging(level: int = logging.INFO, stream: TextIO | None = None) -> None:
    """Send learnloop's loggers to `stream` (stderr) as JSON lines, once."""
    root = logging.getLogger("learnloop")
    if any(isinstance(h.formatter, JsonFormatter) for h in root.handlers):
        return
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    root.addHandler(handler)
    root.setLevel(level)
    root.propagate = False
