"""Usage signals: session correlation and seed 002's classification.

`set_context` opens a correlation window in a session: the query, its intent, and the query vector the
router computed. Until the next `set_context`, every tools/list and search_available_tools in the session
adds to what the window has shown, and every tools/call is attributed to the window's query and
classified by whether the tool was in the routed list (retrieved) and/or found by search:

    searched and retrieved → very strong;  retrieved → strong;  searched → discovery;  neither → weak.

The query vector is cached in the window, so recording a call never calls the embedder.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..stores.base import Vector
from .models import Strength

__all__ = ["SessionWindow", "SessionWindows", "classify", "query_hash"]

_SPACE = re.compile(r"\s+")


def classify(was_retrieved: bool, was_searched: bool) -> Strength:
    """Seed 002's `classifySignal`, verbatim."""
    if was_searched and was_retrieved:
        return Strength.VERY_STRONG
    if was_retrieved:
        return Strength.STRONG
    if was_searched:
        return Strength.DISCOVERY
    return Strength.WEAK


def query_hash(tenant: str, query: str) -> str:
    """Stable across processes and case/whitespace variants; the learned pair's id part (seed 002)."""
    normalised = _SPACE.sub(" ", query.casefold()).strip()
    return hashlib.blake2b(f"{tenant}\x00{normalised}".encode(), digest_size=16).hexdigest()


@dataclass
class SessionWindow:
    session: str
    user: str | None
    query: str | None = None
    query_hash: str | None = None
    vector: Vector | None = None
    intent: str = ""
    retrieved: set[str] = field(default_factory=set)
    searched: set[str] = field(default_factory=set)
    template_ids: list[int] = field(default_factory=list)  # reinforced in this window; feedback goes to them
    # observe()'s per-turn split of the templates reinforced in the session: since its last observed turn, and
    # during that turn (waiting for the verdict the next user message gives). Carried into the window the next
    # set_context opens, because that verdict usually arrives after the next context was set.
    unobserved: list[int] = field(default_factory=list)
    awaiting_verdict: list[int] = field(default_factory=list)
    # Templates whose call pattern failed in this window: the next lookup tries the next best (seed 001 §8.3).
    failed_templates: set[int] = field(default_factory=set)
    opened_at: float = field(default_factory=time.monotonic)

    def show(self, names: Iterable[str]) -> None:
        self.retrieved.update(names)

    def found(self, names: Iterable[str]) -> None:
        self.searched.update(names)

    def strength_of(self, tool: str) -> Strength:
        return classify(tool in self.retrieved, tool in self.searched)


class SessionWindows:
    """The open window of each session, least recently used dropped first."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._windows: OrderedDict[str, SessionWindow] = OrderedDict()

    def open(self, window: SessionWindow) -> SessionWindow:
        self._windows[window.session] = window
        self._windows.move_to_end(window.session)
        while len(self._windows) > self.limit:
            self._windows.popitem(last=False)
        return window

    def get(self, session: str) -> SessionWindow | None:
        window = self._windows.get(session)
        if window is not None:
            self._windows.move_to_end(session)
        return window

    def peek(self, session: str) -> SessionWindow | None:
        """The session's window without counting as a use (a look at who owns it)."""
        return self._windows.get(session)

    def get_or_open(self, session: str, user: str | None) -> SessionWindow:
        window = self.get(session)
        if window is None or (user is not None and window.user != user):
            window = self.open(SessionWindow(session=session, user=user))
        return window

    def __len__(self) -> int:
        return len(self._windows)
