"""Throughput and latency of the HTTP service: POST /api/retrieve and POST /api/tools/save_learning, and
retrieval while a large import runs.

    python bench/service.py                    # table
    python bench/service.py --json             # one JSON object
    python bench/service.py --requests 300 --seconds 10 --concurrency 4    # quick run

A user with 10k learnings (bulk-loaded through the store, embeddings cached under .bench-cache/ as in
bench/retrieval.py) is served by `learnloop serve` in its own process on a loopback port; a load generator
in this process (httpx, async, a few concurrent clients) sends a bounded number of requests per endpoint,
stopping early at a time limit. Latency is measured at the client: HTTP, JSON, auth, the engine (query
embedding, hybrid search, ranking, recording hits; or validate, gate, embed, dedupe, write) and the event
log. Both processes share this machine's cores, so the figures are a floor for a dedicated server.

Import under load: `--import-mb` of valid learnings (text, no vectors: every line is embedded) are posted to
POST /api/import for another user; while that job runs, one client sends the same retrievals as the idle row
before it. Reported: p95 of /api/retrieve idle and during the import, their ratio, and how far the import got.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import emit_json, print_table, progress, summary_ms
from corpus import learnings, questions
from learnloop.config import Settings
from learnloop.embedders import resolve_embedder
from learnloop.server.keys import issue_key
from learnloop.stores.sql.service import SqlServiceStore
from learnloop.stores.sqlite import SQLiteStore
from retrieval import TENANT, USER, bulk_insert, embed_cached

ROOT = Path(__file__).resolve().parent.parent
# The user the import under load writes for, so that the measured user's learnings stay as they were.
IMPORTER = "importer"


async def prepare(folder: Path, size: int, quiet: bool) -> tuple[Path, str]:
    """A database with `size` learnings for USER and an app key for the tenant."""
    embedder = resolve_embedder(Settings().embedder, Settings())
    texts = learnings(size, seed=1)
    vectors = await embed_cached(embedder, texts, "own", quiet)
    db = folder / "service-bench.db"
    store = SQLiteStore(db, embedding_model=embedder.model_id, dimension=embedder.dimension)
    progress(f"loading {size} learnings into {db}", quiet)
    await bulk_insert(store, USER, texts, vectors, embedder.model_id)
    issued = issue_key(TENANT, "app", name="bench")
    await SqlServiceStore(store).create_key(issued.record)
    await store.aclose()
    await embedder.aclose()
    return db, issued.key


def start_server(db: Path) -> tuple[subprocess.Popen[str], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEARNLOOP_")}
    env["PYTHONPATH"] = str(ROOT / "src")
    command = [sys.executable, "-m", "learnloop", "--db", str(db), "--tenant", TENANT, "serve"]
    command += ["--port", "0", "--no-first-key"]
    # Learning events are logged as JSON lines at info, as in production; the lines go nowhere here.
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        found = re.search(r"at (http://\S+)", line)
        if found:
            # Keep reading: uvicorn's access log goes to stdout, and a full pipe would stall the server.
            threading.Thread(target=process.stdout.read, daemon=True).start()
            return process, found.group(1)
        if not line and process.poll() is not None:
            break
    process.kill()
    raise RuntimeError("learnloop serve did not start")


async def load(
    client: httpx.AsyncClient,
    path: str,
    bodies: Callable[[int], dict[str, Any]],
    requests: int,
    seconds: float,
    concurrency: int,
) -> dict[str, Any]:
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    actions: Counter[str] = Counter()
    next_index = 0
    stop_at = time.monotonic() + seconds

    async def worker() -> None:
        nonlocal next_index
        while next_index < requests and time.monotonic() < stop_at:
            index = next_index
            next_index += 1
            started = time.perf_counter()
            response = await client.post(path, json=bodies(index))
            latencies.append(time.perf_counter() - started)
            statuses[response.status_code] += 1
            if response.status_code == 200 and "action" in response.json():
                actions[response.json()["action"]] += 1

    began = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - began
    summary = summary_ms(latencies)
    return {
        "requests": len(latencies),
        "errors": sum(n for status, n in statuses.items() if status >= 400),
        "seconds": round(elapsed, 2),
        "rps": round(len(latencies) / elapsed, 1),
        "p50_ms": summary["p50"],
        "p95_ms": summary["p95"],
        "actions": dict(actions),
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    folder = Path(args.db_dir or tempfile.mkdtemp(prefix="learnloop-service-bench-"))
    db, key = await prepare(folder, args.learnings, args.quiet)
    progress("starting learnloop serve", args.quiet)
    process, url = start_server(db)
    asked = questions(args.requests * 2, seed=3)
    fresh = learnings(args.requests, seed=11)
    try:
        most = max(args.concurrency)
        limits = httpx.Limits(max_connections=most, max_keepalive_connections=most)
        headers = {"Authorization": f"Bearer {key}"}
        async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60, limits=limits) as client:
            for q in asked[:10]:  # warm: the user's vector partition and the text index load on first use
                (await client.post("/api/retrieve", json={"query": q + " warm", "user": USER})).raise_for_status()
            runs: list[dict[str, Any]] = []
            offset = 0
            for concurrency in args.concurrency:
                progress(
                    f"{concurrency} clients: POST /api/retrieve, up to {args.requests} requests or {args.seconds} s",
                    args.quiet,
                )
                retrieve = await load(
                    client,
                    "/api/retrieve",
                    lambda i: {"query": asked[i], "user": USER},
                    args.requests,
                    args.seconds,
                    concurrency,
                )
                progress(f"{concurrency} clients: POST /api/tools/save_learning", args.quiet)
                base = offset
                save = await load(
                    client,
                    "/api/tools/save_learning",
                    lambda i, base=base: {
                        "arguments": {
                            "learning": f"{fresh[(base + i) % len(fresh)]} (batch {base + i})",
                            "category": "fact",
                        },
                        "user": USER,
                        "session": "bench",
                    },
                    args.requests,
                    args.seconds,
                    concurrency,
                )
                offset += save["requests"]
                runs.append({"concurrency": concurrency, "retrieve": retrieve, "save_learning": save})
            under_load = await import_under_load(client, asked, args) if args.import_mb > 0 else None
    finally:
        process.terminate()
        process.wait(timeout=30)
    return {"learnings": args.learnings, "cpus": os.cpu_count(), "runs": runs, "import_under_load": under_load}


def import_body(megabytes: float) -> tuple[bytes, int]:
    """JSON lines of valid learnings for the importing user, with text and no vectors, about `megabytes` long."""
    lines: list[bytes] = []
    size, seed = 0, 100
    while size < megabytes * 1024 * 1024:
        for text in learnings(2000, seed=seed):
            line = json.dumps({"text": f"{text} (import {len(lines)})", "category": "fact"}).encode() + b"\n"
            lines.append(line)
            size += len(line)
            if size >= megabytes * 1024 * 1024:
                break
        seed += 1
    return b"".join(lines), len(lines)


async def import_under_load(client: httpx.AsyncClient, asked: list[str], args: argparse.Namespace) -> dict[str, Any]:
    """p95 of POST /api/retrieve idle, then while a `--import-mb` import runs in the server."""
    body, lines = import_body(args.import_mb)

    def bodies(i: int) -> dict[str, Any]:
        return {"query": asked[i], "user": USER}

    progress("import under load: idle retrievals", args.quiet)
    idle = await load(client, "/api/retrieve", bodies, args.requests, args.seconds, 1)
    progress(f"import under load: posting {len(body) / 1e6:.1f} MB ({lines} lines) for {IMPORTER}", args.quiet)
    posted = await client.post("/api/import", params={"user": IMPORTER}, content=body, timeout=300)
    posted.raise_for_status()
    job = posted.json()["job"]
    busy = await load(client, "/api/retrieve", bodies, args.requests, args.seconds, 1)
    state = (await client.get(f"/api/import/{job}")).json()
    return {
        "import_bytes": len(body),
        "import_lines": lines,
        "idle_p95_ms": idle["p95_ms"],
        "p95_ms": busy["p95_ms"],
        "p50_ms": busy["p50_ms"],
        "requests": busy["requests"],
        "errors": busy["errors"],
        "p95_ratio": round(busy["p95_ms"] / idle["p95_ms"], 2) if idle["p95_ms"] else None,
        "import_status_after": state["status"],
        "import_lines_done": state["report"]["last_line"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--learnings", type=int, default=10_000, help="learnings stored for the measured user")
    parser.add_argument("--requests", type=int, default=1000, help="at most this many requests per endpoint")
    parser.add_argument("--seconds", type=float, default=30.0, help="at most this long per endpoint")
    parser.add_argument(
        "--concurrency",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[1, 4],
        help="comma-separated numbers of concurrent clients, one run each (default 1,4)",
    )
    parser.add_argument("--db-dir", help="folder for the benchmark database (default: a temp folder)")
    parser.add_argument(
        "--import-mb", type=float, default=15.0, help="size of the import of the 'import under load' row (0: skip)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()
    args.quiet = args.json
    figures = asyncio.run(run(args))
    if args.json:
        emit_json(figures)
        return
    rows = []
    for run_ in figures["runs"]:
        for name, f in (
            ("POST /api/retrieve", run_["retrieve"]),
            ("POST /api/tools/save_learning", run_["save_learning"]),
        ):
            rows.append([name, run_["concurrency"], f["requests"], f["errors"], f["rps"], f["p50_ms"], f["p95_ms"]])
    print_table(
        f"learnloop serve on loopback: {figures['learnings']} learnings for the user; "
        f"{figures['cpus']} CPUs shared by the server and the load generator",
        ["endpoint", "clients", "requests", "errors", "req/s", "p50 ms", "p95 ms"],
        rows,
    )
    for run_ in figures["runs"]:
        print(f"  save_learning outcomes with {run_['concurrency']} clients: {run_['save_learning']['actions']}")
    loaded = figures["import_under_load"]
    if loaded:
        print(
            f"  import under load: POST /api/retrieve p95 {loaded['p95_ms']} ms while a "
            f"{loaded['import_bytes'] / 1e6:.1f} MB import ran ({loaded['import_lines_done']} of "
            f"{loaded['import_lines']} lines done, {loaded['import_status_after']}) against {loaded['idle_p95_ms']} ms "
            f"idle: {loaded['p95_ratio']}x"
        )


if __name__ == "__main__":
    main()
