"""The identity part's contract (`stores.identities`), on every backend: identities map to canonical users per
tenant, link codes work once and before they expire, wrong ones are counted durably into a lock-out, a link
moves the redeemer's identities and a merge moves history and sums counters and profiles, and forgetting a
user takes their identity rows."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

from learnloop.errors import ValidationError
from learnloop.models import Scope, utcnow
from learnloop.stores.base import Store, TurnRecord
from learnloop.stores.conversations import NewTurn
from learnloop.stores.identities import IdentityStore, IdentityTouch, LinkOutcome, LinkPolicy
from learnloop.stores.profiles import ProfileStore
from learnloop.stores.sql.store import SqlStore
from learnloop.stores.sql.user_merge import KEPT_TABLES, MERGED_TABLES
from tests.conftest import make_store
from tests.stores.test_parts_contract import part

POLICY = LinkPolicy(max_failures=3, lockout_seconds=900)


def touch(channel: str, key: str, user: str, at_offset: float = 0.0, **extra: object) -> IdentityTouch:
    return IdentityTouch(
        channel=channel,
        channel_key=key,
        masked_id="•••" + key[-4:],
        new_user=user,
        username=extra.get("username"),  # type: ignore[arg-type]
        display_name=extra.get("display_name"),  # type: ignore[arg-type]
        metadata=extra.get("metadata"),  # type: ignore[arg-type]
        at=utcnow() + timedelta(seconds=at_offset),
    )


async def test_identities_resolve_to_one_user_per_tenant(store: Store) -> None:
    ids: IdentityStore = part(store, "identities")
    first, user, created = await ids.touch("t1", touch("telegram", "id:tg1", "u-ana", display_name="Ana"))
    assert created and first.user == "u-ana" and user.interaction_count == 1 and user.display_name == "Ana"
    again, user, created = await ids.touch("t1", touch("telegram", "id:tg1", "ignored", 5, username="ana"))
    assert not created and again.user == "u-ana" and again.username == "ana" and user.interaction_count == 2
    assert again.last_active > first.last_active and user.last_seen > user.first_seen
    # The same channel id in another tenant is another person.
    other, _, created = await ids.touch("t2", touch("telegram", "id:tg1", "u-other"))
    assert created and other.user == "u-other"
    assert [i.channel_key for i in await ids.identities("t1", "u-ana")] == ["id:tg1"]
    assert await ids.identities("t2", "u-ana") == []
    assert await ids.identity("t2", "telegram", "id:nobody") is None
    assert not (await ids.set_active("t1", "telegram", "id:tg1", False)).active
    assert (await ids.identity("t2", "telegram", "id:tg1")).active  # type: ignore[union-attr]
    assert (await ids.user("t2", "u-ana")) is None


async def test_a_code_links_once_before_it_expires_and_wrong_ones_lock_out(store: Store) -> None:
    ids: IdentityStore = part(store, "identities")
    now = utcnow()
    await ids.touch("t1", touch("telegram", "id:tg1", "u-ana"))
    await ids.touch("t1", touch("whatsapp", "id:wa1", "u-wa"))
    await ids.touch("t1", touch("web", "id:web1", "u-web"))
    assert await ids.issue_code("t1", "telegram", "id:tg1", "h-good", now, now + timedelta(minutes=10)) == "u-ana"
    # Another tenant's identity cannot redeem this tenant's code.
    await ids.touch("t2", touch("whatsapp", "id:wa1", "u-t2"))
    assert (await ids.redeem_code("t2", "whatsapp", "id:wa1", "h-good", now, POLICY)).outcome is LinkOutcome.INVALID
    assert (await ids.redeem_code("t1", "telegram", "id:tg1", "h-good", now, POLICY)).outcome is LinkOutcome.OWN_CODE

    linked = await ids.redeem_code("t1", "whatsapp", "id:wa1", "h-good", now, POLICY)
    assert (linked.outcome, linked.into_user, linked.from_user) == (LinkOutcome.LINKED, "u-ana", "u-wa")
    assert {i.channel_key for i in await ids.identities("t1", "u-ana")} == {"id:tg1", "id:wa1"}
    assert await ids.pending_merges("t1") == [("u-wa", "u-ana")]
    assert await ids.merged_users("t1", "u-ana") == ["u-wa"]
    # Used: the next try with it fails, and so does an expired one.
    assert (await ids.redeem_code("t1", "web", "id:web1", "h-good", now, POLICY)).outcome is LinkOutcome.INVALID
    await ids.issue_code("t1", "telegram", "id:tg1", "h-old", now - timedelta(minutes=20), now - timedelta(minutes=10))
    assert (await ids.redeem_code("t1", "web", "id:web1", "h-old", now, POLICY)).outcome is LinkOutcome.INVALID
    locked = await ids.redeem_code("t1", "web", "id:web1", "h-wrong", now, POLICY)
    assert locked.outcome is LinkOutcome.LOCKED and locked.retry_at is not None
    # Locked: even a good code is not read until the lock-out ends.
    await ids.issue_code("t1", "telegram", "id:tg1", "h-new", now, now + timedelta(minutes=30))
    assert (await ids.redeem_code("t1", "web", "id:web1", "h-new", now, POLICY)).outcome is LinkOutcome.LOCKED
    later = now + timedelta(minutes=16)
    assert (await ids.redeem_code("t1", "web", "id:web1", "h-new", later, POLICY)).outcome is LinkOutcome.LINKED


async def test_a_merge_moves_history_sums_counters_and_is_done_once(store: Store) -> None:
    ids: IdentityStore = part(store, "identities")
    profiles: ProfileStore = part(store, "profiles")
    now = utcnow()
    for channel, key, user in (("telegram", "id:tg1", "u-ana"), ("whatsapp", "id:wa1", "u-wa")):
        await ids.touch("t1", touch(channel, key, user))
        await profiles.observe(Scope(tenant="t1", user=user), [("metric", "revenue"), (channel, "x")], now, 30.0)
        # Both users had turn 1 of session "default": the merged-away one's is kept under a session of its own.
        record = TurnRecord("default", 1, user, (), (), (), now)
        await store.put_turn(Scope(tenant="t1", user=user), record)
    await ids.issue_code("t1", "telegram", "id:tg1", "h", now, now + timedelta(minutes=10))
    await ids.redeem_code("t1", "whatsapp", "id:wa1", "h", now, POLICY)
    first = await ids.finish_merge("t1", "u-wa", "u-ana", 30.0)
    assert first.done and first.finished and first.moved > 0
    again = await ids.finish_merge("t1", "u-wa", "u-ana", 30.0)  # resumed after it finished: nothing twice
    assert again.done and not again.finished and again.moved == 0
    assert await ids.pending_merges("t1") == []

    merged = await profiles.get(Scope(tenant="t1", user="u-ana"))
    assert merged is not None and merged.interactions == 2
    revenue = next(p for p in merged.patterns if p.value == "revenue")
    assert revenue.count == 2
    assert {p.kind for p in merged.patterns} == {"metric", "telegram", "whatsapp"}
    assert await profiles.get(Scope(tenant="t1", user="u-wa")) is None
    user = await ids.user("t1", "u-ana")
    assert user is not None and user.interaction_count == 2
    ana = Scope(tenant="t1", user="u-ana")
    kept, moved = await store.last_turn(ana, "default"), await store.last_turn(ana, "default~u-wa")
    assert kept is not None and kept.message_hash == "u-ana"
    assert moved is not None and moved.message_hash == "u-wa"
    assert await store.last_turn(Scope(tenant="t1", user="u-wa"), "default") is None


async def test_unlinking_gives_a_fresh_user_and_forget_takes_identity_rows(store: Store) -> None:
    ids: IdentityStore = part(store, "identities")
    now = utcnow()
    await ids.touch("t1", touch("telegram", "id:tg1", "u-ana"))
    await ids.touch("t1", touch("whatsapp", "id:wa1", "u-wa"))
    await ids.issue_code("t1", "telegram", "id:tg1", "h", now, now + timedelta(minutes=10))
    await ids.redeem_code("t1", "whatsapp", "id:wa1", "h", now, POLICY)
    await ids.redeem_code("t1", "whatsapp", "id:wa1", "h-wrong", now, POLICY)
    assert await ids.unlink("t1", "whatsapp", "id:wa1", "u-fresh", now) == "u-ana"
    assert [i.channel_key for i in await ids.identities("t1", "u-fresh")] == ["id:wa1"]
    await ids.issue_code("t1", "telegram", "id:tg1", "h2", now, now + timedelta(minutes=10))
    removed = await store.forget_user("t1", "u-ana")
    assert removed["channel_identities"] == 1 and removed["link_codes"] == 1 and removed["canonical_users"] == 1
    assert await ids.identities("t1", "u-ana") == [] and await ids.user("t1", "u-ana") is None
    assert await ids.identity("t1", "whatsapp", "id:wa1") is not None  # another user now


def test_a_merge_decides_for_every_table_a_user_owns() -> None:
    """A table added for users later must say what a merge does with it: moved, summed, or kept on purpose."""
    assert set(SqlStore.user_tables) <= {*MERGED_TABLES, *KEPT_TABLES}
    assert not set(MERGED_TABLES) & set(KEPT_TABLES)


async def link(ids: IdentityStore, issuer: tuple[str, str], redeemer: tuple[str, str], code: str) -> LinkOutcome:
    now = utcnow()
    await ids.issue_code("t1", *issuer, code, now, now + timedelta(minutes=10))
    return (await ids.redeem_code("t1", *redeemer, code, now, POLICY)).outcome


async def test_a_good_code_counts_no_failure_away_and_a_used_one_resent_is_no_guess(store: Store) -> None:
    ids: IdentityStore = part(store, "identities")
    await ids.touch("t1", touch("telegram", "id:tg1", "u-ana"))
    await ids.touch("t1", touch("whatsapp", "id:wa1", "u-wa"))
    assert await link(ids, ("telegram", "id:tg1"), ("whatsapp", "id:wa1"), "h-1") is LinkOutcome.LINKED
    now = utcnow()
    for _ in range(2):  # the policy locks out at 3
        assert (await ids.redeem_code("t1", "whatsapp", "id:wa1", "h-x", now, POLICY)).outcome is LinkOutcome.INVALID
    for _ in range(3):  # the used code again, from the identity that used it: no failure counted
        assert (await ids.redeem_code("t1", "whatsapp", "id:wa1", "h-1", now, POLICY)).outcome is LinkOutcome.ALREADY
    assert await link(ids, ("telegram", "id:tg1"), ("whatsapp", "id:wa1"), "h-2") is LinkOutcome.ALREADY
    assert (await ids.redeem_code("t1", "whatsapp", "id:wa1", "h-x", now, POLICY)).outcome is LinkOutcome.LOCKED


async def test_a_merge_follows_the_chain_and_waits_for_running_turns(store: Store) -> None:
    ids: IdentityStore = part(store, "identities")
    conversations = part(store, "conversations")
    now = utcnow()
    for channel, key, user in (("telegram", "id:a", "u-a"), ("whatsapp", "id:b", "u-b"), ("sms", "id:c", "u-c")):
        await ids.touch("t1", touch(channel, key, user))
    a = Scope(tenant="t1", user="u-a")
    await conversations.begin_turn(a, NewTurn("turn-1", "s", "telegram", "hi", {}, now, now + timedelta(hours=1)))
    assert await link(ids, ("whatsapp", "id:b"), ("telegram", "id:a"), "h-ab") is LinkOutcome.LINKED
    assert await link(ids, ("sms", "id:c"), ("whatsapp", "id:b"), "h-bc") is LinkOutcome.LINKED
    # A joined B, then B joined C: A's merge is C's now.
    assert await ids.merge_target("t1", "u-a") == "u-c" == await ids.merge_target("t1", "u-c")
    assert sorted(await ids.merged_users("t1", "u-c")) == ["u-a", "u-b"]
    stale = await ids.finish_merge("t1", "u-a", "u-b", 30.0)
    assert not stale.done and stale.target == "u-c" and stale.moved == 0
    # A's turn is still open: it stays with A (its finish finds it), and the merge waits for it.
    waiting = await ids.finish_merge("t1", "u-a", "u-c", 30.0)
    assert waiting.waiting and not waiting.done
    assert (await conversations.get_turn(a, "turn-1")) is not None
    assert dict(await ids.pending_merges("t1")) == {"u-a": "u-b", "u-b": "u-c"}  # each as it was linked
    assert "t1" in await ids.merging_tenants()
    await conversations.finish_turn(a, "turn-1", "hello", {}, now)
    assert (await ids.finish_merge("t1", "u-a", "u-c", 30.0)).waiting  # finished, its work not run yet
    claimed = await conversations.claim_work("w", now, 60.0)
    assert claimed is not None
    await conversations.complete_work(claimed)
    done = await ids.finish_merge("t1", "u-a", "u-c", 30.0)
    assert done.done and done.finished and done.moved >= 1
    assert (await conversations.get_turn(Scope(tenant="t1", user="u-c"), "turn-1")) is not None
    assert (await ids.finish_merge("t1", "u-b", "u-c", 30.0)).finished
    assert await ids.pending_merges("t1") == [] and await ids.merging_tenants() == []


async def test_two_processes_unlinking_a_users_last_two_identities_at_once_leave_one(
    store: Store, backend: str, tmp_path: Path
) -> None:
    other = make_store(backend, tmp_path)  # another process on the same database
    await other.start()
    try:
        mine: IdentityStore = part(store, "identities")
        theirs: IdentityStore = part(other, "identities")
        for round_ in range(5):
            user = f"u-{round_}"
            await mine.touch("t1", touch("telegram", f"id:tg{round_}", user))
            await mine.touch("t1", touch("whatsapp", f"id:wa{round_}", user))
            results = await asyncio.gather(
                mine.unlink("t1", "telegram", f"id:tg{round_}", f"fresh-a{round_}", utcnow()),
                theirs.unlink("t1", "whatsapp", f"id:wa{round_}", f"fresh-b{round_}", utcnow()),
                return_exceptions=True,
            )
            refused = [r for r in results if isinstance(r, ValidationError)]
            assert len(refused) == 1 and results.count(user) == 1, results
            assert len(await mine.identities("t1", user)) == 1
    finally:
        await other.aclose()
