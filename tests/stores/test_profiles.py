"""The profile part's contract (`stores.profiles`), on every backend: patterns decay and add up per user, hand
edits are kept, and a user's rows go with them, scoped by tenant and user."""

from __future__ import annotations

from datetime import timedelta

import pytest

from learnloop.errors import ValidationError
from learnloop.models import Scope, utcnow
from learnloop.stores.base import Store
from learnloop.stores.profiles import ProfileStore
from tests.stores.test_contract import ALICE, BOB, OTHER_TENANT, TENANT
from tests.stores.test_parts_contract import part


async def test_patterns_decay_add_up_and_stay_with_their_user(store: Store) -> None:
    profiles: ProfileStore = part(store, "profiles")
    start = utcnow()
    await profiles.observe(ALICE, [("metric", "revenue"), ("time_range", "last_month")], start, 30.0)
    # Thirty days on (one half-life): 1 decays to 0.5, plus this observation.
    await profiles.observe(ALICE, [("metric", "revenue")], start + timedelta(days=30), 30.0)
    await profiles.observe(BOB, [("metric", "orders")], start, 30.0)
    await profiles.observe(OTHER_TENANT, [("metric", "refunds")], start, 30.0)

    mine = await profiles.get(ALICE)
    assert mine is not None and mine.interactions == 2
    revenue = next(p for p in mine.patterns if p.value == "revenue")
    assert revenue.count == 2 and revenue.weight == pytest.approx(1.5)
    assert revenue.last_at == start + timedelta(days=30) and revenue.first_at == start
    assert {p.value for p in mine.patterns} == {"revenue", "last_month"}
    assert await profiles.get(Scope(tenant="t1", user="nobody")) is None

    edited = await profiles.set_overrides(ALICE, {"preferred_time_range": "last_7_days"}, start)
    assert edited.overrides == {"preferred_time_range": "last_7_days"} and edited.interactions == 2
    assert await profiles.remove_patterns(ALICE, "time_range", ["last_month"]) == 1
    assert await profiles.remove_patterns(ALICE, "metric", None) == 1

    assert await profiles.forget(ALICE) == 1  # the profile row; its patterns were removed above
    assert await profiles.get(ALICE) is None
    assert (await profiles.get(BOB)) is not None
    assert (await profiles.get(OTHER_TENANT)) is not None
    with pytest.raises(ValidationError):
        await profiles.get(TENANT)


async def test_forgetting_a_user_removes_their_profile(store: Store) -> None:
    profiles: ProfileStore = part(store, "profiles")
    await profiles.observe(ALICE, [("metric", "revenue")], utcnow(), 30.0)
    removed = await store.forget_user("t1", "alice")
    assert removed["user_patterns"] == 1 and removed["user_profiles"] == 1
    assert await profiles.get(ALICE) is None
