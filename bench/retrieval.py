"""Retrieval and write latency at 10k and 100k learnings for one user (plus other users in the same file).

    python bench/retrieval.py                       # table
    python bench/retrieval.py --json                # one JSON object
    python bench/retrieval.py --sizes 2000 --other-users 50 --queries 50   # quick run
    python bench/retrieval.py --embedder local:minilm-static               # one embedder only

Every embedder named by --embedder (default: the default one, then the static fast profile) is measured in
its own database. Figures per size: retrieve_context end to end (query embedding included) and with a
pre-computed query vector; the in-run baseline is an exact numpy scan over the user's vectors (top-6) on one
BLAS thread, as the retrieval runs (`baseline_every_core_p50_ms`: the same on every core), alone and with the
same embedding; each timed pass starts once the previous one's bookkeeping has committed; writing a learning
(validate, embed, insert, index, event); HNSW recall@10 (`ann_recall@10`: the ids of `retrieve_context`'s top
10 with the index that the same retrieval over an exact scan returns, on the first 100 questions; `_texts`: the
same by text, since the synthetic corpus repeats texts); `first_query_ms`, the first query of a process that
reopens the file (its partition and index loaded from disk), and `first_query_after_growth_s`, the first after
the bulk insert (the index built); bytes per learning by table and index (dbstat) and beside the file
(`<file>.ann/`: HNSW index, partition snapshot); peak RSS.
Embeddings of the synthetic corpus are cached under .bench-cache/ so reruns skip that step.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import os
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from threadpoolctl import threadpool_limits

from common import CACHE, emit_json, print_table, progress, summary_ms
from corpus import learnings, questions
from learnloop.capture.gate import WriteGate
from learnloop.capture.gate_version import gate_version
from learnloop.config import Settings
from learnloop.embedders import Embedder, resolve_embedder
from learnloop.factory import build_engine
from learnloop.loop import Loop
from learnloop.models import EventAction, Scope
from learnloop.simhash import simhash64_hex
from learnloop.stores.base import EventDraft, Insert, NewLearning
from learnloop.stores.search.embeddings import embedding_vectors
from learnloop.stores.sqlite import SQLiteStore

TENANT = "bench"
USER = "u0"


def clear_cache(embedder: object) -> None:
    cache = getattr(embedder, "_cache", None)
    if cache is not None:
        cache.clear()


async def embed_cached(embedder: Embedder, texts: list[str], tag: str, quiet: bool) -> np.ndarray:
    key = hashlib.sha256(("\n".join(texts) + embedder.model_id).encode()).hexdigest()[:16]
    path = CACHE / f"{tag}-{len(texts)}-{key}.npy"
    if path.exists():
        return np.load(path)
    progress(f"embedding {len(texts)} {tag} texts (cached afterwards in {path.parent})", quiet)
    chunks = []
    for start in range(0, len(texts), 2000):
        chunks.append(await embedder.embed(texts[start : start + 2000]))
        progress(f"  {min(start + 2000, len(texts))}/{len(texts)}", quiet)
    vectors = np.vstack(chunks).astype(np.float32)
    CACHE.mkdir(exist_ok=True)
    np.save(path, vectors)
    return vectors


async def bulk_insert(store: SQLiteStore, user: str, texts: list[str], vectors: np.ndarray, model: str) -> None:
    """Rows as the governed write stores them (gate version included: the synthetic texts are benign), without
    paying for a `save()` per row."""
    scope = Scope(tenant=TENANT, user=user)
    accepted = gate_version(WriteGate())
    # Built a batch at a time: a million `Insert`s up front held about 3 GB and wrote nothing for half an hour.
    for start in range(0, len(texts), 2000):
        ops = [
            Insert(
                NewLearning(
                    tenant=TENANT,
                    user=user,
                    text=t,
                    vector=v,
                    embedding_model=model,
                    simhash64=simhash64_hex(t),
                    namespace="learning",
                    gate_version=accepted,
                ),
                EventDraft(actor="import", action=EventAction.IMPORTED),
            )
            for t, v in zip(texts[start : start + 2000], vectors[start : start + 2000], strict=True)
        ]
        await store.apply(scope, ops)


async def run(args: argparse.Namespace) -> dict[str, object]:
    specs = [spec.strip() for spec in args.embedder.split(",") if spec.strip()]
    profiles = {spec: await run_profile(args, spec) for spec in specs}
    first = profiles[specs[0]]
    return {
        "embedder": specs[0],
        "sizes": first["sizes"],
        "profiles": profiles,
        **{key: first[key] for key in ("other_users", "other_learnings", "queries", "writes")},
    }


async def run_profile(args: argparse.Namespace, spec: str) -> dict[str, object]:
    sizes = sorted(int(s) for s in args.sizes.split(","))
    embedder = resolve_embedder(spec, Settings(embedder_threads=args.threads))
    texts = learnings(max(sizes) + args.writes, seed=1)
    own_texts, write_texts = texts[: max(sizes)], texts[max(sizes) :]
    other_texts = learnings(args.other_users * args.per_other, seed=2)
    own = await embed_cached(embedder, own_texts, "own", args.quiet)
    others = await embed_cached(embedder, other_texts, "others", args.quiet)
    asked = list(dict.fromkeys(questions(args.queries * 3, seed=3)))[: args.queries]
    # The harness's own corpus (over 100k strings) is not the system under test: without this, every full
    # collection during the measured queries rescans it (about +0.5 ms at the median at 100k). The store's
    # objects, allocated from here on, are still collected as in an application.
    gc.collect()
    gc.freeze()

    folder = Path(args.db_dir or tempfile.mkdtemp(prefix="learnloop-bench-"))
    store = SQLiteStore(
        folder / "bench.db",
        embedding_model=embedder.model_id,
        dimension=embedder.dimension,
        ann_threshold=args.ann_threshold,
    )
    # No start-up hooks: the write gate's recheck of rows inserted around the gate (as here) would run on the
    # store's thread through the measured queries; an application's rows went through the gate when written.
    loop = Loop(build_engine(store, embedder, startup=()), tenant=TENANT)
    progress(f"loading {len(other_texts)} learnings of {args.other_users} other users into {folder}", args.quiet)
    for u in range(args.other_users):
        part = slice(u * args.per_other, (u + 1) * args.per_other)
        await bulk_insert(store, f"other{u}", other_texts[part], others[part], embedder.model_id)

    figures: dict[str, dict[str, float]] = {}
    loaded = 0
    for size in sizes:
        progress(f"growing {USER} to {size} learnings", args.quiet)
        await bulk_insert(store, USER, own_texts[loaded:size], own[loaded:size], embedder.model_id)
        loaded = size
        started = time.perf_counter()
        await loop.retrieve_context(USER, "warm up the partition and its index", record=False)
        warm_s = time.perf_counter() - started
        query_vectors = await embedder.embed(asked, purpose="query")

        e2e, vec, base, base_threads, base_e2e = [], [], [], [], []
        for q in asked[:5]:
            await loop.retrieve_context(USER, q + " warm")
        clear_cache(embedder)  # every measured query embeds from scratch
        await settled(store)
        for q in asked:
            t0 = time.perf_counter()
            await loop.retrieve_context(USER, q)
            e2e.append(time.perf_counter() - t0)
        await settled(store)
        for v, q in zip(query_vectors, asked, strict=True):
            t0 = time.perf_counter()
            await loop.retrieve_context(USER, q, query_vector=v)
            vec.append(time.perf_counter() - t0)
        matrix = np.ascontiguousarray(own[:size])
        await settled(store)  # the timed retrievals' bookkeeping committed, not competing with the scan
        # One BLAS thread, as the store sets for the whole process and as the retrieval runs (HNSW and the pool's
        # numpy on one thread); the scan on every core the BLAS library uses is reported beside it.
        for threads, times in ((1, base), (os.cpu_count() or 1, base_threads)):
            with threadpool_limits(limits=threads, user_api="blas"):
                for v in query_vectors:
                    t0 = time.perf_counter()
                    scores = matrix @ v
                    top = np.argpartition(-scores, 6)[:6]
                    top[np.argsort(-scores[top])]
                    times.append(time.perf_counter() - t0)
        clear_cache(embedder)
        for q in asked:
            t0 = time.perf_counter()
            qv = (await embedder.embed([q + " ?"], purpose="query"))[0]
            scores = matrix @ qv
            np.argpartition(-scores, 6)[:6]
            base_e2e.append(time.perf_counter() - t0)
        writes = []
        for text in write_texts:
            t0 = time.perf_counter()
            await loop.save(text + f" (run {size})", user=USER)
            writes.append(time.perf_counter() - t0)
        recall = await ann_recall(store, query_vectors, loop.engine.retrieval.candidate_pool)
        # A restarted process: the file reopened, its first query (vector given: the embedder is loaded).
        await loop.aclose()  # closes the embedder too (and saves the partitions' index and snapshot)
        disk = disk_use(folder / "bench.db")
        embedder = resolve_embedder(spec, Settings(embedder_threads=args.threads))
        store = SQLiteStore(
            folder / "bench.db",
            embedding_model=embedder.model_id,
            dimension=embedder.dimension,
            ann_threshold=args.ann_threshold,
        )
        loop = Loop(build_engine(store, embedder, startup=()), tenant=TENANT)
        await loop.engine.ensure_started()
        started = time.perf_counter()
        await loop.retrieve_context(USER, asked[0], query_vector=query_vectors[0], record=False)
        reopened_ms = (time.perf_counter() - started) * 1000
        top10 = await retrieval_recall(loop, folder / "bench.db", embedder, asked, query_vectors)

        s_e2e, s_vec, s_base, s_base_e2e, s_w = map(summary_ms, (e2e, vec, base, base_e2e, writes))
        figures[str(size)] = {
            "e2e_p50_ms": s_e2e["p50"],
            "e2e_p95_ms": s_e2e["p95"],
            "vec_p50_ms": s_vec["p50"],
            "vec_p95_ms": s_vec["p95"],
            "baseline_p50_ms": s_base["p50"],
            "baseline_p95_ms": s_base["p95"],
            "baseline_every_core_p50_ms": summary_ms(base_threads)["p50"],
            "baseline_e2e_p50_ms": s_base_e2e["p50"],
            "write_p50_ms": s_w["p50"],
            "write_p95_ms": s_w["p95"],
            # The measure: ids of retrieve_context's top 10 with the ANN index against an exact scan.
            "ann_recall@10": top10["ids"],
            # The same by text: the synthetic corpus repeats texts (identical vectors), and among such ties any
            # id is as right as another.
            "ann_recall@10_texts": top10["texts"],
            # The store's vector top 10 of the candidate pool against an exact top 10, judged by similarity.
            "ann_pool_recall@10": recall,
            # Host load moves every figure here by ±30% from run to run; this ratio moves far less.
            "e2e_vs_baseline": round(s_e2e["p50"] / s_base_e2e["p50"], 2),
            "vec_vs_baseline": round(s_vec["p50"] / s_base["p50"], 2),
            "first_query_ms": round(reopened_ms, 1),
            "first_query_after_growth_s": round(warm_s, 2),
            **disk,
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        }
    await loop.aclose()
    return {
        "sizes": figures,
        "other_users": args.other_users,
        "other_learnings": len(other_texts),
        "queries": len(asked),
        "writes": len(write_texts),
    }


def disk_use(path: Path) -> dict[str, object]:
    """Bytes per learning in the file (every user's learnings), by table and index (dbstat), and beside it
    (the saved HNSW indexes and partition snapshots), with the totals in MB."""
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        learnings = conn.execute("SELECT COUNT(*) FROM learnings").fetchone()[0]
        pages = conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    finally:
        conn.close()
    beside: dict[str, int] = {}
    for file in path.with_name(path.name + ".ann").glob("*"):
        beside[file.suffix.lstrip(".")] = beside.get(file.suffix.lstrip("."), 0) + file.stat().st_size
    db_bytes = path.stat().st_size
    return {
        "learnings_in_file": learnings,
        "db_mb": round(db_bytes / 1e6, 1),
        "beside_db_mb": round(sum(beside.values()) / 1e6, 1),
        "bytes_per_learning": round((db_bytes + sum(beside.values())) / learnings),
        # Tables and indexes of more than one page (the rest are empty).
        "bytes_per_learning_by_table": {name: round(size / learnings, 1) for name, size in pages if size > page_size},
        "bytes_per_learning_beside": {name: round(size / learnings) for name, size in beside.items()},
    }


async def settled(store: SQLiteStore) -> None:
    """Wait until the store has committed the retrievals' deferred bookkeeping and the promotions they earned (a
    read that could see them commits both first) and has had a pause for the housekeeping that follows (a
    snapshot of partitions those changed), so a timed pass does not start behind an earlier one's."""
    await store.get(Scope(tenant=TENANT, user=USER), 0)
    await asyncio.sleep(1.0)


