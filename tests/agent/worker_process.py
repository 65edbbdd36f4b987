"""A learning-agent worker in its own process, for the crash test.

    python -m tests.agent.worker_process --db agent.db --base-url http://127.0.0.1:PORT/v1 [--until-idle]

Serves every open session of the SQLite file with the scripted model until it is killed, or, with
`--until-idle`, until no package is left unfinished.
"""

from __future__ import annotations

import argparse
import asyncio

from learnloop.config import Settings
from tests.agent.support import build_loop


async def serve(db: str, base_url: str, until_idle: bool) -> None:
    loop = build_loop(db, Settings(openai_base_url=base_url, openai_api_key="sk-scripted-test"))
    try:
        started = await loop.agent.start()
        print(f"workers {started}", flush=True)
        if until_idle:
            counts = await loop.agent.drain(within=90)
            print(f"idle {counts.model_dump_json()}", flush=True)
        else:
            await asyncio.Event().wait()
    finally:
        await loop.aclose()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", required=True)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--until-idle", action="store_true")
    args = parser.parse_args()
    asyncio.run(serve(args.db, args.base_url, args.until_idle))


if __name__ == "__main__":
    main()
