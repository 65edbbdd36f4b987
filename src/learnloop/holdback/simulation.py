"""A scripted population to check the holdback machinery end to end, through the public API (`loop.turn()`).

Each user has brewing figures of their own ("my batch size is 23 litres"). The scripted agent answers a question
about one right when the figure is in its context (and otherwise guesses); a wrong answer is corrected by the
user, which the observer learns from, then thanked. With `memory_helps` the user asks about the same figure
session after session, so remembering the correction helps; without it every session asks about a figure never
asked before, so memory cannot help. Everything is seeded per user: the same population behaves the same way
whichever arm a user lands in.

    await loop.holdback.configure(share=0.5)
    await simulate(loop, Population(users=20), advance=clock.advance_by)
    report = await loop.holdback.report()

`bench/holdback.py` runs the fuller version and prints the report.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..loop import Loop

__all__ = ["FIGURES", "Population", "SimulationRun", "simulate"]

FIGURES = (
    "batch size",
    "kettle volume",
    "mash tun volume",
    "fermenter volume",
    "sparge water volume",
    "strike water volume",
    "hot liquor tank volume",
    "bottling bucket volume",
    "starter volume",
    "top-up water volume",
)


@dataclass(frozen=True)
class Population:
    users: int = 24
    sessions: int = 4
    memory_helps: bool = True
    noise: float = 0.2  # the agent errs this often even when its context holds the figure
    guess: float = 0.3  # the agent is right this often without the figure (memory_helps=False: always guessing)
    seed: int = 7
    prefix: str = "sim"

    def __post_init__(self) -> None:
        if self.sessions > len(FIGURES):
            raise ValueError(f"at most {len(FIGURES)} sessions")


@dataclass
class SimulationRun:
    turns: int = 0
    corrections: int = 0
    right_with_memory: int = 0  # answers right because the figure was in the context


@dataclass(frozen=True)
class _Person:
    user: str
    rng: random.Random
    figures: list[str]
    values: dict[str, int]


async def simulate(loop: Loop, population: Population, *, advance: Callable[[timedelta], None]) -> SimulationRun:
    """Run the population's sessions (day by day, every user once a day); `advance` moves the loop's clock."""
    run = SimulationRun()
    people = []
    for index in range(population.users):
        rng = random.Random(f"{population.seed}:{index}")
        figures = rng.sample(FIGURES, len(FIGURES))
        values = {figure: rng.randrange(12, 60) for figure in figures}
        people.append(_Person(f"{population.prefix}{index:03d}", rng, figures, values))
    for day in range(population.sessions):
        for person in people:
            await _session(loop, population, person, day, run, advance)
        advance(timedelta(days=1))
    await loop.turns.housekeeping()  # the last turn of each day is judged by its silence
    return run


async def _session(
    loop: Loop,
    population: Population,
    person: _Person,
    day: int,
    run: SimulationRun,
    advance: Callable[[timedelta], None],
) -> None:
    """One user's session of the day: a question, a correction when the answer was wrong, then thanks."""
    rng, session = person.rng, f"d{day}"
    figure = person.figures[0] if population.memory_helps else person.figures[day]
    value = person.values[figure]
    wrong = value + rng.choice((-7, -5, -3, 3, 5, 7))
    # Both chances are drawn every time, so a user's draws do not depend on the arm they are in.
    slip, lucky = rng.random(), rng.random()

    async def say(message: str, decide: Callable[[str], str]) -> None:
        async with loop.turn(person.user, message, session=session) as turn:
            await turn.finish(decide(turn.context))  # the agent answers from what its context holds
        await loop.turns.drain()
        advance(timedelta(minutes=1))
        run.turns += 1

    right = False

    def answer(context: str) -> str:
        nonlocal right
        knows = population.memory_helps and f"{figure} is {value} litres" in context
        right = (knows and slip >= population.noise) or (not knows and lucky < population.guess)
        run.right_with_memory += knows and right
        return f"Your {figure} is {value if right else wrong} litres."

    await say(f"What's my {figure}? I need it for today's brew.", answer)
    if not right:
        run.corrections += 1
        correction = f"No, that's wrong: my {figure} is {value} litres, not {wrong}."
        await say(correction, lambda context: f"Sorry — {value} litres.")
    await say("Perfect, thanks!", lambda context: "Glad to help.")
