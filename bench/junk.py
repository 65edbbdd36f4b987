"""How much junk the observer stores: run observe() (rules path) over every turn of a LoCoMo-format file.

    python bench/junk.py                     # the dev split in ../shared/data/locomo-dev/
    python bench/junk.py --data FILE --json  # any LoCoMo-format file

Each conversation is one user; each turn is observed as the user's message, with the next turn as the
reply, after retrieving context for it exactly as an agent would (so recalled text is in play). Reports:

- `stored`: learnings stored (created or new versions; `live_at_end` counts those not deprecated later by
  negative feedback or supersession),
- `near_duplicate_fraction`: share of stored learnings with a near-duplicate among the same user's other
  live learnings (cosine ≥ 0.92 with the same numbers, or SimHash distance ≤ 6),
- `reextracted`: stored learnings that restate a text retrieved for their own turn (must be 0),
- `deprecated_by_feedback`: learnings the next turn's feedback deprecated, by feedback type (the next turn of
  a conversation is mostly chat: "no way!" must deprecate nothing),
- `turns`, plus observe() latency per turn (p50/p95) and refusals by the write gate.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import emit_json, print_table, progress, summary_ms
from learnloop.capture.artifacts import is_recalled
from learnloop.capture.quantities import quantities
from learnloop.config import Settings
from learnloop.embedders import resolve_embedder
from learnloop.factory import build_engine
from learnloop.loop import Loop
from learnloop.simhash import hamming
from learnloop.stores.sqlite import SQLiteStore
from locomo_recall import default_data, turns_of

TENANT = "junk"


async def run(args: argparse.Namespace) -> dict[str, object]:
    samples = json.loads(Path(args.data).read_text("utf-8"))
    embedder = resolve_embedder(args.embedder, Settings(embedder_threads=args.threads))
    folder = Path(tempfile.mkdtemp(prefix="learnloop-junk-"))
    store = SQLiteStore(folder / "junk.db", embedding_model=embedder.model_id, dimension=embedder.dimension)
    loop = Loop(build_engine(store, embedder), tenant=TENANT)
    await loop.set_vocabulary({"fact": "Facts about the user's life", "preference": "What the user likes or dislikes"})
    turns = reextracted = 0
    timings: list[float] = []
    actions: Counter[str] = Counter()
    deprecated_by: Counter[str] = Counter()
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for sample in samples:
        user = sample["sample_id"]
        conversation = turns_of(sample)
        progress(f"observing {len(conversation)} turns of {user}", args.quiet)
        for index, (dia_id, text) in enumerate(conversation):
            reply = conversation[index + 1][1] if index + 1 < len(conversation) else ""
            session = dia_id.split(":")[0]
            recalled = await loop.retrieve_context(user, text, record=False)
            began = asyncio.get_running_loop().time()
            result = await loop.observe(
                text,
                reply,
                user=user,
                session=session,
                retrieved=recalled,
                meta={"message_id": dia_id},
                at=start + timedelta(minutes=turns),
            )
            timings.append(asyncio.get_running_loop().time() - began)
            turns += 1
            if result.feedback is not None and result.feedback.deprecated:
                deprecated_by[result.feedback.type] += len(result.feedback.deprecated)
            recalled_texts = [item.learning.text for item in recalled.items]
            for saved in result.saved:
                actions[saved.action.value] += 1
                if saved.action.value in ("created", "new_version") and saved.learning is not None:
                    reextracted += is_recalled(saved.learning.text, recalled_texts)
    stored_rows = [row async for row in store.export(loop.scope(None))]
    stored = [learning for learning, _ in stored_rows]
    live = sum(learning.status.value != "deprecated" for learning in stored)
    vectors = {learning.id: vector for learning, vector in stored_rows if vector is not None}
    duplicates = 0
    by_user: dict[str | None, list] = {}  # type: ignore[type-arg]
    for learning in stored:
        # A merged or replaced learning stays, deprecated, in its version chain: it is history, not a duplicate.
        if learning.status.value != "deprecated":
            by_user.setdefault(learning.user, []).append(learning)
    for group in by_user.values():
        for learning in group:
            for other in group:
                if other.id == learning.id:
                    continue
                close = hamming(learning.simhash64, other.simhash64) <= 6 or (
                    float(np.dot(vectors[learning.id], vectors[other.id])) >= 0.92
                    and _values(learning.text) == _values(other.text)
                )
                if close:
                    duplicates += 1
                    break
    await loop.aclose()
    latency = summary_ms(timings)
    refusals = {
        k.removeprefix("save.refused."): v for k, v in loop.engine.counters.items() if k.startswith("save.refused.")
    }
    return {
        "turns": turns,
        "stored": len(stored),
        "live_at_end": live,
        "near_duplicate_fraction": round(duplicates / len(stored), 4) if stored else 0.0,
        "reextracted": reextracted,
        "actions": dict(actions),
        "refused_by_rule": refusals,
        "deprecated_by_feedback": dict(deprecated_by),
        "observe_p50_ms": latency["p50"],
        "observe_p95_ms": latency["p95"],
        "examples": [learning.text for learning in stored[: args.examples]],
    }


def _values(text: str) -> list[tuple[str, float]]:
    return sorted((q.dimension, q.value) for q in quantities(text))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=None, help="LoCoMo-format JSON (default: the dev split)")
    parser.add_argument("--threads", type=int, default=None, help="embedder intra-op threads")
    parser.add_argument("--embedder", default=Settings().embedder, help="embedding model spec (provider:model)")
    parser.add_argument("--examples", type=int, default=10, help="stored learnings to show")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()
    args.data = args.data or default_data()
    if args.data is None or not Path(args.data).exists():
        parser.error("LoCoMo data not found; pass --data PATH/TO/locomo.json")
    args.quiet = args.json
    figures = asyncio.run(run(args))
    if args.json:
        emit_json(figures)
        return
    print_table(
        "observe() over LoCoMo turns (rules path, recall before every turn)",
        ["turns", "stored", "near-duplicate fraction", "re-extracted", "observe p50 ms", "observe p95 ms"],
        [
            [
                figures["turns"],
                figures["stored"],
                figures["near_duplicate_fraction"],
                figures["reextracted"],
                figures["observe_p50_ms"],
                figures["observe_p95_ms"],
            ]
        ],
    )
    print(f"\n  live at the end: {figures['live_at_end']}; write outcomes: {figures['actions']}")
    print(f"  refused by rule: {figures['refused_by_rule']}")
    print(f"  deprecated by feedback: {figures['deprecated_by_feedback']}")
    print("  examples of stored learnings:")
    for text in figures["examples"]:  # type: ignore[union-attr]
        print(f"    - {text}")


if __name__ == "__main__":
    main()
