"""What identifies a write gate's verdicts: a digest of its rules, size limits, learned model and the detector
libraries' versions. Two gates with the same version refuse the same texts, so a text one accepted needs no
second look by the other (the quarantine's recheck, and retrieval, rely on it)."""

from __future__ import annotations

import contextlib
import hashlib
from importlib import metadata
from weakref import WeakKeyDictionary

from .gate import WriteGate
from .poisoning_model import load_model

__all__ = ["gate_version"]

_LIBRARIES = ("detect-secrets", "python-stdnum", "phonenumbers")
_VERSIONS: WeakKeyDictionary[WriteGate, str] = WeakKeyDictionary()


def gate_version(gate: WriteGate) -> str:
    """Computed once per gate (gates are immutable; every start and every save asks)."""
    found = _VERSIONS.get(gate)
    if found is None:
        found = _VERSIONS[gate] = _digest(gate)
    return found


def _digest(gate: WriteGate) -> str:
    digest = hashlib.blake2b(digest_size=12)
    for rule in gate.rules:
        finder = getattr(rule.finder, "__qualname__", "")
        digest.update(f"{rule.id}\0{rule.kind}\0{rule.regex.pattern}\0{rule.detector}\0{finder}\n".encode())
    digest.update(f"{gate.min_chars}\0{gate.max_chars}".encode())
    model = load_model() if gate.learns else None
    digest.update(f"poisoning-model={model.version if model else None}".encode())  # new weights: a new gate
    for library in _LIBRARIES:
        with contextlib.suppress(metadata.PackageNotFoundError):
            digest.update(f"{library}={metadata.version(library)}".encode())
    return digest.hexdigest()
