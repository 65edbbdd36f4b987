"""Whole-tenant archives: every row a tenant owns, to move it between databases (or backends) losslessly.

An archive is JSON Lines: a header line, then one line per row, `{"kind": ..., "row": {...}}`. A kind names a
record type (learnings, their links and sources, vocabularies, events, turns, tool knowledge, the learning
agent's sessions, queue, files and knowledge pages, quarantine entries, counters; API keys only when asked),
and a row holds its fields by name; bytes (embeddings) are base64. Rows are written as stored: an import does
not run them through the write gate again (the exporting tenant's gate accepted them) unless the caller asks
for a recheck.

Ids are kept, so everything that names a learning (links, sources, versions, events, turns) still does; an
import refuses a tenant the target already holds, or ids the target has given to another tenant. Events are
the exception: they are appended in their order under the target's own cursor, because a cursor is a position
in one database's log (a reader of the target must never see them behind its cursor).

A backend offers this as `StoreParts.archive` (see `stores.parts`); the engine holds it as `Engine.archive`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..errors import ValidationError

__all__ = [
    "ARCHIVE_FORMAT",
    "ArchiveHeader",
    "ArchiveRow",
    "TenantArchive",
    "decode_line",
    "encode_header",
    "encode_row",
]

ARCHIVE_FORMAT = "learnloop-tenant-archive"
_VERSION = 1
_BYTES = "$b64"


@dataclass(frozen=True)
class ArchiveHeader:
    tenant: str
    with_keys: bool


@dataclass(frozen=True)
class ArchiveRow:
    kind: str
    row: dict[str, Any]


@runtime_checkable
class TenantArchive(Protocol):
    def export_tenant(self, tenant: str, *, keys: bool = False) -> AsyncIterator[ArchiveRow]:
        """Every row of `tenant`, kind by kind, in an order an import can insert them in."""
        ...

    async def import_tenant(self, tenant: str, rows: Iterable[ArchiveRow]) -> dict[str, int]:
        """Insert the rows in one transaction (all or nothing); rows counted per kind. Raises `ConflictError`
        when the target already holds the tenant or one of its ids."""
        ...


def _plain(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return {_BYTES: base64.b64encode(bytes(value)).decode("ascii")}
    return value


def _stored(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {_BYTES}:
        return base64.b64decode(value[_BYTES], validate=True)
    return value


def encode_header(header: ArchiveHeader) -> str:
    return json.dumps(
        {"format": ARCHIVE_FORMAT, "version": _VERSION, "tenant": header.tenant, "keys": header.with_keys},
        separators=(",", ":"),
    )


def encode_row(row: ArchiveRow) -> str:
    # Floats are written by repr, which reads back to the same double: the round trip is exact.
    return json.dumps(
        {"kind": row.kind, "row": {k: _plain(v) for k, v in row.row.items()}},
        separators=(",", ":"),
        ensure_ascii=False,
    )


def decode_line(line: str | bytes) -> ArchiveHeader | ArchiveRow:
    try:
        data = json.loads(line)
    except ValueError as exc:
        raise ValidationError(f"not an archive line: {exc}") from exc
    if not isinstance(data, dict):
        raise ValidationError("an archive line is a JSON object")
    if data.get("format") == ARCHIVE_FORMAT:
        if data.get("version") != _VERSION:
            raise ValidationError(f"archive version {data.get('version')!r} is not supported")
        return ArchiveHeader(tenant=str(data["tenant"]), with_keys=bool(data.get("keys")))
    kind, row = data.get("kind"), data.get("row")
    if not isinstance(kind, str) or not isinstance(row, dict):
        raise ValidationError("an archive row has a kind and a row object")
    return ArchiveRow(kind=kind, row={k: _stored(v) for k, v in row.items()})
