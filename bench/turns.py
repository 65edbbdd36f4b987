"""What learnloop learns from whole turns: confirmed procedures and snippets from the answer, measured outcomes,
setup statements and corrections — and what it must not keep (unconfirmed or retracted answers, chit-chat,
dangerous snippets, the same thing twice).

    python bench/turns.py                       # bench/data/turns/dev.jsonl and heldout.jsonl
    python bench/turns.py --data FILE --json    # any file of the same format

Each line of a corpus is one conversation with one fresh user: `turns` (the user's message, the assistant's answer
to it, optional `meta`) go through `loop.observe()` in order, as an agent calls it after each turn. `expect` lists
what should be live at the end, each with two `keywords` any faithful learning keeps. A live learning matching an
expected item (all its keywords, case-insensitive) is a hit; the first per item counts, a second is a duplicate.

- `recall[kind]`: expected items of each kind with a live learning; `procedure+snippet` is the issue's line;
- `junk`: live learnings that match nothing expected (chit-chat, unconfirmed answers, duplicates), as a share of
  all live learnings;
- `by_case_kind`: the same per kind of conversation, and the cases that went wrong with `--misses`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import learnloop
from common import emit_json, print_table
from learnloop.models import Status

DATA = Path(__file__).resolve().parent / "data" / "turns"
DEFAULT = [DATA / "dev.jsonl", DATA / "heldout.jsonl"]
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _matches(text: str, keywords: list[str]) -> bool:
    low = text.casefold()
    return all(k.casefold() in low for k in keywords)


def _assignment(expect: list[dict[str, Any]], live: list[str]) -> dict[int, int]:
    """The most expected items matched, each by its own live learning (live index → expected index)."""
    owner: dict[int, int] = {}

    def place(item: int, seen: set[int]) -> bool:
        for i, text in enumerate(live):
            if i in seen or not _matches(text, expect[item]["keywords"]):
                continue
            seen.add(i)
            if i not in owner or place(owner[i], seen):
                owner[i] = item
                return True
        return False

    for item in range(len(expect)):
        place(item, set())
    return owner


async def _case(loop: learnloop.Loop, case: dict[str, Any], index: int) -> dict[str, Any]:
    user = f"u{index}"
    at = START + timedelta(days=index)
    for number, turn in enumerate(case["turns"]):
        await loop.observe(
            turn.get("user", ""),
            turn.get("assistant", ""),
            user=user,
            session=case.get("session", "s1"),
            meta=turn.get("meta") or None,
            at=at + timedelta(minutes=number),
        )
    page = await loop.list(user=user, limit=200)
    live = [learning.text for learning in page.items if learning.status is not Status.DEPRECATED]
    owner = _assignment(case["expect"], live)
    hits = [i in owner.values() for i in range(len(case["expect"]))]
    junk = [text for i, text in enumerate(live) if i not in owner]
    return {"hits": hits, "junk": junk, "live": live}


async def run_corpus(path: Path, embedder: Any) -> dict[str, Any]:
    cases = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    expected: Counter[str] = Counter()
    found: Counter[str] = Counter()
    junk_by_kind: Counter[str] = Counter()
    live_total = junk_total = 0
    misses: list[dict[str, Any]] = []
    per_kind: dict[str, Counter[str]] = defaultdict(Counter)
    with tempfile.TemporaryDirectory() as folder:
        async with learnloop.open(str(Path(folder) / "turns.db"), embedder=embedder) as loop:
            for index, case in enumerate(cases):
                outcome = await _case(loop, case, index)
                kind = case.get("kind", "?")
                per_kind[kind]["cases"] += 1
                for item, hit in zip(case["expect"], outcome["hits"], strict=True):
                    expected[item["kind"]] += 1
                    found[item["kind"]] += hit
                    per_kind[kind]["expected"] += 1
                    per_kind[kind]["found"] += hit
                live_total += len(outcome["live"])
                junk_total += len(outcome["junk"])
                junk_by_kind[kind] += len(outcome["junk"])
                per_kind[kind]["junk"] += len(outcome["junk"])
                if outcome["junk"] or not all(outcome["hits"]):
                    misses.append(
                        {"id": case.get("id"), "kind": kind, "hits": outcome["hits"], "live": outcome["live"]}
                    )
    recall = {kind: round(found[kind] / expected[kind], 3) for kind in sorted(expected)}
    answers = expected["procedure"] + expected["snippet"]
    recall["procedure+snippet"] = round((found["procedure"] + found["snippet"]) / answers, 3) if answers else None
    return {
        "cases": len(cases),
        "turns": sum(len(c["turns"]) for c in cases),
        "recall": recall,
        "expected": dict(expected),
        "live": live_total,
        "junk": junk_total,
        "junk_rate": round(junk_total / live_total, 3) if live_total else 0.0,
        "by_case_kind": {k: dict(v) for k, v in sorted(per_kind.items())},
        "misses": misses,
    }


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    embedder = learnloop.resolve_embedder(args.embedder) if args.embedder else None
    figures: dict[str, Any] = {}
    for path in [Path(p) for p in args.data]:
        figures[path.stem] = await run_corpus(path, embedder)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", nargs="+", default=[str(p) for p in DEFAULT], help="corpora (JSON lines)")
    parser.add_argument("--embedder", default=None, help="embedding model spec (default: the bundled MiniLM)")
    parser.add_argument("--json", action="store_true", help="print one JSON object of the figures")
    parser.add_argument("--misses", action="store_true", help="print the cases that went wrong")
    args = parser.parse_args()
    figures = asyncio.run(main_async(args))
    if args.json:
        emit_json({name: {k: v for k, v in f.items() if k != "misses"} for name, f in figures.items()})
        return
    kinds = sorted({k for f in figures.values() for k in f["recall"]})
    print_table(
        "Whole-turn learning through observe(): recall of expected learnings by kind, junk among live ones",
        ["corpus", "cases", "turns", *kinds, "live", "junk", "junk rate"],
        [
            [
                name,
                f["cases"],
                f["turns"],
                *[f["recall"].get(k, "-") for k in kinds],
                f["live"],
                f["junk"],
                f["junk_rate"],
            ]
            for name, f in figures.items()
        ],
    )
    if args.misses:
        for name, f in figures.items():
            print(f"\n{name}: cases that went wrong")
            for miss in f["misses"]:
                print(json.dumps(miss, ensure_ascii=False))


if __name__ == "__main__":
    main()
