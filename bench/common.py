"""Helpers shared by the benchmark scripts: timing statistics, tables, JSON output, cache folder, cached
MiniLM vectors for the classifier trainers."""

from __future__ import annotations

import asyncio
import hashlib
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

CACHE = Path(__file__).resolve().parent.parent / ".bench-cache"


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def summary_ms(samples_s: Sequence[float]) -> dict[str, float]:
    ms = [s * 1000 for s in samples_s]
    return {"p50": round(statistics.median(ms), 3), "p95": round(percentile(ms, 95), 3), "n": len(ms)}


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def print_table(title: str, header: Sequence[str], rows: Sequence[Sequence[Any]], *, file: Any = None) -> None:
    out = file or sys.stdout
    cells = [[str(c) for c in header]] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    print(f"\n{title}", file=out)
    for n, row in enumerate(cells):
        print(
            "  " + "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))),
            file=out,
        )
        if n == 0:
            print("  " + "  ".join("-" * w for w in widths), file=out)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 100 else f"{value:.1f}"
    return str(value)


def emit_json(figures: dict[str, Any]) -> None:
    print(json.dumps(figures, indent=None, sort_keys=False))


def progress(message: str, quiet: bool) -> None:
    if not quiet:
        print(message, file=sys.stderr, flush=True)


def embed(texts: list[str]) -> Any:
    """The default embedder's vectors of `texts` as a numpy array (cached under `CACHE`, one file per text)."""
    import numpy as np

    folder = CACHE / "vectors"
    keys = [hashlib.sha256(t.encode()).hexdigest()[:24] for t in texts]
    missing = [t for t, k in zip(texts, keys, strict=True) if not (folder / f"{k}.npy").exists()]
    if missing:
        folder.mkdir(parents=True, exist_ok=True)
        for text, vector in zip(missing, _embed(missing), strict=True):
            np.save(folder / f"{hashlib.sha256(text.encode()).hexdigest()[:24]}.npy", vector)
    return np.stack([np.load(folder / f"{k}.npy") for k in keys]) if texts else np.zeros((0, 384))


def _embed(texts: list[str]) -> Any:
    import numpy as np

    from learnloop.config import Settings
    from learnloop.embedders import resolve_embedder

    embedder = resolve_embedder(Settings().embedder, Settings())

    async def run() -> Any:
        return np.asarray(await embedder.embed(texts, purpose="document"), dtype=np.float32)

    return asyncio.run(run())
