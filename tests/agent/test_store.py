"""The agent's store on SQLite: claims, leases, the step ledger, conversation trimming, no writes for a session
that is gone."""

from __future__ import annotations

import os
import socket
from datetime import timedelta

import pytest

from learnloop.agent.records import EditExperience, Job, SessionGone, StepCommit, Workspace, WriteExperience
from learnloop.agent.store import AgentStore
from learnloop.llms.base import Message
from learnloop.loop import Loop
from learnloop.models import EventAction, Scope
from learnloop.stores.base import EventDraft

LIVE = f"{socket.gethostname()}:{os.getpid()}"  # this process: alive, so only its lease can expire


def _store(loop: Loop) -> AgentStore:
    return loop.agent.runtime.store


async def _queue(loop: Loop, *texts: str) -> None:
    loop.agent.configure(run_workers=False)
    for text in texts:
        await loop.submit_interaction("s", text, user="alice", id=f"pkg-{text}")


async def test_claims_go_in_order_and_a_held_claim_blocks_the_session_until_its_lease_ends(agent_loop: Loop) -> None:
    await _queue(agent_loop, "a", "b")
    store, now = _store(agent_loop), agent_loop.engine.clock()
    first = await store.claim("acme", "s", f"{LIVE}:w1", now, 30.0)
    assert first.job is not None and first.job.package_id == "pkg-a" and first.job.attempts == 1
    blocked = await store.claim("acme", "s", f"{LIVE}:w2", now, 30.0)
    assert blocked.job is None and blocked.retry_in is not None and 29 < blocked.retry_in <= 30
    later = now + timedelta(seconds=31)
    taken = await store.claim("acme", "s", f"{LIVE}:w2", later, 30.0)
    assert taken.job is not None and taken.job.package_id == "pkg-a" and taken.job.attempts == 2
    assert not await store.renew(first.job, later)  # the old holder lost it
    assert await store.release(taken.job)  # a stopped worker gives it back without counting an attempt
    again = await store.claim("acme", "s", f"{LIVE}:w3", later, 30.0)
    assert again.job is not None and again.job.attempts == 2
    await agent_loop.agent.close_session("s", user="alice")
    assert (await store.claim("acme", "s", f"{LIVE}:w3", later, 30.0)).closed


async def test_a_step_is_applied_once_and_replayed_after(agent_loop: Loop) -> None:
    await _queue(agent_loop, "a")
    store, now = _store(agent_loop), agent_loop.engine.clock()
    claim = await store.claim("acme", "s", f"{LIVE}:w", now, 30.0)
    job = claim.job
    assert isinstance(job, Job)
    workspace = Workspace("acme", "alice", "default")
    await agent_loop.agent.write_file("rules.md", "# Rules\n", user="alice")

    def step(n: int) -> StepCommit:
        edit = EditExperience(workspace, "rules.md", "# Rules\n", "# Rules\n- one more\n", "s")
        draft = EventDraft(actor="agent:learning", action=EventAction.EXPERIENCE_WRITTEN, data={"step": n})
        return StepCommit("acme", "alice", "s", job.package_id, n, "edit_file", "digest", {"ok": True}, [draft], edit)

    def message(call_id: str):  # type: ignore[no-untyped-def]
        return lambda result: (Message(role="tool", content=str(result), tool_call_id=call_id), 3)

    result, events, replayed = await store.commit_step(step(0), message("c1"), now)
    assert result["change"] == "updated" and len(events) == 1 and not replayed
    result, events, replayed = await store.commit_step(step(0), message("c2"), now)
    assert replayed and events == [] and result["change"] == "updated"
    assert (await store.read_file(workspace, "rules.md")).content.count("one more") == 1  # type: ignore[union-attr]
    assert [m.message.tool_call_id for m in await store.messages("acme", "s")][-2:] == ["c1", "c2"]
    assert list(await store.steps("acme", job.package_id)) == [0]

    write = WriteExperience(workspace, "new.md", "# New\n", "s")
    draft = EventDraft(actor="agent:learning", action=EventAction.EXPERIENCE_WRITTEN)
    commit = StepCommit("acme", "alice", "s", job.package_id, 1, "write_file", "d", {"ok": True}, [draft], write)
    result, events, _ = await store.commit_step(commit, message("c3"), now)
    assert result["change"] == "created" and events[0].data["path"] == "new.md" and events[0].user == "alice"


async def test_the_conversation_is_trimmed_by_whole_packages(agent_loop: Loop) -> None:
    await _queue(agent_loop, "a", "b", "c")
    store, now = _store(agent_loop), agent_loop.engine.clock()
    draft = EventDraft(actor="agent:learning", action=EventAction.LEARNING_DONE)
    for budget in (10_000, 10_000, 25):
        claim = await store.claim("acme", "s", f"{LIVE}:w", now, 30.0)
        job = claim.job
        assert job is not None
        for text in ("question " * 20, "answer " * 20):
            role = "user" if text.startswith("question") else "assistant"
            await store.append_message(job, Message(role=role, content=text), 20, now)  # type: ignore[arg-type]
        assert await store.finish(job, failed=False, error=None, event=draft, budget_tokens=budget, now=now)
    kept = await store.messages("acme", "s")
    assert [m.package_id for m in kept] == ["pkg-c", "pkg-c"]  # 40 tokens > 25: only the latest package stays
    counts = await store.queue_counts(Scope(tenant="acme"), "s")
    assert counts.done == 3 and counts.unfinished == 0


async def test_nothing_is_written_for_a_session_that_is_gone(agent_loop: Loop) -> None:
    """After `forget`, a worker's writes for the user's session are refused in their own transaction."""
    await _queue(agent_loop, "a")
    store, now = _store(agent_loop), agent_loop.engine.clock()
    job = (await store.claim("acme", "s", f"{LIVE}:w", now, 30.0)).job
    assert job is not None
    await agent_loop.forget("alice")
    write = WriteExperience(Workspace("acme", "alice", "default"), "notes.md", "# Alice\n", "s")
    draft = EventDraft(actor="agent:learning", action=EventAction.EXPERIENCE_WRITTEN)
    commit = StepCommit("acme", "alice", "s", job.package_id, 0, "write_file", "d", {"ok": True}, [draft], write)
    tool = Message(role="tool", content="ok", tool_call_id="c1")
    with pytest.raises(SessionGone):
        await store.commit_step(commit, lambda result: (tool, 1), now)
    with pytest.raises(SessionGone):
        await store.append_message(job, Message(role="assistant", content="more"), 1, now)
    assert await store.messages("acme", "s") == [] and await store.steps("acme", job.package_id) == {}
    assert await store.read_file(Workspace("acme", "alice", "default"), "notes.md") is None
    assert [e for e in await agent_loop.events(limit=100) if e.user == "alice"] == []
