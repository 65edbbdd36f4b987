"""Sessions, workers and the queue: spawn, cancel, rehydrate, order, retries, the stored conversation, and
what happens without a model."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest

from learnloop.errors import ConflictError, NotConfigured, NotFound, ValidationError
from learnloop.loop import Loop
from learnloop.models import Event
from tests.agent.support import LearningScript, build_loop, calls, package_text
from tests.conftest import database_target
from tests.support.scripted_openai import Reply, ScriptedOpenAI


def _done_turns(events: list[Event]) -> list[tuple[str, int, str]]:
    return [(e.data["session"], e.data["turn"], e.data["status"]) for e in events if e.action == "learning_done"]


async def test_closing_a_session_cancels_its_worker_and_a_restart_resumes_open_ones(
    backend: str, tmp_path: Path, scripted_openai: ScriptedOpenAI
) -> None:
    scripted_openai.chat.respond(LearningScript([Reply.text("Nothing to learn.")]))
    db = database_target(backend, tmp_path, "agent.db")
    first = build_loop(db, scripted_openai.settings())
    await first.agent.open_session("keep", user="alice")
    await first.agent.open_session("gone", user="bob")
    assert sorted((await first.agent.status()).workers) == ["gone", "keep"]
    worker = first.agent._workers._tasks[("acme", "gone")]

    closed = await first.agent.close_session("gone", user="bob")
    assert closed.status == "closed" and worker.cancelled()
    assert (await first.agent.status()).workers == ["keep"]
    with pytest.raises(ConflictError):
        await first.submit_interaction("gone", "hello?", user="bob")

    # Queue work for the open session from a process that runs no workers, then "restart".
    await first.aclose()
    queuer = build_loop(db, scripted_openai.settings(), run_workers=False)
    await queuer.submit_interaction("keep", "first question", "answer", user="alice")
    await queuer.submit_interaction("keep", "second question", "answer", user="alice")
    assert (await queuer.agent.status()).workers == [] and (await queuer.agent.queue("keep")).pending == 2
    await queuer.aclose()

    restarted = build_loop(db, scripted_openai.settings())
    assert await restarted.agent.start() == 1  # only the open session gets a worker
    assert (await restarted.agent.status()).workers == ["keep"]
    counts = await restarted.agent.drain()
    assert counts.done == 2 and counts.unfinished == 0
    assert _done_turns(await restarted.events(limit=100)) == [("keep", 1, "done"), ("keep", 2, "done")]

    # Reopening a closed session gives it a worker again.
    await restarted.agent.open_session("gone", user="bob")
    assert sorted((await restarted.agent.status()).workers) == ["gone", "keep"]
    await restarted.aclose()
    assert restarted.agent._workers.sessions() == []


async def test_packages_are_handled_in_order_once_and_failures_do_not_stop_the_worker(
    agent_loop: Loop, scripted_openai: ScriptedOpenAI
) -> None:
    loop = agent_loop
    loop.agent.configure(max_attempts=2)
    scripted_openai.chat.on(
        lambda r: "broken" in package_text(r) if r.get("tools") else False,
        Reply.error(400, "the model rejects this"),
    )
    scripted_openai.chat.respond(LearningScript([Reply.text("ok")]))
    await loop.agent.open_session("s", user="alice")
    receipts = [
        await loop.submit_interaction("s", text, "answer", user="alice", id=f"pkg-{n}")
        for n, text in enumerate(["one", "broken two", "three"])
    ]
    again = await loop.submit_interaction("s", "one", "answer", user="alice", id="pkg-0")
    assert again.duplicate and again.id == receipts[0].id
    assert [r.turn for r in receipts] == [1, 2, 3]

    counts = await loop.agent.drain("s")
    assert (counts.done, counts.failed) == (2, 1)
    assert _done_turns(await loop.events(limit=100)) == [("s", 1, "done"), ("s", 2, "failed"), ("s", 3, "done")]
    failed = next(e for e in await loop.events(limit=100) if e.data.get("status") == "failed")
    assert failed.data["attempts"] == 2 and "rejects" in failed.data["error"]
    asked = [package_text(r) for r in scripted_openai.chat_requests if r.get("tools")]
    assert [t.split("User query:\n")[1].split("\n")[0] for t in asked] == ["one", "broken two", "broken two", "three"]


async def test_the_conversation_persists_across_packages_and_is_trimmed_to_its_budget(
    agent_loop: Loop, scripted_openai: ScriptedOpenAI
) -> None:
    loop = agent_loop
    scripted_openai.chat.respond(LearningScript([calls(("list_files", {})), Reply.text("Nothing new.")]))
    await loop.agent.open_session("s", user="alice")
    for text in ("alpha question", "beta question"):
        await loop.submit_interaction("s", text, "answer", user="alice")
        await loop.agent.drain("s")
    beta = next(r for r in scripted_openai.chat_requests if "beta" in package_text(r))
    history = [m.get("content") or "" for m in beta["messages"]]
    assert any("alpha question" in h for h in history)  # the agent remembers the earlier package
    assert [m["role"] for m in beta["messages"]] == ["system", "user", "assistant", "tool", "assistant", "user"]

    loop.agent.configure(conversation_tokens=10)
    await loop.submit_interaction("s", "gamma question", "answer", user="alice")
    await loop.agent.drain("s")
    stored = await loop.agent.runtime.store.messages("acme", "s")
    assert {m.package_id for m in stored} == {stored[-1].package_id}  # only the latest package is kept
    assert "gamma" in (stored[0].message.content or "")


async def test_without_a_model_the_agent_says_so_and_the_rest_works(
    tmp_path: Path, scripted_openai: ScriptedOpenAI
) -> None:
    loop = build_loop(tmp_path / "plain.db", scripted_openai.settings(), with_llm=False)
    try:
        assert not loop.agent.configured
        for attempt in (
            loop.agent.start(),
            loop.agent.open_session("s", user="alice"),
            loop.submit_interaction("s", "hello", "hi", user="alice"),
        ):
            with pytest.raises(NotConfigured, match="needs a chat model"):
                await attempt
        status = await loop.agent.status()
        assert not status.configured and not status.running
        # Experience files, knowledge and learnings work without a model.
        await loop.agent.write_file("routing_rules.md", "# Routing\n- Billing questions: read billing.md\n")
        await loop.agent.write_file("billing.md", "# Billing\n- Invoices go out on the 1st.\n")
        context = await loop.experience_context()
        assert context.files == ["routing_rules.md", "billing.md"]
        await loop.agent.add_pointer({"id": "p1", "title": "Invoices", "description": "Monthly invoice run"})
        assert (await loop.agent.search_knowledge("invoice"))[0]["pointer_id"] == "p1"
        saved = await loop.save("Alice prefers metric units", user="alice", category="preference")
        assert saved.stored
        # A process that only queues (workers elsewhere) needs no model.
        loop.agent.configure(run_workers=False)
        receipt = await loop.submit_interaction("s", "hello", "hi", user="alice")
        assert receipt.turn == 1
    finally:
        await loop.aclose()


async def test_sessions_are_scoped_and_validated(agent_loop: Loop, scripted_openai: ScriptedOpenAI) -> None:
    loop = agent_loop
    scripted_openai.chat.respond(LearningScript([Reply.text("ok")]))
    opened = await loop.agent.open_session(user="alice", project="site-a")
    assert opened.session.startswith("s-") and opened.project == "site-a" and not opened.shared
    assert (await loop.agent.open_session(opened.session, user="alice")).project == "site-a"
    with pytest.raises(ConflictError):
        await loop.agent.open_session(opened.session, user="bob")
    with pytest.raises(ConflictError):
        await loop.agent.open_session(opened.session, user="alice", project="other")
    with pytest.raises(NotFound):
        await loop.agent.get_session(opened.session, user="bob")
    with pytest.raises(NotFound):
        await loop.submit_interaction(opened.session, "hi", user="bob")
    with pytest.raises(ValidationError):
        await loop.agent.open_session("bad id!", user="alice")
    with pytest.raises(ValidationError):
        await loop.submit_interaction("s", "x" * 300_000, user="alice")
    assert [s.session for s in await loop.agent.list_sessions(user="alice")] == [opened.session]
    assert await loop.agent.list_sessions(user="bob") == []


async def test_a_worker_picks_up_packages_queued_by_another_process(
    backend: str, tmp_path: Path, scripted_openai: ScriptedOpenAI
) -> None:
    scripted_openai.chat.respond(LearningScript([Reply.text("ok")]))
    db = database_target(backend, tmp_path, "shared.db")
    worker_side = build_loop(db, scripted_openai.settings())
    api_side = build_loop(db, scripted_openai.settings(), run_workers=False)
    try:
        await worker_side.agent.start()
        await api_side.agent.open_session("late", user="carol")  # opened after the worker side started
        await api_side.submit_interaction("late", "question", "answer", user="carol")
        for _ in range(200):
            if (await api_side.agent.queue("late")).done == 1:
                break
            await asyncio.sleep(0.05)
        assert (await api_side.agent.queue("late")).done == 1
        assert "late" in (await worker_side.agent.status()).workers
    finally:
        await api_side.aclose()
        await worker_side.aclose()


async def test_a_package_that_keeps_losing_its_worker_is_given_up(
    backend: str, tmp_path: Path, scripted_openai: ScriptedOpenAI
) -> None:
    scripted_openai.chat.respond(LearningScript([Reply.text("ok")]))
    db = database_target(backend, tmp_path, "poison.db")
    queuer = build_loop(db, scripted_openai.settings(), run_workers=False)
    await queuer.agent.open_session("s", user="alice")
    receipt = await queuer.submit_interaction("s", "crashes every worker", user="alice")
    store, dead = queuer.agent.runtime.store, f"{socket.gethostname()}:999999999:gone"  # no such pid
    for _ in range(2):  # two workers claimed it and died (their process is gone)
        assert (await store.claim("acme", "s", dead, queuer.engine.clock(), 60.0)).job is not None
    await queuer.aclose()

    worker = build_loop(db, scripted_openai.settings(), max_attempts=2)
    try:
        await worker.agent.start()
        counts = await worker.agent.drain("s")
        assert counts.failed == 1
        done = [e for e in await worker.events(limit=100) if e.action == "learning_done"]
        assert done[0].data["package"] == receipt.package_id and "abandoned" in done[0].data["error"]
        assert not [r for r in scripted_openai.chat_requests if r.get("tools")]  # never sent to the model again
    finally:
        await worker.aclose()


def test_the_sync_facade_drives_the_agent(tmp_path: Path, scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.chat.respond(LearningScript([Reply.text("ok")]))
    loop = build_loop(tmp_path / "sync.db", scripted_openai.settings())
    with loop.sync as sync:
        sync.agent.open_session("s", user="alice")
        sync.submit_interaction("s", "hello", "hi", user="alice")
        assert sync.agent.drain("s").done == 1
        assert sync.agent.status().workers == ["s"]
        sync.agent.write_file("routing_rules.md", "# rules\n", user="alice")
        assert sync.experience_context("s").files == ["routing_rules.md"]