async def retrieval_recall(
    loop: Loop, path: Path, embedder: Embedder, asked: list[str], query_vectors: np.ndarray
) -> dict[str, float]:
    """Share of the ids (and of the texts) of `retrieve_context`'s top 10 through `loop`'s store (its HNSW index,
    where the partition has one) that the same retrieval returns over an exact scan (the file opened again with
    no index), on the first 100 questions."""
    from learnloop.models import Limits

    exact_store = SQLiteStore(
        path, embedding_model=embedder.model_id, dimension=embedder.dimension, ann_threshold=1 << 62
    )
    exact = Loop(build_engine(exact_store, embedder, startup=()), tenant=TENANT)
    limits = Limits(top_k=10, max_items=10, max_chars=1_000_000)
    by_id, by_text = [], []
    try:
        for q, v in list(zip(asked, query_vectors, strict=True))[:100]:
            got = (await loop.retrieve_context(USER, q, query_vector=v, limits=limits, record=False)).items
            want = (await exact.retrieve_context(USER, q, query_vector=v, limits=limits, record=False)).items
            if not want:
                continue
            wanted_ids = {i.learning.id for i in want}
            by_id.append(sum(i.learning.id in wanted_ids for i in got) / len(want))
            texts = Counter(i.learning.text for i in want)
            by_text.append(sum((Counter(i.learning.text for i in got) & texts).values()) / len(want))
    finally:
        await exact_store.aclose()  # not the loop's: it would close the embedder both loops share
    return {"ids": round(float(np.mean(by_id)), 3), "texts": round(float(np.mean(by_text)), 3)}


