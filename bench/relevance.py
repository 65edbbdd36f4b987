"""Relevance: how often retrieval shows something when nothing fits, against the recall it keeps.

    python bench/relevance.py                 # bench/data/relevance/{no_answer,heldout}.jsonl and LoCoMo dev
    python bench/relevance.py --data FILE [FILE ...] --locomo FILE --json

- No-answer set (`--data`, JSONL: {"user", "learnings", "unanswerable", "answerable": [{"query",
  "answers": [indices]}]}): each user's learnings saved with `loop.save()`; false inclusion is the share of
  unanswerable questions whose block is not empty; answered is the share of answerable questions whose block
  holds one of their answers. `heldout.jsonl` was written by a helper from the issue's classes without reading
  the retrieval code (near-topic questions, unknown names, other periods, nine languages); nothing is tuned on it.
- LoCoMo (`--locomo`): every turn inserted as a learning of its conversation's user (as bench/locomo_recall.py
  --path store does); false inclusion is the share of each conversation's questions, asked of the *next*
  conversation's user, that get a non-empty block; recall@10 is asked of the right user.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import emit_json, print_table, progress
from learnloop.config import Settings
from learnloop.embedders import resolve_embedder
from learnloop.factory import build_engine
from learnloop.loop import Loop
from learnloop.models import Limits
from learnloop.retrieval import RetrievalConfig
from learnloop.stores.sqlite import SQLiteStore
from locomo_recall import default_data, insert_turns, normalise_evidence, turns_of

HERE = Path(__file__).resolve().parent
LIMITS = Limits(top_k=10, max_items=10, max_chars=1_000_000)


async def no_answer(loop: Loop, rows: list[dict[str, Any]], quiet: bool) -> dict[str, Any]:
    shown = answered = questions = asked = 0
    for row in rows:
        user = row["user"]
        ids = []
        for text in row["learnings"]:
            saved = await loop.save(text, user=user)
            ids.append(None if saved.learning is None else saved.learning.id)
        for query in row["unanswerable"]:
            result = await loop.retrieve_context(user, query, limits=LIMITS, record=False)
            shown += bool(result.items)
            questions += 1
        for item in row["answerable"]:
            result = await loop.retrieve_context(user, item["query"], limits=LIMITS, record=False)
            wanted = {ids[i] for i in item["answers"] if ids[i] is not None}
            answered += bool(wanted & {i.learning.id for i in result.items})
            asked += 1
    progress(f"  no-answer set: {questions} unanswerable, {asked} answerable", quiet)
    return {
        "unanswerable": questions,
        "false_inclusion": round(shown / max(1, questions), 4),
        "answerable": asked,
        "answered": round(answered / max(1, asked), 4),
    }


async def locomo(loop: Loop, store: SQLiteStore, samples: list[dict[str, Any]], quiet: bool) -> dict[str, Any]:
    embedder = loop.engine.embedder
    for sample in samples:
        user, turns = sample["sample_id"], turns_of(sample)
        await insert_turns(store, embedder, loop.tenant, user, turns)
    recall = shown = questions = 0.0
    for index, sample in enumerate(samples):
        user, other = sample["sample_id"], samples[(index + 1) % len(samples)]["sample_id"]
        progress(f"  LoCoMo questions of {user}", quiet)
        for qa in sample["qa"]:
            evidence, _ = normalise_evidence(qa.get("evidence", []))
            if not evidence:
                continue
            questions += 1
            own = await loop.retrieve_context(user, qa["question"], limits=LIMITS, record=False)
            found = {i.learning.source.message for i in own.items}
            recall += len(set(evidence) & found) / len(set(evidence))
            foreign = await loop.retrieve_context(other, qa["question"], limits=LIMITS, record=False)
            shown += bool(foreign.items)
    return {
        "questions": int(questions),
        "recall@10": round(recall / max(1, questions), 4),
        "cross_user_false_inclusion": round(shown / max(1, questions), 4),
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    embedder = resolve_embedder(args.embedder, Settings(embedder_threads=args.threads))
    folder = Path(tempfile.mkdtemp(prefix="learnloop-relevance-"))
    store = SQLiteStore(folder / "r.db", embedding_model=embedder.model_id, dimension=embedder.dimension)
    retrieval = RetrievalConfig()
    if args.relevance is not None:
        similarity, coverage = (float(x) for x in args.relevance.split(","))
        retrieval = dataclasses.replace(retrieval, min_similarity=similarity, min_coverage=coverage)
    loop = Loop(build_engine(store, embedder, retrieval=retrieval), tenant="relevance")
    figures: dict[str, Any] = {"embedder": embedder.model_id, "no_answer": {}}
    for path in args.data:
        rows = [json.loads(line) for line in Path(path).read_text("utf-8").splitlines() if line.strip()]
        for row in rows:  # one corpus's users never see another's learnings
            row["user"] = f"{Path(path).stem}-{row['user']}"
        figures["no_answer"][Path(path).stem] = await no_answer(loop, rows, args.quiet)
    if args.locomo is not None:
        samples = json.loads(Path(args.locomo).read_text("utf-8"))
        figures["locomo"] = await locomo(loop, store, samples, args.quiet)
    await loop.aclose()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--data",
        type=Path,
        nargs="+",
        default=[HERE / "data" / "relevance" / name for name in ("no_answer.jsonl", "heldout.jsonl", "heldout2.jsonl")],
    )
    parser.add_argument("--locomo", type=Path, default=None, help="LoCoMo-format JSON (default: the dev split)")
    parser.add_argument("--no-locomo", action="store_true", help="only the no-answer set")
    parser.add_argument("--embedder", default=Settings().embedder)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--relevance", default=None, help="SIMILARITY,COVERAGE: the abstention thresholds to use")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.no_locomo:
        args.locomo = None
    elif args.locomo is None:
        args.locomo = default_data()
    args.quiet = args.json
    figures = asyncio.run(run(args))
    if args.json:
        emit_json(figures)
        return
    rows = [
        [f"no-answer: {name}", n["unanswerable"], n["false_inclusion"], f"answered {n['answered']}"]
        for name, n in figures["no_answer"].items()
    ]
    if "locomo" in figures:
        loc = figures["locomo"]
        rows.append(
            [
                "LoCoMo, another user",
                loc["questions"],
                loc["cross_user_false_inclusion"],
                f"recall@10 {loc['recall@10']}",
            ]
        )
    print_table(f"relevance ({figures['embedder']})", ["questions", "n", "false inclusion", "kept"], rows)


if __name__ == "__main__":
    main()
