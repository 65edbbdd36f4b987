"""Records tool signals as fast as it can and prints `ack <id>` once each is durable.

Run by test_durability.py, which kills it with SIGKILL mid-stream: `python -m tests.tools.signal_writer DB`.
"""

from __future__ import annotations

import asyncio
import sys

import learnloop
from learnloop.tools import Strength


async def main(path: str) -> None:
    async with learnloop.open(path) as loop:
        tools = loop.tools
        tools.configure(insight_every=0)
        await tools.register(
            [
                {"name": "get_forecast", "description": "Weather forecast for a city"},
                {"name": "refund_order", "description": "Refund a customer's order"},
            ]
        )
        n = 0
        while True:
            session = f"s{n}"
            await tools.set_context(session, f"will it rain in city number {n % 50}?", user=f"u{n % 3}", k=2)
            receipt = await tools.record_call(session, "get_forecast", {"city": str(n)}, latency_ms=1.0)
            assert receipt.strength is Strength.STRONG
            print(f"ack {receipt.id}", flush=True)
            n += 1


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
