"""Workers that cost nothing when idle, and that stop writing the moment their user is forgotten.

An idle worker polls with reads only (no write transaction, no lock); after `idle_polls` empty polls it
retires, and the next package (queued here or by another process) brings a worker back. Forgetting a user
deletes their session: a worker still busy with it is refused its next write and stops, and
`loop.agent.reap_workers()` stops it at once.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from learnloop.loop import Loop
from learnloop.stores.sql.dialect import Connection
from learnloop.stores.sql.store import SqlStore
from learnloop.stores.sqlite import SQLiteStore
from tests.agent.support import LearningScript, build_loop, calls
from tests.conftest import database_target
from tests.support.scripted_openai import Reply, Request, ScriptedOpenAI

AGENT_TABLES = ("agent_sessions", "agent_queue", "agent_messages", "agent_effects", "agent_experience_files")


async def _until(condition: Callable[[], bool], what: str, seconds: float = 30.0) -> None:
    """Wait for a condition (a generous limit only turns a hang into a failure; nothing here is timed)."""
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        await asyncio.sleep(0.01)


def _sqlite(loop: Loop) -> SQLiteStore:
    store = loop.engine.store
    assert isinstance(store, SQLiteStore)
    return store


async def _rows_of(loop: Loop, user: str) -> dict[str, int]:
    def count(conn: Connection) -> dict[str, int]:
        query = "SELECT COUNT(*) FROM {} WHERE tenant = 'acme' AND user_id = ?"
        return {t: conn.execute(query.format(t), (user,)).fetchone()[0] for t in (*AGENT_TABLES, "learnings")}

    store = loop.engine.store
    assert isinstance(store, SqlStore)
    return await store._run(count)


async def test_an_idle_worker_polls_without_writing(
    agent_loop: Loop, scripted_openai: ScriptedOpenAI, backend: str
) -> None:
    if backend != "sqlite":
        pytest.skip("watches the statements through SQLite's trace callback")
    loop = agent_loop
    scripted_openai.chat.respond(LearningScript([Reply.text("ok")]))
    await loop.agent.open_session("quiet", user="alice")
    assert loop.agent._workers.serves("acme", "quiet")
    statements: list[str] = []
    store = _sqlite(loop)
    await store._run(lambda conn: conn.set_trace_callback(statements.append))
    try:
        # The claim's look at the session's queue (the trace shows statements with their values filled in).
        polls = lambda: sum("FROM agent_queue WHERE tenant = 'acme' AND session = 'quiet'" in s for s in statements)  # noqa: E731
        await _until(lambda: polls() >= 6, "six polls of the idle worker")
    finally:
        await store._run(lambda conn: conn.set_trace_callback(None))
    writes = [s for s in statements if s.lstrip().upper().startswith(("BEGIN IMMEDIATE", "INSERT", "UPDATE", "DELETE"))]
    assert writes == []
    assert loop.agent._workers.serves("acme", "quiet")  # still there: it has not been idle long enough


async def test_an_idle_worker_retires_and_the_next_package_brings_it_back(
    backend: str, tmp_path: Path, scripted_openai: ScriptedOpenAI
) -> None:
    scripted_openai.chat.respond(LearningScript([Reply.text("ok")]))
    db = database_target(backend, tmp_path, "retire.db")
    loop = build_loop(db, scripted_openai.settings(), idle_polls=3)
    elsewhere = build_loop(db, scripted_openai.settings(), run_workers=False)
    workers = loop.agent._workers
    try:
        await loop.agent.open_session("s", user="alice")
        await _until(lambda: not workers.serves("acme", "s"), "the idle worker to retire")
        assert (await loop.agent.status()).workers == [] and (await loop.agent.get_session("s")).is_open

        await loop.submit_interaction("s", "first", "answer", user="alice")
        assert workers.serves("acme", "s")  # submit spawned it again, before returning
        assert (await loop.agent.drain("s")).done == 1

        # Retired again, a package queued by another process is found by the supervisor.
        await _until(lambda: not workers.serves("acme", "s"), "the worker to retire again")
        await elsewhere.submit_interaction("s", "second", "answer", user="alice")
        counts = await loop.agent.drain("s")
        assert counts.done == 2 and counts.unfinished == 0
    finally:
        await elsewhere.aclose()
        await loop.aclose()


class _Held:
    """The model's first answer for a package, held until the test lets it go: the worker waits inside the
    model call meanwhile. Its answer writes a file and saves a learning for the session's user."""

    def __init__(self) -> None:
        self.asked, self.release = threading.Event(), threading.Event()

    def __call__(self, request: Request) -> Reply:
        self.asked.set()
        self.release.wait(60)
        return calls(
            ("write_file", {"path": "notes.md", "content": "# Alice\n- prefers metric units\n"}),
            ("save_learning", {"learning": "Alice prefers metric units", "category": "preference"}),
        )


async def _busy_with_alice(loop: Loop, scripted_openai: ScriptedOpenAI) -> _Held:
    held = _Held()
    scripted_openai.chat.respond(LearningScript([held, Reply.text("done")]))
    await loop.agent.open_session("s", user="alice")
    await loop.submit_interaction("s", "I prefer metric units", "Noted.", user="alice")
    assert await asyncio.to_thread(held.asked.wait, 30), "the worker never called the model"
    return held


async def test_a_worker_busy_for_a_forgotten_user_writes_nothing_more(
    agent_loop: Loop, scripted_openai: ScriptedOpenAI
) -> None:
    loop, workers = agent_loop, agent_loop.agent._workers
    held = await _busy_with_alice(loop, scripted_openai)
    assert (await _rows_of(loop, "alice"))["agent_messages"] == 1  # the package, as the agent's user message
    await loop.forget("alice")  # stops the worker without waiting for the model (the store refuses it anyway)
    assert not workers.serves("acme", "s")
    held.release.set()  # the model answers: a file to write and a learning to save, for alice
    await _until(lambda: not workers.serves("acme", "s"), "the worker to stop")
    assert await _rows_of(loop, "alice") == dict.fromkeys((*AGENT_TABLES, "learnings"), 0)
    assert [e for e in await loop.events(limit=100) if e.user == "alice" or e.action == "learning_done"] == []