async def ann_recall(store: SQLiteStore, query_vectors: np.ndarray, pool: int) -> float:
    """Share of the store's vector top-10 that belongs in an exact top-10 over the same rows (1.0 for exact
    scans). Judged by similarity, not id: the synthetic corpus holds many texts with identical vectors, and
    among ties any id is as right as another (id overlap reads ~0.65 at any ef on such data)."""
    import sqlite3

    from learnloop.models import Filters
    from learnloop.stores.base import SearchRequest

    conn = sqlite3.connect(store.path)
    rows = conn.execute(
        "SELECT embedding FROM learnings WHERE tenant = ? AND user_id = ? AND status != 'deprecated'",
        (TENANT, USER),
    ).fetchall()
    conn.close()
    matrix = embedding_vectors([r[0] for r in rows], query_vectors.shape[1])
    scope = Scope(tenant=TENANT, user=USER)
    overlap = []
    for v in query_vectors[:100]:
        # Asked for the candidate pool retrieval asks for (it ranks those): the top 10 of that is what it sees.
        request = SearchRequest(vector=v, terms=[], filters=Filters(include_global=False), vector_k=pool, text_k=0)
        got = sorted((c.vector_similarity or 0.0 for c in await store.search(scope, request)), reverse=True)
        tenth = float(np.sort(matrix @ v)[-10])
        overlap.append(sum(similarity >= tenth - 1e-5 for similarity in got[:10]) / 10)
    return round(float(np.mean(overlap)), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated learnings for the measured user")
    parser.add_argument("--other-users", type=int, default=1000)
    parser.add_argument("--per-other", type=int, default=10, help="learnings per other user")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--threads", type=int, default=None, help="embedder intra-op threads")
    parser.add_argument(
        "--embedder",
        default=f"{Settings().embedder},local:minilm-static",
        help="comma-separated embedding model specs, each measured in its own file (default: the default and the "
        "fast static profile); the JSON's top-level 'sizes' are the first one's",
    )
    parser.add_argument(
        "--ann-threshold", type=int, default=Settings().ann_threshold, help="learnings per user before HNSW"
    )
    parser.add_argument("--db-dir", help="folder for the benchmark database (default: a temp folder)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()
    args.quiet = args.json
    figures = asyncio.run(run(args))
    if args.json:
        emit_json(figures)
        return
    rows = []
    for spec, profile in figures["profiles"].items():  # type: ignore[union-attr]
        for size, f in profile["sizes"].items():
            rows.append(
                [
                    spec,
                    size,
                    f["e2e_p50_ms"],
                    f["e2e_p95_ms"],
                    f["vec_p50_ms"],
                    f["vec_p95_ms"],
                    f["baseline_p50_ms"],
                    f["baseline_e2e_p50_ms"],
                    f["e2e_vs_baseline"],
                    f["vec_vs_baseline"],
                    f["write_p50_ms"],
                    f["ann_recall@10"],
                    f["first_query_ms"],
                    f["bytes_per_learning"],
                    f["peak_rss_mb"],
                ]
            )
    print_table(
        f"retrieve_context latency, ms ({figures['queries']} queries; {figures['other_learnings']} learnings of "
        f"{figures['other_users']} other users in the same file)",
        [
            "embedder",
            "learnings",
            "e2e p50",
            "e2e p95",
            "vec p50",
            "vec p95",
            "numpy p50",
            "numpy+embed p50",
            "e2e ÷ numpy+embed",
            "vec ÷ numpy",
            "write p50",
            "recall@10",
            "first query ms",
            "bytes/learning",
            "peak RSS MB",
        ],
        rows,
    )
    for spec, profile in figures["profiles"].items():  # type: ignore[union-attr]
        for size, f in profile["sizes"].items():
            parts = {**f["bytes_per_learning_by_table"], **f["bytes_per_learning_beside"]}
            tables = sorted(parts.items(), key=lambda kv: -kv[1])
            print_table(
                f"{spec} at {size}: bytes per learning ({f['learnings_in_file']} learnings in the file; "
                f"{f['db_mb']} MB file, {f['beside_db_mb']} MB beside it)",
                ["table, index or file", "bytes per learning"],
                tables,
            )
    print("\n  e2e: embed the query + hybrid search + rank + render + record hits (one transaction)")
    print("  vec: the same with the query vector given; numpy: exact top-6 scan of the user's vectors (baseline)")
    print("  e2e ÷ numpy+embed: the end-to-end p50 against embedding plus a bare numpy scan, in the same run")
    print("  vec ÷ numpy: learnloop's own time (query vector given) against the exact numpy scan, in the same run")
    print("  first query: the first query of a process that reopened the file (partition and index from disk)")
    print("  bytes/learning: the file and what is saved beside it (HNSW index, partition snapshot), per learning")


if __name__ == "__main__":
    main()
