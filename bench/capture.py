"""Latency of the capture paths: the save_learning tool handler and observe() (rules path).

    python bench/capture.py            # table
    python bench/capture.py --json     # one JSON object

- tool save, new text: parse, validate, gate, SimHash check, embed, nearest neighbours, insert + event;
- tool save, replayed text: the same call again (SimHash finds it; no embedding);
- observe, teaching turn: a correction or measurement that becomes a candidate learning;
- observe, plain turn: chit-chat and questions that teach nothing (the common case).
The in-run baseline is the local embedding model alone on the same texts, the floor of any write that
must embed.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import emit_json, print_table, summary_ms
from corpus import EQUIPMENT, INGREDIENTS, STYLES, learnings
from learnloop.config import Settings
from learnloop.embedders import resolve_embedder
from learnloop.factory import build_engine
from learnloop.loop import Loop
from learnloop.models import Vocabulary
from learnloop.stores.sqlite import SQLiteStore

VOCABULARY = Vocabulary.from_mapping(
    {
        "equipment": "Boil-off rates, dead space, mash tun efficiency",
        "technique": "Preferred mash temps, sparge method, water adjustments",
        "recipe": "Recipe feedback, style preferences, what worked/didn't",
        "ingredient": "Yeast performance, hop character, grain behavior",
        "correction": "When the assistant was wrong about something",
    }
)
PLAIN = [
    "What should I brew next weekend?",
    "Hi! How are you today?",
    "Can you explain what a protein rest does?",
    "ok",
    "Which hops go well with a {style}?",
    "Tell me a fun fact about yeast.",
    "How long does a {style} usually take to ferment?",
]


def teaching_turns(count: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    turns = []
    for _ in range(count):
        kettle, yeast, style = rng.choice(EQUIPMENT), rng.choice(INGREDIENTS), rng.choice(STYLES)
        rate, measured = rng.randint(20, 45) / 10, rng.randint(70, 88)
        turns.append(
            rng.choice(
                [
                    (f"No, it's {rate} L/hr on my {kettle}.", "Assuming a boil-off rate of 4 L/hr, start with 30 L."),
                    (
                        f"The {yeast} attenuated way more than 75%, I got {measured}%",
                        f"{yeast} should reach about 75%.",
                    ),
                    (f"I prefer mashing at {rng.randint(62, 69)} C for a {style}", "Noted."),
                    (f"We use a {kettle} with {rate} L of dead space", "Thanks for the details."),
                ]
            )
        )
    return turns


async def run(args: argparse.Namespace) -> dict[str, object]:
    embedder = resolve_embedder(args.embedder, Settings(embedder_threads=args.threads))
    folder = Path(tempfile.mkdtemp(prefix="learnloop-capture-"))
    store = SQLiteStore(folder / "capture.db", embedding_model=embedder.model_id, dimension=embedder.dimension)
    loop = Loop(build_engine(store, embedder, default_vocabulary=VOCABULARY))
    texts = list(dict.fromkeys(learnings(args.count * 2, seed=11)))[: args.count]
    await loop.handle_tool_call({"learning": "warm up the model", "category": "technique"}, user="warm")

    baseline = []
    for text in texts:
        started = time.perf_counter()
        await embedder.embed([text + " (baseline)"])
        baseline.append(time.perf_counter() - started)
    new, replay = [], []
    for text in texts:
        started = time.perf_counter()
        await loop.handle_tool_call({"learning": text, "category": "recipe"}, user="u1", session="bench")
        new.append(time.perf_counter() - started)
    for text in texts:
        started = time.perf_counter()
        await loop.handle_tool_call({"learning": text, "category": "recipe"}, user="u1", session="bench")
        replay.append(time.perf_counter() - started)
    teaching, plain = [], []
    rng = random.Random(5)
    for n, (user_message, reply) in enumerate(teaching_turns(args.count, seed=7)):
        started = time.perf_counter()
        await loop.observe(user_message, reply, user=f"obs{n % 20}", session=f"t{n % 20}")
        teaching.append(time.perf_counter() - started)
    for n in range(args.count):
        message = rng.choice(PLAIN).format(style=rng.choice(STYLES)) + f" ({n})"
        started = time.perf_counter()
        await loop.observe(message, "Sure — here is an answer.", user=f"plain{n % 20}", session=f"p{n % 20}")
        plain.append(time.perf_counter() - started)
    await loop.aclose()
    figures = {
        name: summary_ms(samples)
        for name, samples in {
            "embed_only": baseline,
            "tool_save_new": new,
            "tool_save_replay": replay,
            "observe_teaching": teaching,
            "observe_plain": plain,
        }.items()
    }
    return {"figures_ms": figures, "count": args.count, "embedder_threads": getattr(embedder, "_threads", None)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=200, help="calls per measured path")
    parser.add_argument("--threads", type=int, default=None, help="embedder intra-op threads")
    parser.add_argument("--embedder", default=Settings().embedder, help="embedding model spec (provider:model)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()
    result = asyncio.run(run(args))
    if args.json:
        emit_json(result)
        return
    rows = [[name, f["p50"], f["p95"], f["n"]] for name, f in result["figures_ms"].items()]  # type: ignore[union-attr]
    print_table(
        f"capture latency, ms (embedder threads {result['embedder_threads']})", ["path", "p50", "p95", "n"], rows
    )


if __name__ == "__main__":
    main()
