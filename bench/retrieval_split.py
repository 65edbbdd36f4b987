"""Where a warm retrieval's own time goes, layer by layer, on a file `bench/retrieval.py --db-dir` left behind.

    python bench/retrieval.py --sizes 10000 --embedder local:minilm-q8 --db-dir /tmp/bench10k
    python bench/retrieval_split.py /tmp/bench10k/bench.db

Each layer is timed over the bench's questions (distinct queries, query vector given), as the best of several
passes (the host's load moves a median by ±30% from run to run; the best pass moves far less), and the
difference between layers is what the outer one adds:

- search: `store.search` with a selection that keeps nothing: the partitions' currency check, the HNSW and
  BM25 searches, the keyword share (coverage) and the join of the two into the candidate pool;
- + ranking and rows: the same search with retrieval's ranking (`rank_pool`) as the selection, and the rows of
  the kept (the row cache, or SQLite);
- + items and block: `recall.retrieve` without recording: the question's terms, names and time span, the
  returned items, the rendered block;
- + SDK edge: `Loop.retrieve_context` without recording (argument checks);
- + bookkeeping: the same with hits recorded (the deferred write, and the searches that wait behind its flush).

Then each search piece alone, the same query repeated (caches warm: a floor, not what a retrieval sees), and the
exact numpy scan the retrieval bench compares with. The file is opened read-write (recording moves its hit
counts): use a copy to keep the original.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import timeit
from collections.abc import Awaitable, Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import emit_json
from corpus import questions
from learnloop.config import Settings
from learnloop.embedders import resolve_embedder
from learnloop.factory import build_engine
from learnloop.loop import Loop
from learnloop.models import Filters, Limits
from learnloop.pool_ranking import rank_pool
from learnloop.recall import retrieve
from learnloop.stores.base import SearchRequest
from learnloop.stores.search.embeddings import embedding_vectors
from learnloop.stores.sqlite import SQLiteStore
from learnloop.terms import query_terms, stem

TENANT, USER = "bench", "u0"


async def best_pass(run: Callable[[int], Awaitable[object]], count: int, passes: int) -> float:
    """Microseconds per query of the best of `passes` passes over queries 0..count-1."""
    best = float("inf")
    for _ in range(passes):
        started = time.perf_counter()
        for i in range(count):
            await run(i)
        best = min(best, (time.perf_counter() - started) / count)
    return best * 1e6


def tight(run: Callable[[], object], number: int = 2000) -> float:
    """Microseconds of one call, best of five repeats."""
    return min(timeit.repeat(run, number=number, repeat=5)) / number * 1e6


async def main(args: argparse.Namespace) -> None:
    embedder = resolve_embedder(args.embedder, Settings())
    asked = list(dict.fromkeys(questions(args.queries * 3, seed=3)))[: args.queries]
    vectors = np.ascontiguousarray(await embedder.embed(asked, purpose="query"), dtype=np.float32)
    store = SQLiteStore(Path(args.db), embedding_model=embedder.model_id, dimension=embedder.dimension)
    loop = Loop(build_engine(store, embedder, startup=()), tenant=TENANT)
    engine, scope = loop.engine, loop.scope(USER)
    for q, v in zip(asked, vectors, strict=True):  # partitions, index and row cache loaded
        await loop.retrieve_context(USER, q, query_vector=v, record=False)
    filters, limits, now = Filters(), Limits(), engine.clock()
    pool = max(engine.retrieval.candidate_pool, limits.top_k * 4)
    requests = [
        SearchRequest(vector=v, terms=query_terms(q), filters=filters, vector_k=pool, text_k=pool)
        for q, v in zip(asked, vectors, strict=True)
    ]

    async def search(i: int) -> object:
        return await engine.store.search(scope, requests[i], select=lambda found: [])

    async def ranked(i: int) -> object:
        def select(found: object) -> list[object]:
            return [r.candidate for r in rank_pool(found, filters, limits, engine.retrieval, now)]  # type: ignore[arg-type]

        return await engine.store.search(scope, requests[i], select=select)  # type: ignore[arg-type]

    async def items(i: int) -> object:
        return await retrieve(
            engine, scope, asked[i], filters=filters, limits=limits, query_vector=vectors[i], record=False
        )

    async def edge(i: int) -> object:
        return await loop.retrieve_context(USER, asked[i], query_vector=vectors[i], record=False)

    async def recorded(i: int) -> object:
        return await loop.retrieve_context(USER, asked[i], query_vector=vectors[i])

    layers = [
        ("search", search),
        ("+ ranking and rows", ranked),
        ("+ items and block", items),
        ("+ SDK edge", edge),
        ("+ bookkeeping", recorded),
    ]
    n = len(asked)
    rounds: dict[str, list[float]] = {name: [] for name, _ in layers}
    for _ in range(args.rounds):  # layers interleaved, so a change of the host's load reaches all of them
        for name, run in layers:
            rounds[name].append(await best_pass(run, n, args.passes))
    totals = {name: statistics.median(values) for name, values in rounds.items()}

    partition = next(iter(store._partitions._partitions.values()))  # the user's: the only one loaded
    request = requests[-1]
    selection = partition.select(filters, store._partitions.codebook)
    terms = store._partitions.terms.known([stem(t) for t in request.terms])
    found, _ = partition.keyword_slots(terms, pool, selection)
    matrix = np.ascontiguousarray(embedding_vectors(_own_embeddings(store), embedder.dimension))

    def scan() -> None:
        scores = matrix @ request.vector
        top = np.argpartition(-scores, min(6, len(scores) - 1))[:6]
        top[np.argsort(-scores[top])]

    ann = partition.ann
    pieces = {
        "hnsw_search": None if ann is None else tight(lambda: ann.query_arrays(request.vector, pool)),
        "vector_hits_as_slots": tight(lambda: partition.search_slots(request.vector, pool, selection)),
        "bm25_top_k": tight(lambda: partition.keyword_slots(terms, pool, selection)),
        "keyword_share": tight(lambda: partition.coverage(found, terms, len(set(request.terms)))),
        "numpy_scan": tight(scan, 200),
    }
    await loop.aclose()
    figures = {
        "queries": n,
        "vectors": len(matrix),
        "hnsw_ef": None if ann is None else ann._ef,
        "layers_us": {name: round(value, 1) for name, value in totals.items()},
        "pieces_us": {name: None if value is None else round(value, 1) for name, value in pieces.items()},
    }
    if args.json:
        emit_json(figures)
        return
    print(f"{n} distinct questions, best of {args.passes} passes, median of {args.rounds} rounds (µs per query)")
    previous = 0.0
    for name, total in totals.items():
        print(f"  {name:22s} {total:8.1f}  (adds {total - previous:7.1f})")
        previous = total
    print(f"one query repeated (caches warm), µs ({len(matrix)} vectors; HNSW ef {figures['hnsw_ef']}):")
    for name, value in pieces.items():
        print(f"  {name:22s} {'-' if value is None else f'{value:8.1f}'}")


def _own_embeddings(store: SQLiteStore) -> list[bytes]:
    import sqlite3

    conn = sqlite3.connect(store.path)
    try:
        rows = conn.execute(
            "SELECT embedding FROM learnings WHERE tenant = ? AND user_id = ? AND status != 'deprecated'",
            (TENANT, USER),
        ).fetchall()
    finally:
        conn.close()
    return [row[0] for row in rows]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("db", help="a bench file (bench/retrieval.py --db-dir DIR leaves DIR/bench.db)")
    parser.add_argument("--embedder", default=Settings().embedder)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    asyncio.run(main(parser.parse_args()))
