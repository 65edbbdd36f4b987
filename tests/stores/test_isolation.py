"""No read returns another tenant's or another user's data: random data, 1,200 random queries, 0 leaks."""

from __future__ import annotations

import random
from datetime import timedelta

from learnloop.models import EventAction, Filters, Learning, Scope, utcnow
from learnloop.simhash import simhash64_hex
from learnloop.stores.base import EventDraft, Insert, ListQuery, SearchRequest, Store
from learnloop.stores.identities import IdentityStore, IdentityTouch, LinkOutcome, LinkPolicy
from tests.conftest import unit_vector
from tests.stores.test_contract import record
from tests.stores.test_parts_contract import part

WORDS = "boil mash hop yeast water grain kettle revenue order sort query tool error chart".split()
TENANTS = ["acme", "globex", "initech"]
USERS = ["ann", "ben", "cy", "dee"]


def visible(scope: Scope, learning: Learning) -> bool:
    return learning.tenant == scope.tenant and (scope.user is None or learning.user in (None, scope.user))


async def test_no_query_crosses_tenants_or_users(store: Store) -> None:
    rng = random.Random(1234)
    all_ids: list[int] = []
    texts: list[str] = []
    for tenant in TENANTS:
        for owner in [*USERS, None]:
            scope = Scope(tenant=tenant, user=owner)
            ops = []
            for _ in range(12):
                text = " ".join(rng.choice(WORDS) for _ in range(6)) + f" {tenant} {owner or 'shared'}"
                texts.append(text)
                ops.append(
                    Insert(
                        record(scope, text, seed=rng.randrange(10**6)),
                        EventDraft("tool", EventAction.CREATED),
                    )
                )
            result = await store.apply(scope, ops)
            all_ids += [learning.id for learning in result.learnings if learning is not None]

    leaks: list[str] = []
    queries = 0
    returned = 0

    def check(scope: Scope, learning: Learning, how: str) -> None:
        nonlocal returned
        returned += 1
        if not visible(scope, learning):
            leaks.append(f"{how}: {scope} saw learning {learning.id} of {learning.tenant}/{learning.user}")

    for _ in range(1200):
        scope = Scope(tenant=rng.choice([*TENANTS, "nobody"]), user=rng.choice([*USERS, None, "stranger"]))
        kind = rng.randrange(8)
        queries += 1
        if kind == 0:
            found = await store.get(scope, rng.choice(all_ids))
            if found is not None:
                check(scope, found, "get")
        elif kind == 1:
            for learning in await store.get_many(scope, rng.sample(all_ids, 20)):
                check(scope, learning, "get_many")
        elif kind == 2:
            page = await store.list_learnings(scope, ListQuery(text=rng.choice(WORDS), limit=100))
            for learning in page.items:
                check(scope, learning, "list")
        elif kind == 3:
            request = SearchRequest(
                vector=unit_vector(rng.randrange(10**6)), terms=rng.sample(WORDS, 3), filters=Filters()
            )
            found_ids = [candidate.id for candidate in await store.search(scope, request)]
            for learning in await store.get_many(Scope(tenant=scope.tenant), found_ids):
                check(scope, learning, "search")
            if len(found_ids) != len(await store.get_many(Scope(tenant=scope.tenant), found_ids)):
                leaks.append(f"search: {scope} got ids outside its tenant")
        elif kind == 4:
            for learning_id, _ in await store.near_duplicates(scope, simhash64_hex(rng.choice(texts)), 20, None):
                found = await store.get(Scope(tenant=scope.tenant), learning_id)
                if found is None or not visible(scope, found):
                    leaks.append(f"near_duplicates: {scope} got {learning_id}")
        elif kind == 5:
            for event in await store.history(scope, rng.choice(all_ids)):
                if event.tenant != scope.tenant or (scope.user is not None and event.user not in (None, scope.user)):
                    leaks.append(f"history: {scope} saw event {event.seq}")
        elif kind == 6:
            for event in await store.events(scope, limit=500):
                if event.tenant != scope.tenant or (scope.user is not None and event.user not in (None, scope.user)):
                    leaks.append(f"events: {scope} saw event {event.seq}")
        else:
            async for learning, _ in store.export(scope):
                if learning.tenant != scope.tenant or (scope.user is not None and learning.user != scope.user):
                    leaks.append(f"export: {scope} got {learning.id}")
    assert queries >= 1000
    assert returned > 2000, "the queries must actually return data for the check to mean anything"
    assert leaks == []


async def test_no_tenant_sees_another_tenants_identities(store: Store) -> None:
    """The same channel ids in three tenants: every read of one tenant finds only its own identities and users,
    and a code issued in one tenant links nothing in another."""
    ids: IdentityStore = part(store, "identities")
    now = utcnow()
    for tenant in TENANTS:
        for n, user in enumerate(USERS):
            touch = IdentityTouch("telegram", f"id:{n}", "•••", f"{tenant}-{user}", None, None, None, now)
            await ids.touch(tenant, touch)
        await ids.issue_code(tenant, "telegram", "id:0", f"code-{tenant}", now, now + timedelta(minutes=10))
    for tenant in [*TENANTS, "nobody"]:
        for other in TENANTS:
            for user in USERS:
                found = await ids.identities(tenant, f"{other}-{user}")
                assert (found != []) == (tenant == other), (tenant, other, user)
                assert ((await ids.user(tenant, f"{other}-{user}")) is not None) == (tenant == other)
        row = await ids.identity(tenant, "telegram", "id:1")
        assert row is None if tenant == "nobody" else row.user == f"{tenant}-ben"
    policy = LinkPolicy(5, 900)
    crossed = await ids.redeem_code("globex", "telegram", "id:1", "code-acme", now, policy)
    assert crossed.outcome is LinkOutcome.INVALID
    assert (await ids.redeem_code("acme", "telegram", "id:1", "code-acme", now, policy)).outcome is LinkOutcome.LINKED
