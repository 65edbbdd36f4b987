"""What the main agent reads each turn: the routing file and the experience files it routes to, in a budget.

The routing file is the index the learning agent keeps; a file is routed to when the routing file mentions
its path (or its file name). With a `query`, routed files whose routing lines share words with the query
come first; otherwise they come in the order the routing file names them. Files that do not fit the budget
whole are left out (listed in `omitted`); the routing file itself is cut rather than dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pydantic import BaseModel, Field

from ..prompting import estimate_tokens
from ..terms import query_terms, stem
from .records import ExperienceFile, Workspace
from .store import AgentStore

__all__ = ["ExperienceContext", "experience_context", "routed_paths"]

OPEN, CLOSE = "<experience>", "</experience>"


class ExperienceContext(BaseModel):
    text: str
    files: list[str] = Field(default_factory=list)
    omitted: list[str] = Field(default_factory=list)
    tokens: int = 0

    def __str__(self) -> str:
        return self.text


def _stems(text: str) -> set[str]:
    return {stem(t) for t in query_terms(text, limit=64)}


def routed_paths(routing: str, paths: Iterable[str], query: str | None = None) -> list[str]:
    """The paths `routing` mentions, best first."""
    lines = routing.splitlines()
    wanted = _stems(query) if query else set()
    found: list[tuple[float, int, str]] = []
    for path in paths:
        name = path.rsplit("/", 1)[-1]
        pattern = re.compile(rf"(?<![\w/.-])(?:{re.escape(path)}|{re.escape(name)})(?![\w-])")
        positions = [(n, m.start()) for n, line in enumerate(lines) for m in pattern.finditer(line)]
        if not positions:
            continue
        score = max((len(wanted & _stems(lines[n])) for n, _ in positions), default=0) if wanted else 0
        first = positions[0][0] * 10_000 + positions[0][1]
        found.append((-score, first, path))
    return [path for _, _, path in sorted(found)]


def _section(file: ExperienceFile) -> str:
    return f"### {file.path}\n{file.content.strip()}\n"


async def experience_context(
    store: AgentStore, workspace: Workspace, routing_file: str, *, max_tokens: int, query: str | None = None
) -> ExperienceContext:
    routing = await store.read_file(workspace, routing_file)
    if routing is None:
        return ExperienceContext(text="")
    listing = await store.list_files(workspace)
    order = routed_paths(routing.content, [f.path for f in listing if f.path != routing_file], query)
    routed = {f.path: f for f in await store.read_files(workspace, order)}
    overhead = estimate_tokens(OPEN + CLOSE) + 2
    head = _section(routing)
    if estimate_tokens(head) + overhead > max_tokens:  # keep the index, cut to what fits
        head = head[: max(0, (max_tokens - overhead) * 4 - 8)] + " …(cut)\n"
    sections, used, omitted = [head], estimate_tokens(head) + overhead, []
    for path in order:
        file = routed.get(path)
        if file is None:
            continue
        section = _section(file)
        cost = estimate_tokens(section) + 1
        if used + cost > max_tokens:
            omitted.append(path)
            continue
        sections.append(section)
        used += cost
    files = [routing_file] + [p for p in order if p in routed and p not in omitted]
    text = f"{OPEN}\n" + "\n".join(sections) + f"{CLOSE}"
    return ExperienceContext(text=text, files=files, omitted=omitted, tokens=estimate_tokens(text))
