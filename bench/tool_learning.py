"""Does learned tool routing get better with use? Prequential replay against a frozen description-only router.

    python bench/tool_learning.py                                   # MetaTool in ../shared/data/metatool/
    python bench/tool_learning.py --tools tools.jsonl --queries queries.jsonl --json
    python bench/tool_learning.py --export-metatool DIR             # write MetaTool in the generic format

Generic format: tools JSONL `{"name", "description"}`; queries JSONL `{"query", "tools": [names]}` in replay
order. MetaTool (199 tools, 20,614 single-tool queries, MIT) is converted on the fly: `plugin_des.json` gives
the tools, `data/all_clean_data.csv` the queries, shuffled with `--seed` (the file is grouped by tool).

Replay: sessions of `--per-session` queries, spread over `--users` users. For each query, in order:
`set_context` routes the top k (the learned router); the frozen baseline ranks the same query by
descriptions and keywords only (`route(..., learned=False)`); both are scored (recall@1, @5) *before*
anything is learned from the query; then the simulated agent calls the gold tool — from the routed list if
it is there (strong signal), else found through `search_available_tools` on the query or, failing that, on
the tool's name (discovery), recorded with `record_call`. Searches show what the proxy shows: the few hits
close to the best one that the routed list lacks (`relevant_hits`, at most 3), and only those count as
searched. Figures are reported per block of sessions.

Control: a random `--control-share` of the tools (tool-disjoint) never appears in the replay. After it,
their queries are ranked by the learned and the frozen router: tools never seen used must not get worse.

Also reported for the last block: how many of the baseline's misses the learned router fixes (and how many
of its hits it loses), how many queries ask for a tool never used before (learning cannot know those), and
the ceiling the gold sets allow (recall@5 is below 1 only for a query with more than 5 gold tools).
Query embeddings are cached under .bench-cache/. The data is read in place, never copied into the repo.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import hashlib
import json
import random
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import CACHE, emit_json, print_table, progress
from learnloop.embedders.local import LocalMiniLM
from learnloop.factory import build_engine
from learnloop.loop import Loop
from learnloop.stores.sqlite import SQLiteStore
from learnloop.tools.catalog import name_words
from learnloop.tools.router import relevant_hits

TENANT = "bench"


@dataclass(frozen=True)
class Dataset:
    name: str
    tools: list[dict[str, str]]
    queries: list[tuple[str, list[str]]]


def default_metatool() -> Path | None:
    here = Path(__file__).resolve().parent.parent
    for base in (Path.cwd(), here):
        for up in (base, *base.parents):
            candidate = up / "shared" / "data" / "metatool" / "dataset"
            if (candidate / "plugin_des.json").exists():
                return candidate
    return None


def load_metatool(folder: Path, seed: int) -> Dataset:
    descriptions = json.loads((folder / "plugin_des.json").read_text("utf-8"))
    tools = [{"name": name, "description": text} for name, text in descriptions.items()]
    with (folder / "data" / "all_clean_data.csv").open(encoding="utf-8", newline="") as handle:
        queries = [(row["Query"].strip(), [row["Tool"].strip()]) for row in csv.DictReader(handle)]
    queries = [(q, t) for q, t in queries if q and t[0] in descriptions]
    random.Random(seed).shuffle(queries)
    return Dataset("MetaTool", tools, queries)


def load_generic(tools_file: Path, queries_file: Path) -> Dataset:
    tools = [json.loads(line) for line in tools_file.read_text("utf-8").splitlines() if line.strip()]
    queries = []
    for line in queries_file.read_text("utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            queries.append((str(item["query"]), [str(t) for t in item["tools"]]))
    return Dataset(
        queries_file.stem, [{"name": t["name"], "description": t.get("description", "")} for t in tools], queries
    )


def export(dataset: Dataset, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tools.jsonl").write_text("".join(json.dumps(t) + "\n" for t in dataset.tools), "utf-8")
    lines = "".join(json.dumps({"query": q, "tools": t}) + "\n" for q, t in dataset.queries)
    (folder / "queries.jsonl").write_text(lines, "utf-8")


async def embed_cached(embedder: LocalMiniLM, texts: list[str], quiet: bool) -> np.ndarray:
    key = hashlib.sha256(("\n".join(texts) + embedder.model_id).encode()).hexdigest()[:16]
    path = CACHE / f"tool-queries-{len(texts)}-{key}.npy"
    if path.exists():
        cached: np.ndarray = np.load(path)
        return cached
    progress(f"embedding {len(texts)} queries (cached afterwards in {path.parent})", quiet)
    chunks = []
    for start in range(0, len(texts), 500):
        chunks.append(await embedder.embed(texts[start : start + 500], purpose="query"))
        progress(f"  {min(start + 500, len(texts))}/{len(texts)}", quiet)
    vectors = np.vstack(chunks).astype(np.float32)
    CACHE.mkdir(exist_ok=True)
    np.save(path, vectors)
    return vectors


def recall(gold: list[str], ranked: list[str], k: int) -> float:
    return len(set(gold) & set(ranked[:k])) / len(gold)


def split(
    dataset: Dataset, args: argparse.Namespace
) -> tuple[list[tuple[str, list[str]]], list[tuple[str, list[str]]]]:
    """The replay stream and the control queries, tool-disjoint."""
    names = sorted(t["name"] for t in dataset.tools)
    control_tools = set(random.Random(args.seed + 1).sample(names, round(len(names) * args.control_share)))
    stream = [(q, t) for q, t in dataset.queries if not control_tools & set(t)]
    control = [(q, t) for q, t in dataset.queries if set(t) <= control_tools]
    return stream[: args.sessions * args.per_session], control[: args.control_queries]


async def run(args: argparse.Namespace, dataset: Dataset) -> dict[str, Any]:
    stream, control = split(dataset, args)
    embedder = LocalMiniLM(threads=args.threads)
    vectors = await embed_cached(embedder, [q for q, _ in stream + control], args.quiet)
    folder = Path(tempfile.mkdtemp(prefix="learnloop-tools-"))
    store = SQLiteStore(folder / "tools.db", embedding_model=embedder.model_id, dimension=embedder.dimension)
    loop = Loop(build_engine(store, embedder), tenant=TENANT)
    tools = loop.tools
    tools.configure(k=args.k, search_limit=args.search_limit, insight_every=0)
    progress(f"registering {len(dataset.tools)} tools", args.quiet)
    await tools.register(dataset.tools)
    k = args.k
    blocks: list[dict[str, Any]] = []
    sums = {"recall@1": 0.0, "recall@5": 0.0, "baseline_recall@5": 0.0, "baseline_recall@1": 0.0}
    found_by = {"list": 0, "search": 0, "name_search": 0}
    counted = 0
    block_start = 1
    used: set[str] = set()
    # Per block: baseline misses fixed by learning, baseline hits lost, queries whose gold was never used.
    block_counts = {"fixed": 0, "broken": 0, "baseline_misses": 0, "gold_never_used": 0, "ceiling": 0.0}
    for index, ((query, gold), vector) in enumerate(zip(stream, vectors[: len(stream)], strict=True)):
        session_number = index // args.per_session
        session = f"s{session_number}"
        user = f"user{session_number % args.users}"
        routed = [r.name for r in await tools.set_context(session, query, user=user, k=k, query_vector=vector)]
        baseline = [r.name for r in await tools.route(query, k, user=user, query_vector=vector, learned=False)]
        sums["recall@1"] += recall(gold, routed, 1)
        sums["recall@5"] += recall(gold, routed, 5)
        sums["baseline_recall@1"] += recall(gold, baseline, 1)
        sums["baseline_recall@5"] += recall(gold, baseline, 5)
        counted += 1
        learned_hit, baseline_hit = recall(gold, routed, 5), recall(gold, baseline, 5)
        block_counts["baseline_misses"] += baseline_hit < 1
        block_counts["fixed"] += baseline_hit < learned_hit
        block_counts["broken"] += learned_hit < baseline_hit
        block_counts["gold_never_used"] += not used & set(gold)
        block_counts["ceiling"] += min(1.0, 5 / len(gold))
        used.update(gold)
        for tool in gold:
            if tool in routed:
                found_by["list"] += 1
            else:
                # As the proxy's search_available_tools: only the few relevant hits the agent did not see yet
                # are shown (and recorded as searched).
                found = relevant_hits(await tools.search(query, user=user, query_vector=vector), shown=routed)
                await tools.record_search(session, query, [f.name for f in found], user=user)
                if tool in {f.name for f in found}:
                    found_by["search"] += 1
                else:
                    by_name = relevant_hits(await tools.search(name_words(tool), user=user), shown=routed)
                    await tools.record_search(session, name_words(tool), [f.name for f in by_name], user=user)
                    found_by["name_search"] += 1
            await tools.record_call(session, tool, {}, ok=True, latency_ms=100.0, user=user)
        last_of_session = (index + 1) % args.per_session == 0 or index + 1 == len(stream)
        if last_of_session and ((session_number + 1) % args.block == 0 or index + 1 == len(stream)):
            blocks.append(
                {
                    "sessions": f"{block_start}-{session_number + 1}",
                    "recall@1": round(sums["recall@1"] / counted, 4),
                    "recall@5": round(sums["recall@5"] / counted, 4),
                    "baseline_recall@1": round(sums["baseline_recall@1"] / counted, 4),
                    "baseline_recall@5": round(sums["baseline_recall@5"] / counted, 4),
                    "queries": counted,
                    "baseline_misses": int(block_counts["baseline_misses"]),
                    "baseline_misses_fixed": int(block_counts["fixed"]),
                    "baseline_hits_lost": int(block_counts["broken"]),
                    "gold_never_used": int(block_counts["gold_never_used"]),
                    "ceiling_recall@5": round(block_counts["ceiling"] / counted, 4),
                }
            )
            progress(f"block {len(blocks)}: {blocks[-1]}", args.quiet)
            sums = dict.fromkeys(sums, 0.0)
            block_counts = dict.fromkeys(block_counts, 0)
            counted = 0
            block_start = session_number + 2
    await tools.flush()
    learned_5 = base_5 = learned_1 = base_1 = 0.0
    for (query, gold), vector in zip(control, vectors[len(stream) :], strict=True):
        learned = [r.name for r in await tools.route(query, k, user="user0", query_vector=vector)]
        frozen = [r.name for r in await tools.route(query, k, query_vector=vector, learned=False)]
        learned_5, base_5 = learned_5 + recall(gold, learned, 5), base_5 + recall(gold, frozen, 5)
        learned_1, base_1 = learned_1 + recall(gold, learned, 1), base_1 + recall(gold, frozen, 1)
    pairs = len(await tools.learned_pairs(limit=1_000_000))
    await loop.aclose()
    n_control = max(len(control), 1)
    last = blocks[-1]
    return {
        "dataset": dataset.name,
        "tools": len(dataset.tools),
        "sessions": -(-len(stream) // args.per_session),
        "queries": len(stream),
        "k": k,
        "blocks": blocks,
        "gain_recall@5_last_block": round(float(last["recall@5"]) - float(last["baseline_recall@5"]), 4),
        "gain_recall@1_last_block": round(float(last["recall@1"]) - float(last["baseline_recall@1"]), 4),
        "baseline_misses_fixed_last_block": round(
            int(last["baseline_misses_fixed"]) / max(1, int(last["baseline_misses"])),
            4,
        ),
        "control_tools": round(len(dataset.tools) * args.control_share),
        "control_queries": len(control),
        "control_recall@5": round(learned_5 / n_control, 4),
        "control_baseline_recall@5": round(base_5 / n_control, 4),
        "control_delta_recall@5": round((learned_5 - base_5) / n_control, 4),
        "control_recall@1": round(learned_1 / n_control, 4),
        "control_baseline_recall@1": round(base_1 / n_control, 4),
        "control_delta_recall@1": round((learned_1 - base_1) / n_control, 4),
        "found_by": found_by,
        "learned_pairs": pairs,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tools", type=Path, help="tools JSONL ({name, description})")
    parser.add_argument("--queries", type=Path, help="queries JSONL ({query, tools}) in replay order")
    parser.add_argument("--metatool", type=Path, default=None, help="MetaTool dataset folder (default: found)")
    parser.add_argument("--export-metatool", type=Path, help="write MetaTool as tools.jsonl/queries.jsonl and exit")
    parser.add_argument("--sessions", type=int, default=400)
    parser.add_argument("--per-session", type=int, default=10)
    parser.add_argument("--block", type=int, default=80, help="sessions per reported block")
    parser.add_argument("--users", type=int, default=10)
    parser.add_argument("--k", type=int, default=5, help="tools in the routed list")
    parser.add_argument("--search-limit", type=int, default=10)
    parser.add_argument("--control-share", type=float, default=0.2, help="share of tools held out (tool-disjoint)")
    parser.add_argument("--control-queries", type=int, default=600)
    parser.add_argument("--seed", type=int, default=0, help="MetaTool query order and control split")
    parser.add_argument("--threads", type=int, default=None, help="embedder intra-op threads")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()
    args.quiet = args.json
    if (args.tools is None) != (args.queries is None):
        parser.error("--tools and --queries go together")
    if args.tools is not None:
        dataset = load_generic(args.tools, args.queries)
    else:
        folder = args.metatool or default_metatool()
        if folder is None:
            parser.error("MetaTool not found; pass --metatool DIR or --tools/--queries")
        dataset = load_metatool(folder, args.seed)
    if args.export_metatool is not None:
        export(dataset, args.export_metatool)
        print(f"wrote {len(dataset.tools)} tools and {len(dataset.queries)} queries to {args.export_metatool}")
        return
    figures = asyncio.run(run(args, dataset))
    if args.json:
        emit_json(figures)
        return
    rows = [
        [b["sessions"], b["queries"], b["recall@1"], b["recall@5"], b["baseline_recall@1"], b["baseline_recall@5"]]
        for b in figures["blocks"]
    ]
    print_table(
        f"{figures['dataset']}: learned routing vs frozen description-only baseline "
        f"({figures['tools']} tools, {figures['queries']} queries in {figures['sessions']} sessions, k={figures['k']})",
        ["sessions", "queries", "recall@1", "recall@5", "base@1", "base@5"],
        rows,
    )
    print_table(
        "summary",
        ["figure", "value"],
        [
            ["gain recall@5, last block", figures["gain_recall@5_last_block"]],
            [
                f"control recall@5 ({figures['control_queries']} queries, {figures['control_tools']} unseen tools)",
                figures["control_recall@5"],
            ],
            ["control baseline recall@5", figures["control_baseline_recall@5"]],
            ["control delta recall@5", figures["control_delta_recall@5"]],
            ["control delta recall@1", figures["control_delta_recall@1"]],
            ["gain recall@1, last block", figures["gain_recall@1_last_block"]],
            ["share of the baseline's misses fixed, last block", figures["baseline_misses_fixed_last_block"]],
            ["ceiling recall@5 of the gold sets, last block", figures["blocks"][-1]["ceiling_recall@5"]],
            [
                "gold found in list / search / name search",
                "{list} / {search} / {name_search}".format(**figures["found_by"]),
            ],
            ["learned pairs kept", figures["learned_pairs"]],
        ],
    )


if __name__ == "__main__":
    main()
