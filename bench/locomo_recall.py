"""Recall of evidence turns on LoCoMo: hybrid retrieval against vector-only and BM25-only.

    python bench/locomo_recall.py                    # the dev split in ../shared/data/locomo-dev/
    python bench/locomo_recall.py --data FILE --json # any file in the LoCoMo format
    python bench/locomo_recall.py --path save        # every turn through loop.save(), as a user would
    python bench/locomo_recall.py --backend postgres # on PostgreSQL (a throwaway cluster, or --db URL)

`--path store` (the default) inserts the turns straight into the store: the retrieval ceiling. `--path save`
sends each turn through the governed write (gate, dedupe), said at its session's date (`at=`, so "yesterday"
is anchored), and reports what happened to the turns (created,
merged, skipped, new version, refused, linked for review); a turn merged into another still counts as found
when that learning is retrieved (it names every turn it came from among its sources).

Every dialogue turn is stored as a learning of its conversation's user ("Speaker: text", with the image
caption when the turn shares a photo). For each question with evidence, recall@k is the fraction of its
evidence turns among the top k retrieved; the table reports the mean over questions, overall and by
LoCoMo category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial).

Evidence ids are normalised: "D8:6; D9:17" is two ids, "D:11:26" is D11:26, "D30:05" is D30:5; an id
with no session and turn number (a bare "D") is dropped, and a question left with no evidence is skipped.
The data is evaluation material (CC BY-NC 4.0); it is read in place, never copied.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import re
import sys
import tempfile
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import emit_json, print_table, progress
from learnloop.capture.timing import find_expression
from learnloop.config import Settings
from learnloop.embedders import resolve_embedder
from learnloop.embedders.base import Embedder
from learnloop.factory import build_engine
from learnloop.loop import Loop
from learnloop.models import EventAction, Filters, Learning, Limits, Scope, Source
from learnloop.retrieval import RetrievalConfig
from learnloop.simhash import simhash64_hex
from learnloop.stores import open_store
from learnloop.stores.base import EventDraft, Insert, NewLearning, SearchRequest, Store
from learnloop.terms import query_terms

TENANT = "locomo"
_EVIDENCE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")


def default_data() -> Path | None:
    here = Path(__file__).resolve().parent.parent
    for base in (Path.cwd(), here):
        for up in (base, *base.parents):
            candidate = up / "shared" / "data" / "locomo-dev" / "locomo-dev.json"
            if candidate.exists():
                return candidate
    return None


def normalise_evidence(raw: list[str]) -> tuple[list[str], int]:
    ids: list[str] = []
    dropped = 0
    for entry in raw:
        found = [f"D{int(s)}:{int(t)}" for s, t in _EVIDENCE.findall(entry)]
        if not found:
            dropped += 1
        ids += found
    return list(dict.fromkeys(ids)), dropped


def session_dates(sample: dict) -> dict[int, datetime]:
    """When each session took place ("1:56 pm on 8 May, 2023"), as the time its turns were said."""
    found = {}
    for key, value in sample["conversation"].items():
        match = re.fullmatch(r"session_(\d+)_date_time", key)
        if match and isinstance(value, str):
            try:
                found[int(match.group(1))] = datetime.strptime(value, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
            except ValueError:
                continue
    return found


def dated_turns_of(sample: dict) -> list[tuple[str, str, datetime | None]]:
    """`turns_of`, each with when its session took place."""
    dates = session_dates(sample)
    return [(dia_id, text, dates.get(int(dia_id[1:].split(":")[0]))) for dia_id, text in turns_of(sample)]


def turns_of(sample: dict) -> list[tuple[str, str]]:
    conversation = sample["conversation"]
    sessions = sorted((int(k.split("_")[1]), v) for k, v in conversation.items() if re.fullmatch(r"session_\d+", k))
    out = []
    for _, turns in sessions:
        for turn in turns:
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            out.append((turn["dia_id"], text))
    return out


async def messages(store: Store, scope: Scope, candidates: list) -> list[str | None]:  # type: ignore[type-arg]
    """The dialogue ids of ranked candidates, in order."""
    learnings = {learning.id: learning for learning in await store.get_many(scope, [c.id for c in candidates])}
    return [learnings[c.id].source.message for c in candidates if c.id in learnings]


_TURNS_BEHIND: dict[int, list[str]] = {}


async def turns_behind(loop: Loop, user: str, learning: Learning) -> list[str]:
    """The dialogue ids a retrieved learning stands for: its own, and those of every turn merged into it."""
    if learning.id not in _TURNS_BEHIND:
        sources = await loop.provenance(learning.id, user=user) if learning.supersedes else []
        ids = [learning.source.message, *(p.source.message for p in sources)]
        _TURNS_BEHIND[learning.id] = list(dict.fromkeys(i for i in ids if i))
    return _TURNS_BEHIND[learning.id]


async def insert_turns(store: Store, embedder: Embedder, tenant: str, user: str, turns: list[tuple[str, str]]) -> None:
    """The store path: a conversation's turns inserted straight into the store, as an import would (no gate, no
    dedupe) — the retrieval ceiling the governed write is measured against."""
    vectors = await embedder.embed([text for _, text in turns])
    ops = [
        Insert(
            NewLearning(
                tenant=tenant,
                user=user,
                text=text,
                vector=vector,
                embedding_model=embedder.model_id,
                simhash64=simhash64_hex(text),
                namespace="learning",
                source=Source(message=dia_id),
            ),
            EventDraft(actor="import", action=EventAction.IMPORTED),
        )
        for (dia_id, text), vector in zip(turns, vectors, strict=True)
    ]
    await store.apply(Scope(tenant=tenant, user=user), ops)


async def run(args: argparse.Namespace) -> dict[str, object]:
    samples = json.loads(Path(args.data).read_text("utf-8"))
    embedder = resolve_embedder(args.embedder, Settings(embedder_threads=args.threads))
    db = args.db
    if db is None and args.backend == "postgres":
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
        from tests.support.postgres import database_url  # a throwaway cluster, as `make test` starts

        db = database_url(Path(tempfile.mkdtemp(prefix="learnloop-locomo-")))
    elif db is None:
        db = str(Path(tempfile.mkdtemp(prefix="learnloop-locomo-")) / "locomo.db")
    store = open_store(db, Settings(), embedding_model=embedder.model_id, dimension=embedder.dimension)
    retrieval = RetrievalConfig(candidate_pool=args.pool) if args.pool else RetrievalConfig()
    if args.time_boost is not None:
        retrieval = dataclasses.replace(retrieval, time_boost=args.time_boost)
    if args.relevance is not None:
        similarity, coverage = (float(x) for x in args.relevance.split(","))
        retrieval = dataclasses.replace(retrieval, min_similarity=similarity, min_coverage=coverage)
    loop = Loop(build_engine(store, embedder, retrieval=retrieval), tenant=TENANT)
    turn_count = 0
    outcomes: Counter[str] = Counter()
    for sample in samples:
        user = sample["sample_id"]
        turns = turns_of(sample)
        turn_count += len(turns)
        progress(f"storing {len(turns)} turns of {user}", args.quiet)
        if args.path == "save":
            for dia_id, text, said in dated_turns_of(sample):
                saved = await loop.save(text, user=user, source=Source(message=dia_id), at=said)
                outcomes[saved.action.value] += 1
                outcomes["linked"] += saved.link is not None
            continue
        await insert_turns(store, embedder, TENANT, user, turns)

    ks = (5, 10)
    modes = ("hybrid", "vector", "bm25")
    sums = {m: {k: 0.0 for k in ks} for m in modes}
    by_category: dict[int, dict[str, dict[int, float]]] = defaultdict(lambda: {m: {k: 0.0 for k in ks} for m in modes})
    per_category: dict[int, int] = defaultdict(int)
    questions = skipped = dropped_ids = timed_questions = 0
    timed_sums = {m: {k: 0.0 for k in ks} for m in modes}
    limits = Limits(top_k=max(ks), max_items=max(ks), max_chars=1_000_000)
    for sample in samples:
        user = sample["sample_id"]
        scope = Scope(tenant=TENANT, user=user)
        # Questions are asked after the conversation: relative ones ("last year") count back from its last day.
        asked = max(session_dates(sample).values(), default=None)
        for qa in sample["qa"]:
            evidence, dropped = normalise_evidence(qa.get("evidence", []))
            dropped_ids += dropped
            if not evidence:
                skipped += 1
                continue
            questions += 1
            category = int(qa.get("category", 0))
            per_category[category] += 1
            question = qa["question"]
            result = await loop.retrieve_context(user, question, limits=limits, record=False, at=asked)
            ranked = {"hybrid": [m for i in result.items for m in await turns_behind(loop, user, i.learning)]}
            vector = (await embedder.embed([question], purpose="query"))[0]
            only_vector = await store.search(
                scope, SearchRequest(vector=vector, terms=[], filters=Filters(), vector_k=max(ks), text_k=0)
            )
            ranked["vector"] = await messages(store, scope, sorted(only_vector, key=lambda c: c.vector_rank or 0))
            only_text = await store.search(
                scope, SearchRequest(vector=None, terms=query_terms(question), filters=Filters(), text_k=max(ks))
            )
            ranked["bm25"] = await messages(store, scope, sorted(only_text, key=lambda c: c.text_rank or 0))
            wanted = set(evidence)
            timed = find_expression(question) is not None
            timed_questions += timed
            for mode in modes:
                for k in ks:
                    recall = len(wanted & set(ranked[mode][:k])) / len(wanted)
                    sums[mode][k] += recall
                    by_category[category][mode][k] += recall
                    if timed:
                        timed_sums[mode][k] += recall
    await loop.aclose()
    figures: dict[str, object] = {
        mode: {f"recall@{k}": round(sums[mode][k] / max(questions, 1), 4) for k in ks} for mode in modes
    }
    figures["questions"] = questions
    # Questions with a time expression ("last year", "on 3 June, 2023"): where the time boost acts.
    figures["with_time_expression"] = {
        "questions": timed_questions,
        **{m: {f"recall@{k}": round(timed_sums[m][k] / max(timed_questions, 1), 4) for k in ks} for m in modes},
    }
    figures["turns"] = turn_count
    figures["path"] = args.path
    figures["backend"] = args.backend
    if args.path == "save":
        figures["saves"] = {
            k: outcomes[k] for k in ("created", "merged", "skipped", "new_version", "refused", "linked")
        }
        figures["merged_or_skipped_fraction"] = round((outcomes["merged"] + outcomes["skipped"]) / turn_count, 4)
        figures["linked_fraction"] = round(outcomes["linked"] / turn_count, 4)
    figures["skipped_questions"] = skipped
    figures["dropped_evidence_ids"] = dropped_ids
    figures["by_category"] = {
        str(c): {
            "questions": per_category[c],
            **{mode: {f"recall@{k}": round(v[k] / per_category[c], 4) for k in ks} for mode, v in modes_.items()},
        }
        for c, modes_ in sorted(by_category.items())
    }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=None, help="LoCoMo-format JSON (default: the dev split)")
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--db", help="an empty SQLite file or postgresql:// database (default: a temporary one)")
    parser.add_argument("--threads", type=int, default=None, help="embedder intra-op threads")
    parser.add_argument("--embedder", default=Settings().embedder, help="embedding model spec (provider:model)")
    parser.add_argument("--pool", type=int, default=None, help="candidates per retriever before fusion")
    parser.add_argument("--time-boost", type=float, default=None, help="RetrievalConfig.time_boost (default: its own)")
    parser.add_argument("--relevance", default=None, help="SIMILARITY,COVERAGE: the abstention thresholds to use")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument(
        "--path", choices=("store", "save"), default="store", help="insert turns into the store, or save() each"
    )
    args = parser.parse_args()
    args.data = args.data or default_data()
    if args.data is None or not Path(args.data).exists():
        parser.error("LoCoMo data not found; pass --data PATH/TO/locomo.json")
    args.quiet = args.json
    figures = asyncio.run(run(args))
    if args.json:
        emit_json(figures)
        return
    rows = [[m, figures[m]["recall@5"], figures[m]["recall@10"]] for m in ("hybrid", "vector", "bm25")]  # type: ignore[index]
    if args.path == "save":
        print_table(
            "what save() did with the turns",
            [*figures["saves"], "merged or skipped", "linked"],  # type: ignore[list-item]
            [[*figures["saves"].values(), figures["merged_or_skipped_fraction"], figures["linked_fraction"]]],  # type: ignore[union-attr]
        )
    print_table(
        f"LoCoMo evidence recall, {args.path} path ({figures['questions']} questions, {figures['turns']} turns; "
        f"{figures['skipped_questions']} questions without usable evidence skipped)",
        ["retrieval", "recall@5", "recall@10"],
        rows,
    )
    cat_rows = []
    for category, f in figures["by_category"].items():  # type: ignore[union-attr]
        cat_rows.append(
            [category, f["questions"], *(f[m][f"recall@{k}"] for m in ("hybrid", "vector", "bm25") for k in (5, 10))]
        )
    print_table(
        "by category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial)",
        ["category", "questions", "hybrid@5", "hybrid@10", "vector@5", "vector@10", "bm25@5", "bm25@10"],
        cat_rows,
    )


if __name__ == "__main__":
    main()
