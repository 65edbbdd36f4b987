"""Versioned schema migrations, one folder of numbered `.sql` files per backend."""

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
    # Numbers are unique and start at 1; gaps are allowed, so that work on parallel branches can reserve a
    # range (each is applied once, by number: see `connect`).
    if len(set(versions)) != len(versions) or (versions and versions[0] != 1):
        raise RuntimeError(f"{backend} migrations must have unique numbers starting at 1: {versions}")
    return found
