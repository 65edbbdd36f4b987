"""The holdback part (`stores.holdback`) on every backend: settings per tenant and namespace, pins, the turns the
report reads with their arms, tenant isolation and forgetting a user."""

from __future__ import annotations

from datetime import timedelta

from learnloop.models import utcnow
from learnloop.stores.base import Store
from learnloop.stores.conversations import NewTurn
from learnloop.stores.holdback import HoldbackSettings
from tests.stores.test_contract import ALICE, BOB, OTHER_TENANT
from tests.stores.test_parts_contract import part


async def test_settings_are_kept_per_tenant_and_namespace_and_replaced_in_place(store: Store) -> None:
    holdback = part(store, "holdback")
    now = utcnow()
    assert await holdback.list_settings("t1") == []
    stored = await holdback.put_settings("t1", HoldbackSettings(share=0.2), now)
    assert (stored.share, stored.mode, stored.enabled, stored.namespace) == (0.2, "holdback", True, "")
    await holdback.put_settings("t1", HoldbackSettings(share=0.3, mode="aa", salt="s2"), now)
    await holdback.put_settings("t1", HoldbackSettings(share=0.5, enabled=False, namespace="support"), now)
    found = await holdback.list_settings("t1")
    assert [(s.namespace, s.share, s.mode, s.enabled, s.salt) for s in found] == [
        ("", 0.3, "aa", True, "s2"),
        ("support", 0.5, "holdback", False, ""),
    ]
    assert await holdback.list_settings("t2") == []
    assert await holdback.delete_settings("t1", "support") is True
    assert await holdback.delete_settings("t1", "support") is False
    assert len(await holdback.list_settings("t1")) == 1


async def test_pins_are_set_moved_removed_and_forgotten_with_their_user(store: Store) -> None:
    holdback = part(store, "holdback")
    now = utcnow()
    await holdback.pin("t1", "alice", "holdback", now)
    await holdback.pin("t1", "bob", "memory", now)
    await holdback.pin("t1", "bob", "holdback", now)
    await holdback.pin("t2", "alice", "memory", now)
    assert await holdback.pins("t1") == {"alice": "holdback", "bob": "holdback"}
    await holdback.pin("t1", "bob", None, now)
    assert await holdback.pins("t1") == {"alice": "holdback"}
    await store.forget_user("t1", "alice")
    assert await holdback.pins("t1") == {}
    assert await holdback.pins("t2") == {"alice": "memory"}


async def test_armed_turns_are_the_tenants_turns_oldest_first_with_their_arms(store: Store) -> None:
    holdback, conversations = part(store, "holdback"), part(store, "conversations")
    start = utcnow()
    for number, (scope, arm) in enumerate(
        [(ALICE, "holdback"), (BOB, None), (ALICE, "memory"), (OTHER_TENANT, "memory")]
    ):
        at = start + timedelta(minutes=number)
        context = {"holdback": {"arm": arm, "experiment": "holdback"}} if arm else {}
        turn = NewTurn(f"t{number}", "s1", "", "hello", context, at, at + timedelta(hours=1))
        await conversations.begin_turn(scope, turn)
    await conversations.record_feedback(ALICE, "t0", "follow_up_correction", -0.5)
    turns = await holdback.armed_turns("t1", None, 100)
    assert [(t.user, t.arm, t.feedback_type) for t in turns] == [
        ("alice", "holdback", "follow_up_correction"),
        ("bob", None, None),
        ("alice", "memory", None),
    ]
    assert turns[0].feedback_score == -0.5 and turns[0].experiment == "holdback" and turns[0].tool_calls == []
    assert [t.arm for t in await holdback.armed_turns("t1", start + timedelta(seconds=30), 100)] == [None, "memory"]
    assert [t.arm for t in await holdback.armed_turns("t1", None, 1)] == ["memory"]  # the newest
