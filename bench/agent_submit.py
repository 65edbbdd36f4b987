"""How long `submit_interaction` takes while the learning agent is busy: it must not depend on the agent.

    python bench/agent_submit.py            # table
    python bench/agent_submit.py --json     # one JSON object

A loop on a temporary SQLite file queues interaction packages for several sessions. The learning agent's
model is the scripted OpenAI-compatible server from the test suite, answering every call after
`--agent-delay` seconds (a tool call that writes an experience file, then a final reply), so the session
workers are always mid-package, writing to the same store, while packages keep arriving.

Scenarios: `no workers` (this process only queues: the floor), `agent busy` (workers running). Each submit is
timed from the call to the returned receipt (the package is durable then).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the scripted model server of the test suite

from tests.agent.support import LearningScript, build_loop, calls
from tests.support.scripted_openai import Reply, ScriptedOpenAI

from common import emit_json, print_table, progress, summary_ms


async def measure(
    server: ScriptedOpenAI, db: Path, *, workers: bool, sessions: int, submits: int, gap: float
) -> dict[str, object]:
    loop = build_loop(db, server.settings(), run_workers=workers, poll_seconds=0.5)
    names = [f"bench-{workers}-{n}" for n in range(sessions)]
    samples: list[float] = []
    try:
        for name in names:
            if workers:
                await loop.agent.open_session(name, user="bench")
        for n in range(20):  # warm-up: connection, statements, the first worker claims
            await loop.submit_interaction(names[n % sessions], f"warm-up {n}", "ok", user="bench")
        for n in range(submits):
            start = time.perf_counter()
            await loop.submit_interaction(
                names[n % sessions],
                f"Question {n}: where is the schedule for level {n % 7}?",
                "It is on page M-101.",
                user="bench",
                items_retrieved=[{"id": f"ptr-{n % 13}", "title": "Schedule"}],
                tool_calls=[{"name": "search_knowledge", "arguments": {"query": "schedule"}, "ok": True}],
            )
            samples.append(time.perf_counter() - start)
            await asyncio.sleep(gap)  # the main agent does other work between turns
        counts = await loop.agent.queue()
    finally:
        # Workers first, then the server: its held-back replies are dropped instead of written to closed sockets.
        await loop.agent.stop()
        server.stop()
        await loop.aclose()
    return {**summary_ms(samples), "processed": counts.done, "queued": counts.pending + counts.claimed}


async def run(args: argparse.Namespace) -> dict[str, object]:
    reply = Reply.text("Nothing else to learn.").after(args.agent_delay)
    write = calls(("write_file", {"path": "notes.md", "content": "# Notes\n- seen\n"})).after(args.agent_delay)
    results: dict[str, object] = {"agent_delay_s": args.agent_delay, "sessions": args.sessions}
    with tempfile.TemporaryDirectory() as folder:
        for label, workers in (("no workers", False), ("agent busy", True)):
            progress(f"{label}: {args.submits} submits", args.json)
            server = ScriptedOpenAI().start()
            server.chat.respond(LearningScript([write, reply]))
            results[label] = await measure(
                server,
                Path(folder) / f"{label.replace(' ', '_')}.db",
                workers=workers,
                sessions=args.sessions,
                submits=args.submits,
                gap=args.gap,
            )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--submits", type=int, default=500)
    parser.add_argument("--sessions", type=int, default=4)
    parser.add_argument("--agent-delay", type=float, default=0.2, help="seconds the model takes per call")
    parser.add_argument("--gap", type=float, default=0.002, help="seconds between submits")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()
    result = asyncio.run(run(args))
    if args.json:
        emit_json(result)
        return
    rows = []
    for label in ("no workers", "agent busy"):
        figures = result[label]
        assert isinstance(figures, dict)
        rows.append([label, figures["n"], figures["p50"], figures["p95"], figures["processed"], figures["queued"]])
    print_table(
        f"submit_interaction latency (ms), {args.sessions} sessions, model answers after {args.agent_delay} s",
        ["scenario", "n", "p50", "p95", "packages done", "still queued"],
        rows,
    )


if __name__ == "__main__":
    main()
