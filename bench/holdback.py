"""Does memory help? The holdback report on scripted populations run through `loop.turn()`, with the real
embedder and a real SQLite file per run.

    python bench/holdback.py                      # 60 users, 5 sessions, 3 population seeds
    python bench/holdback.py --users 24 --sessions 4 --seeds 10 --json

Three scenarios per population seed (`learnloop.holdback.simulation`):

- `memory helps`: users ask about their own figure session after session; a correction is learned and helps.
- `A/A`: the same population with both arms given memory (mode `aa`): the intervals should contain zero.
- `memory cannot help`: every session asks about a figure never asked before; the arms should not differ.

For each scenario and outcome the table gives the difference memory − holdback with its 95% interval (bootstrap
over users, seed 0) for the first population seed; the summary counts, over every seed, the intervals that
exclude zero: for `memory helps` that is the power to see the effect, for the other two the false-positive rate
(expected near 5% of the intervals).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import emit_json, print_table, progress
from learnloop.config import Settings
from learnloop.embedders import resolve_embedder
from learnloop.embedders.base import Embedder
from learnloop.factory import build_engine
from learnloop.holdback.simulation import Population, simulate
from learnloop.loop import Loop
from learnloop.models import utcnow
from learnloop.stores.sqlite import SQLiteStore
from learnloop.turns import TurnConfig

SCENARIOS = {"memory helps": ("holdback", True), "A/A": ("aa", True), "memory cannot help": ("holdback", False)}


class Clock:
    def __init__(self) -> None:
        self.now = utcnow()

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> None:
        self.now += delta


class _Kept:
    """The embedder shared by every run, left open when a run's loop closes."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.model_id, self.dimension = inner, inner.model_id, inner.dimension

    async def embed(self, texts: Any, *, purpose: str = "document") -> Any:
        return await self.inner.embed(texts, purpose=purpose)

    async def aclose(self) -> None:
        return None


async def run_scenario(
    embedder: Embedder, folder: Path, mode: str, helps: bool, args: argparse.Namespace, seed: int
) -> dict[str, Any]:
    clock = Clock()
    store = SQLiteStore(
        folder / f"{mode}-{helps}-{seed}.db", embedding_model=embedder.model_id, dimension=embedder.dimension
    )
    loop = Loop(build_engine(store, _Kept(embedder), clock=clock))  # type: ignore[arg-type]
    try:
        loop.agent.configure(run_workers=False)
        loop.turns.configure(TurnConfig(agent=False))
        await loop.holdback.configure(share=args.share, mode=mode)
        population = Population(users=args.users, sessions=args.sessions, memory_helps=helps, seed=seed)
        started = time.perf_counter()
        run = await simulate(loop, population, advance=clock.advance)
        seconds = time.perf_counter() - started
        report = await loop.holdback.report(resamples=args.resamples)
    finally:
        await loop.aclose()
    [experiment] = report.experiments
    return {
        "seed": seed,
        "turns": run.turns,
        "ms_per_turn": round(seconds * 1000 / max(1, run.turns), 2),
        "users": experiment.users,
        "verdict": report.verdict,
        "outcomes": {
            o.outcome: {
                "memory": o.memory,
                "holdback": o.holdback,
                "difference": o.difference,
                "low": o.low,
                "high": o.high,
                "effect": o.effect,
            }
            for o in experiment.outcomes
        },
    }


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    intervals = [o for run in runs for o in run["outcomes"].values() if o["low"] is not None and o["low"] != o["high"]]
    excluding = [o for o in intervals if o["effect"] in ("better", "worse")]
    corrections = [run["outcomes"]["correction"]["effect"] == "better" for run in runs]
    return {
        "runs": len(runs),
        "intervals": len(intervals),
        "excluding_zero": len(excluding),
        "excluding_share": round(len(excluding) / len(intervals), 3) if intervals else None,
        "corrections_better_share": round(sum(corrections) / len(corrections), 3) if corrections else None,
        "ms_per_turn": round(sum(r["ms_per_turn"] for r in runs) / len(runs), 2),
    }


async def main(args: argparse.Namespace) -> dict[str, Any]:
    settings = Settings()
    embedder = resolve_embedder(args.embedder or settings.embedder, settings)
    figures: dict[str, Any] = {
        "users": args.users,
        "sessions": args.sessions,
        "share": args.share,
        "seeds": args.seeds,
        "scenarios": {},
    }
    try:
        with tempfile.TemporaryDirectory(prefix="learnloop-holdback-") as tmp:
            for name, (mode, helps) in SCENARIOS.items():
                runs = []
                for seed in range(args.seeds):
                    progress(f"  {name}, population seed {seed}", args.quiet)
                    runs.append(await run_scenario(embedder, Path(tmp), mode, helps, args, seed))
                figures["scenarios"][name] = {"summary": summary(runs), "runs": runs}
    finally:
        await embedder.aclose()
    return figures


def show(figures: dict[str, Any]) -> None:
    for name, scenario in figures["scenarios"].items():
        first = scenario["runs"][0]
        rows = []
        for outcome, o in first["outcomes"].items():
            interval = "–" if o["low"] is None else f"{o['low']:+.3f} to {o['high']:+.3f}"
            diff = "–" if o["difference"] is None else f"{o['difference']:+.3f}"
            rows.append(
                [
                    outcome,
                    o["memory"] if o["memory"] is not None else "–",
                    o["holdback"] if o["holdback"] is not None else "–",
                    diff,
                    interval,
                    o["effect"],
                ]
            )
        users = first["users"]
        arms = f"{users['memory']} users with memory, {users['holdback']} held back"
        print_table(
            f"{name} (seed 0: {arms}, {first['turns']} turns)",
            ["outcome", "memory", "holdback", "difference", "95% interval", "effect"],
            rows,
        )
        print(f"  verdict: {first['verdict']}")
    size = f"{figures['users']} users, {figures['sessions']} sessions, share {figures['share']}"
    print_table(
        f"Over {figures['seeds']} population seeds ({size})",
        ["scenario", "intervals", "excluding zero", "share", "corrections better", "ms/turn"],
        [
            [
                name,
                s["intervals"],
                s["excluding_zero"],
                s["excluding_share"],
                s["corrections_better_share"],
                s["ms_per_turn"],
            ]
            for name, s in ((n, sc["summary"]) for n, sc in figures["scenarios"].items())
        ],
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=60)
    parser.add_argument("--sessions", type=int, default=5)
    parser.add_argument("--share", type=float, default=0.5, help="share of users held back")
    parser.add_argument("--seeds", type=int, default=3, help="population seeds per scenario")
    parser.add_argument("--resamples", type=int, default=2_000)
    parser.add_argument("--embedder", help="embedder spec (default: the settings' default)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    args.quiet = args.quiet or args.json
    result = asyncio.run(main(args))
    if args.json:
        emit_json(result)
    else:
        show(result)
