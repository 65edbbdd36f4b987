"""Moving a whole tenant between databases: everything it owns written to a JSON Lines archive, and read
back into another database as it was (see `stores.archive` for the format and what an import keeps).

An import does not send the rows through the write gate again: the exporting database's gate accepted them,
and a gate that changed since would otherwise lose knowledge on a move. `regate=True` rechecks the live
learnings with this database's gate after the import (`capture.quarantine.recheck`): refused ones are
quarantined for review, not deleted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .capture import quarantine
from .engine import Engine
from .errors import ConfigurationError, ValidationError
from .stores.archive import ArchiveHeader, ArchiveRow, TenantArchive, decode_line, encode_header, encode_row

__all__ = ["TenantImport", "export_tenant", "import_tenant"]


@dataclass(frozen=True)
class TenantImport:
    tenant: str
    rows: dict[str, int]
    quarantined: list[quarantine.Quarantined] = field(default_factory=list)


def _archive(engine: Engine) -> TenantArchive:
    found = engine.archive
    if found is None:
        raise ConfigurationError(f"{engine.store!r} cannot export or import whole tenants")
    return found


async def export_tenant(engine: Engine, tenant: str, path: Path, *, keys: bool = False) -> dict[str, int]:
    """Write every row of `tenant` to `path` (API keys only with `keys`); rows counted per kind."""
    await engine.ensure_started()
    archive = _archive(engine)
    counts: dict[str, int] = {}
    with path.open("w", encoding="utf-8") as out:
        out.write(encode_header(ArchiveHeader(tenant=tenant, with_keys=keys)) + "\n")
        async for row in archive.export_tenant(tenant, keys=keys):
            out.write(encode_row(row) + "\n")
            counts[row.kind] = counts.get(row.kind, 0) + 1
    return counts


def _read(lines: Iterable[str | bytes]) -> tuple[str, list[ArchiveRow]]:
    header: ArchiveHeader | None = None
    rows: list[ArchiveRow] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        item = decode_line(line)
        if isinstance(item, ArchiveHeader):
            if header is not None:
                raise ValidationError(f"line {number}: a second archive header")
            header = item
        elif header is None:
            raise ValidationError("the archive does not start with its header line")
        else:
            rows.append(item)
    if header is None:
        raise ValidationError("empty archive")
    return header.tenant, rows


async def import_tenant(engine: Engine, lines: Iterable[str | bytes], *, regate: bool = False) -> TenantImport:
    """Insert the archive's tenant, all or nothing; with `regate`, then recheck it with this database's gate."""
    await engine.ensure_started()
    tenant, rows = _read(lines)
    counts = await _archive(engine).import_tenant(tenant, rows)
    found = [q for q in await quarantine.recheck(engine) if q.tenant == tenant] if regate else []
    return TenantImport(tenant=tenant, rows=counts, quarantined=found)
