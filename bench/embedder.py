"""Latency and throughput of the bundled local embedder, with 1 and 2 intra-op threads.

    .venv/bin/python bench/embedder.py            # a table
    .venv/bin/python bench/embedder.py --json     # one JSON object with the same figures
    .venv/bin/python bench/embedder.py --busy 1   # with one core kept busy by another process
    .venv/bin/python bench/embedder.py --q8       # also local:minilm-q8 (needs `onnx`), with its fidelity

`threads` is ONNX Runtime's intra-op threads per inference; `lanes` is how many chunks of a batch run at
once. The cache is disabled for the latency figures (every call runs the model) and measured on its own.
Texts are the synthetic learnings of bench/corpus.py.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import multiprocessing
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import percentile
from corpus import learnings
from learnloop.embedders.base import Vectors
from learnloop.embedders.local import LocalMiniLM

SHORT_QUERY = "how long should I mash for?"
BATCH_SIZE = 1000


async def latency_ms(embedder: LocalMiniLM, text: str, repeat: int) -> dict[str, float]:
    for _ in range(10):
        await embedder.embed([text])
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        await embedder.embed([text])
        samples.append((time.perf_counter() - start) * 1000)
    return {"p50_ms": round(percentile(samples, 50), 3), "p95_ms": round(percentile(samples, 95), 3)}


async def measure(
    requantise: bool, threads: int, repeat: int, batch: list[str], forty_words: str
) -> tuple[dict[str, Any], Vectors]:
    embedder = LocalMiniLM(threads=threads, cache_size=0, requantise=requantise)
    start = time.perf_counter()
    await embedder.embed(["warm up"])
    load_s = time.perf_counter() - start
    short = await latency_ms(embedder, SHORT_QUERY, repeat)
    medium = await latency_ms(embedder, forty_words, repeat)
    start = time.perf_counter()
    vectors = await embedder.embed(batch)
    batch_s = time.perf_counter() - start
    await embedder.aclose()
    figures = {
        "model": "local:minilm-q8" if requantise else "local:minilm",
        "threads": threads,
        "lanes": embedder.batch_lanes,
        "load_s": round(load_s, 3),
        "short_query": short,
        "forty_words": medium,
        "batch_s": round(batch_s, 3),
        "batch_per_s": round(len(batch) / batch_s, 1),
    }
    return figures, vectors


async def cache_hit_us(repeat: int) -> float:
    embedder = LocalMiniLM()
    await embedder.embed([SHORT_QUERY])
    start = time.perf_counter()
    for _ in range(repeat):
        await embedder.embed([SHORT_QUERY])
    await embedder.aclose()
    return round((time.perf_counter() - start) / repeat * 1e6, 2)


def fidelity(vectors: Vectors, reference: Vectors) -> dict[str, float]:
    """Mean cosine to the reference vectors, and how many of each text's 10 neighbours stay the same."""

    def top10(v: Vectors) -> Any:
        similarities = v @ v.T
        np.fill_diagonal(similarities, -np.inf)
        return np.argsort(-similarities, axis=1)[:, :10]

    pairs = zip(top10(vectors), top10(reference), strict=True)
    overlap = statistics.fmean(len(set(a) & set(b)) / 10 for a, b in pairs)
    return {"mean_cosine": round(float(np.sum(vectors * reference, axis=1).mean()), 4), "top10_overlap": overlap}


async def run(repeat: int, with_q8: bool) -> dict[str, Any]:
    batch = learnings(BATCH_SIZE, 7)
    forty_words = " ".join(" ".join(batch[:10]).split()[:40])
    runs, vectors = [], {}
    for requantise in (False, True) if with_q8 else (False,):
        for threads in (1, 2):
            figures, vectors[requantise] = await measure(requantise, threads, repeat, batch, forty_words)
            runs.append(figures)
    result: dict[str, Any] = {"runs": runs, "cache_hit_us": await cache_hit_us(repeat * 10)}
    if with_q8:
        result["q8_fidelity"] = fidelity(vectors[True], vectors[False])
    return result


def print_table(result: dict[str, Any]) -> None:
    header = ["model", "threads", "lanes", "load s", "short p50", "short p95", "40w p50", "40w p95", "1k s"]
    rows = [
        [
            r["model"],
            r["threads"],
            r["lanes"],
            r["load_s"],
            r["short_query"]["p50_ms"],
            r["short_query"]["p95_ms"],
            r["forty_words"]["p50_ms"],
            r["forty_words"]["p95_ms"],
            r["batch_s"],
        ]
        for r in result["runs"]
    ]
    cells = [header, *[[f"{value:g}" if not isinstance(value, str) else value for value in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    busy = f", {result['busy_processes']} busy processes" if result["busy_processes"] else ""
    print(f"latencies in ms, {BATCH_SIZE:,} learnings in s; cache hit {result['cache_hit_us']} µs{busy}")
    for row in cells:
        print("  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True)))
    if "q8_fidelity" in result:
        q8 = result["q8_fidelity"]
        print(f"minilm-q8 against minilm: mean cosine {q8['mean_cosine']}, top-10 overlap {q8['top10_overlap']:.3f}")


def spin() -> None:
    while True:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument("--repeat", type=int, default=200, help="timed calls per latency figure")
    parser.add_argument("--busy", type=int, default=0, help="processes kept spinning meanwhile (contention)")
    parser.add_argument("--q8", action="store_true", help="also measure local:minilm-q8 (needs onnx)")
    args = parser.parse_args()
    if args.q8 and importlib.util.find_spec("onnx") is None:
        parser.error("--q8 needs the 'onnx' package (pip install onnx)")
    spinners = [multiprocessing.Process(target=spin, daemon=True) for _ in range(args.busy)]
    for process in spinners:
        process.start()
    try:
        result = asyncio.run(run(args.repeat, args.q8))
    finally:
        for process in spinners:
            process.terminate()
    result["busy_processes"] = args.busy
    if args.json:
        print(json.dumps(result))
    else:
        print_table(result)


if __name__ == "__main__":
    main()
