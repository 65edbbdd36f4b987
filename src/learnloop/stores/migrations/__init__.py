"""Versioned schema migrations, one folder of numbered `.sql` files per backend.

A backend applies them at open, once, under a lock it holds from reading which versions are applied until the
last one commits (SQLite: the write lock of `BEGIN IMMEDIATE`), so several processes starting together on one
database neither run a migration twice nor open a half-migrated schema."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

__all__ = ["Migration", "migrations_for"]

_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


def migrations_for(backend: str) -> list[Migration]:
    folder = resources.files(__package__).joinpath(backend)
    found = []
    for entry in folder.iterdir():
        match = _FILE.match(entry.name)
        if match:
            found.append(Migration(int(match.group(1)), match.group(2), entry.read_text("utf-8")))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    # A database records each version it applied (`schema_migrations`) and applies every one it lacks, so a gap
    # filled in later (branches merged in another order) still runs; one number twice is a merge mistake.
    if len(set(versions)) != len(versions) or (versions and versions[0] < 1):
        raise RuntimeError(f"{backend} migrations are not numbered uniquely from 1: {versions}")
    return found
