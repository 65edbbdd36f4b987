"""Latency and throughput of the bundled local embedder, with 1 and 2 intra-op threads.

    .venv/bin/python bench/embedder.py            # a table
    .venv/bin/python bench/embedder.py --json     # one JSON object with the same figures
    .venv/bin/python bench/embedder.py --busy 1   # with one core kept busy by another process

`threads` is ONNX Runtime's intra-op threads per inference; `lanes` is how many chunks of a batch run at
once. The cache is disabled for the latency figures (every call runs the model) and measured on its own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import random
import statistics
import time
from typing import Any

from learnloop.embedders.local import LocalMiniLM

SHORT_QUERY = "how long should I mash for?"
# Domain words from the seeds plus function words, so texts tokenise like real learnings (~1.3 tokens a word).
_WORD_LIST = """
mash boil hop yeast wort gravity fermenter temperature recipe grain water litre minute kettle chiller
query table column revenue customer region report dashboard metric filter join error timeout retry
drawing dimension tolerance bolt flange weld section scale revision tool server session agent user
the a of to and in is for with on at by from that this it as be was are have not but
"""
WORDS = tuple(_WORD_LIST.split())


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def percentile(samples: list[float], q: int) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1] if len(samples) > 1 else samples[0]


async def latency_ms(embedder: LocalMiniLM, text: str, repeat: int) -> dict[str, float]:
    for _ in range(10):
        await embedder.embed([text])
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        await embedder.embed([text])
        samples.append((time.perf_counter() - start) * 1000)
    return {"p50_ms": round(percentile(samples, 50), 3), "p95_ms": round(percentile(samples, 95), 3)}


async def measure(threads: int, repeat: int, batch: list[str], forty_words: str) -> dict[str, Any]:
    embedder = LocalMiniLM(threads=threads, cache_size=0)
    start = time.perf_counter()
    await embedder.embed(["warm up"])
    load_s = time.perf_counter() - start
    short = await latency_ms(embedder, SHORT_QUERY, repeat)
    medium = await latency_ms(embedder, forty_words, repeat)
    start = time.perf_counter()
    await embedder.embed(batch)
    batch_s = time.perf_counter() - start
    await embedder.aclose()
    return {
        "threads": threads,
        "lanes": embedder.batch_lanes,
        "load_s": round(load_s, 3),
        "short_query": short,
        "forty_words": medium,
        "batch_1000_s": round(batch_s, 3),
        "batch_per_s": round(len(batch) / batch_s, 1),
    }


async def cache_hit_us(repeat: int) -> float:
    embedder = LocalMiniLM()
    await embedder.embed([SHORT_QUERY])
    start = time.perf_counter()
    for _ in range(repeat):
        await embedder.embed([SHORT_QUERY])
    await embedder.aclose()
    return round((time.perf_counter() - start) / repeat * 1e6, 2)


async def run(repeat: int) -> dict[str, Any]:
    rng = random.Random(7)
    batch = [sentence(rng, rng.randint(5, 30)) for _ in range(1000)]
    forty_words = sentence(rng, 40)
    runs = [await measure(threads, repeat, batch, forty_words) for threads in (1, 2)]
    return {"model": "local:all-MiniLM-L6-v2", "runs": runs, "cache_hit_us": await cache_hit_us(repeat * 10)}


def print_table(result: dict[str, Any]) -> None:
    header = ["threads", "lanes", "load s", "short p50", "short p95", "40w p50", "40w p95", "1k s", "texts/s"]
    rows = [
        [
            r["threads"],
            r["lanes"],
            r["load_s"],
            r["short_query"]["p50_ms"],
            r["short_query"]["p95_ms"],
            r["forty_words"]["p50_ms"],
            r["forty_words"]["p95_ms"],
            r["batch_1000_s"],
            r["batch_per_s"],
        ]
        for r in result["runs"]
    ]
    cells = [header, *[[f"{value:g}" for value in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    busy = f"; {result['busy_processes']} busy processes" if result["busy_processes"] else ""
    print(f"{result['model']} (latencies in ms; cache hit {result['cache_hit_us']} µs{busy})")
    for row in cells:
        print("  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True)))


def spin() -> None:
    while True:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument("--repeat", type=int, default=200, help="timed calls per latency figure")
    parser.add_argument("--busy", type=int, default=0, help="processes kept spinning meanwhile (contention)")
    args = parser.parse_args()
    spinners = [multiprocessing.Process(target=spin, daemon=True) for _ in range(args.busy)]
    for process in spinners:
        process.start()
    try:
        result = asyncio.run(run(args.repeat))
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
