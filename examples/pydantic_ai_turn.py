"""A Pydantic AI agent whose every run is a learnloop turn.

    pip install 'learnloop[pydantic-ai]'
    python examples/pydantic_ai_turn.py --db shop.db "revenue last month, in dollars?"

The model is any OpenAI-compatible chat completions endpoint: --base-url and --model, or $OPENAI_BASE_URL,
$OPENAI_API_KEY and $OPENAI_MODEL (the tests point it at a scripted server on loopback). `convert` fails on
its first call, as flaky tools do, asking the model to try again; the turn records that call as failed.
"""

from __future__ import annotations

import argparse
import asyncio
import os

from pydantic_ai import Agent, ModelRetry
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

import learnloop
from learnloop.adapters.pydantic_ai import run_turn

_calls = {"convert": 0}


def revenue(period: str) -> str:
    """The shop's revenue for a period such as 'last_month'."""
    return f"revenue {period}: 12400 EUR"


def convert(amount: float, currency: str) -> str:
    """Convert an amount in EUR to another currency."""
    _calls["convert"] += 1
    if _calls["convert"] == 1:
        raise ModelRetry("rate service unavailable, try again")
    return f"{amount * 1.08:.2f} {currency}"


async def main(args: argparse.Namespace) -> None:
    model = OpenAIChatModel(args.model, provider=OpenAIProvider(base_url=args.base_url, api_key=args.api_key))
    agent = Agent(
        model,
        instructions="You answer questions about the shop's numbers. Use the tools.",
        tools=[revenue, convert],
    )
    loop = learnloop.open(args.db)
    try:
        result = await run_turn(loop, agent, args.user, args.message, session=args.session)
        print(result.output)
        # A short-lived script runs the turn's learning now; a service leaves it to the background.
        await loop.turns.drain()
        [turn] = await loop.turns.list(user=args.user, session=args.session, limit=1)
        for call in turn.tool_calls:
            print(f"  {call['name']}: {'failed: ' + call['error'] if call['error'] else 'ok'}")
    finally:
        await loop.aclose()


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("message")
    parser.add_argument("--db", default=os.environ.get("LEARNLOOP_DB", "learnloop.db"))
    parser.add_argument("--user", default="alice")
    parser.add_argument("--session", default="example")
    parser.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL"))
    parser.add_argument("--api-key", default=os.environ.get("OPENAI_API_KEY", "sk-none"))
    parser.add_argument("--model", default=os.environ.get("OPENAI_MODEL", "gpt-4.1-mini"))
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse()))
