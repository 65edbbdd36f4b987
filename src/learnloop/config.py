"""Settings, read once at the entry points (CLI, server, `learnloop.open`), then passed down explicitly.

Models are named with `provider:model` strings: `local:minilm`, `openai:text-embedding-3-small`,
`openai:gpt-4o-mini`. Providers are found through the `learnloop.embedders` and `learnloop.llms` entry
point groups, so a plugin package can add its own.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from .errors import ConfigurationError

__all__ = ["Settings", "split_spec"]

_ENV_PREFIX = "LEARNLOOP_"


def split_spec(spec: str, what: str) -> tuple[str, str]:
    """`"openai:gpt-4o-mini"` → `("openai", "gpt-4o-mini")`; a bare name is a provider with its default model."""
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigurationError(f"{what} must be a 'provider:model' string, got {spec!r}")
    provider, _, model = spec.strip().partition(":")
    return provider.lower(), model


@dataclass(frozen=True)
class Settings:
    """Everything configurable, with the embedded defaults.

    Environment variables are `LEARNLOOP_<FIELD>` (for example `LEARNLOOP_DB`, `LEARNLOOP_LLM`); the
    OpenAI-compatible endpoint also honours the conventional `OPENAI_BASE_URL` and `OPENAI_API_KEY`.
    """

    db: str = "learnloop.db"
    tenant: str = "default"
    # all-MiniLM-L6-v2 with its weights re-quantised to int8 at first use (cached): 2-2.6x faster than the
    # shipped graph with the same LoCoMo recall (bench/locomo_recall.py); "local:minilm" is the unmodified one.
    embedder: str = "local:minilm-q8"
    llm: str | None = None
    learning_model: str | None = None
    openai_base_url: str | None = None
    openai_api_key: str | None = field(default=None, repr=False)
    embedder_threads: int | None = None
    request_timeout: float = 60.0
    sqlite_synchronous: str = "NORMAL"
    ann_threshold: int = 8_192
    # OpenBLAS wakes its threads for every small matrix-vector product; on small VMs that costs 50x the
    # product itself (measured: 0.08 ms with 1 thread, 8 ms with 2, for a 3k x 384 scan). None leaves it be.
    blas_threads: int | None = 1
    # PostgreSQL: a folder of the database's own where the search partitions keep their HNSW indexes and
    # snapshots between runs (a SQLite file keeps them beside itself, `<db>.ann/`). None: a restarted process
    # rebuilds a big user's index at that user's first query. One folder per database; processes of one
    # machine may share it.
    ann_dir: str | None = None
    # A dedupe policy written by `learnloop calibrate --out` (else the embedder's shipped calibration).
    dedupe_calibration: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in fields(cls):
            if f.name == "extra":
                continue
            raw = env.get(_ENV_PREFIX + f.name.upper())
            if raw is None or raw == "":
                continue
            values[f.name] = _coerce(f.name, raw, f.type)
        values.setdefault("openai_base_url", env.get("OPENAI_BASE_URL") or None)
        values.setdefault("openai_api_key", env.get("OPENAI_API_KEY") or None)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def with_(self, **changes: Any) -> Settings:
        return replace(self, **changes)


def _coerce(name: str, raw: str, annotation: Any) -> Any:
    text = str(annotation)
    try:
        if "int" in text and "str" not in text:
            return int(raw)
        if "float" in text:
            return float(raw)
    except ValueError as exc:
        raise ConfigurationError(f"{_ENV_PREFIX}{name.upper()} must be a number, got {raw!r}") from exc
    return raw
