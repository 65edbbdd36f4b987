"""One person across channels (`loop.identities`, issue 24 part A): identities resolve to canonical users, a link
code issued on one channel and redeemed on another joins them (and merges two histories through the governed
write: nothing is lost or doubled), wrong, expired and used codes link nothing, guessing locks out, unlinking
stops new learning into the user, and forgetting the user takes identities, codes, attempts and merged users."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import learnloop
from learnloop import LinkCodeInvalid, LinkLocked, Status
from learnloop.channels import TelegramAdapter
from learnloop.channels.identities import IdentityConfig, channel_key
from learnloop.errors import ConflictError, NotFound, ValidationError
from learnloop.stores.identities import LinkPolicy
from tests.support.clock import Clock
from tests.support.nothing_lost import assert_nothing_lost, statement

TG, WA = ("telegram", "123456789"), ("whatsapp", "+44 7700 900123")


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def loop(open_loop: Callable[..., learnloop.Loop], clock: Clock) -> AsyncIterator[learnloop.Loop]:
    lp = open_loop("identities.db", clock=clock)
    yield lp
    await lp.aclose()


async def texts_for(loop: learnloop.Loop, user: str, query: str) -> list[str]:
    result = await loop.retrieve_context(user, query, record=False)
    return [item.learning.text for item in result.items]


async def test_two_channels_share_learnings_after_linking_and_not_before(loop: learnloop.Loop) -> None:
    tg = await loop.identities.resolve(*TG, username="ana", display_name="Ana")
    wa = await loop.identities.resolve(*WA)
    assert tg.user != wa.user and tg.created and tg.active
    await loop.save("User brews stout in 20 L batches", user=tg.user)
    assert await texts_for(loop, wa.user, "what does the user brew?") == []

    code = await loop.identities.issue_link_code(*TG)
    linked = await loop.identities.redeem_link_code(*WA, code.code)
    assert linked.linked and linked.user == tg.user and linked.merged_from == wa.user
    again = await loop.identities.resolve(*WA)
    assert again.user == tg.user and not again.created
    assert await texts_for(loop, again.user, "what does the user brew?") == ["User brews stout in 20 L batches"]

    person = await loop.identities.user(tg.user)
    assert person.display_name == "Ana" and person.interaction_count == 3 and person.merged_from == [wa.user]
    assert {(i.channel, i.masked_id) for i in person.identities} == {("telegram", "•••6789"), ("whatsapp", "•••0123")}
    # Linking the same two again changes nothing.
    code = await loop.identities.issue_link_code(*WA)
    assert not (await loop.identities.redeem_link_code(*TG, code.code)).linked


async def test_wrong_expired_and_used_codes_link_nothing(loop: learnloop.Loop, clock: Clock) -> None:
    tg, wa = await loop.identities.resolve(*TG), await loop.identities.resolve(*WA)
    web = await loop.identities.resolve("web", "session-token-42")
    with pytest.raises(LinkCodeInvalid):
        await loop.identities.redeem_link_code(*WA, "NOTACODE")
    code = await loop.identities.issue_link_code(*TG)
    assert code.expires_at == clock.now + IdentityConfig().code_ttl
    clock.advance(minutes=11)
    with pytest.raises(LinkCodeInvalid):
        await loop.identities.redeem_link_code(*WA, code.code)
    code = await loop.identities.issue_link_code(*TG)
    with pytest.raises(ValidationError):
        await loop.identities.redeem_link_code(*TG, code.code)  # on the channel that issued it
    assert (await loop.identities.redeem_link_code(*WA, code.code.lower())).linked  # read off a screen: any case
    with pytest.raises(LinkCodeInvalid):
        await loop.identities.redeem_link_code("web", "session-token-42", code.code)  # single use
    assert (await loop.identities.resolve("web", "session-token-42")).user == web.user
    assert (await loop.identities.resolve(*WA)).user == tg.user != wa.user


async def test_guessing_codes_locks_the_identity_out(loop: learnloop.Loop, clock: Clock) -> None:
    await loop.identities.resolve(*TG)
    await loop.identities.resolve(*WA)
    code = await loop.identities.issue_link_code(*TG)
    for guess in range(IdentityConfig().max_failures - 1):
        with pytest.raises(LinkCodeInvalid):
            await loop.identities.redeem_link_code(*WA, f"GUESS{guess:03d}")
    with pytest.raises(LinkLocked) as locked:
        await loop.identities.redeem_link_code(*WA, "GUESS999")
    assert locked.value.details["retry_after"] > 0
    with pytest.raises(LinkLocked):  # even the right code, while locked
        await loop.identities.redeem_link_code(*WA, code.code)
    clock.advance(minutes=9)  # the lock-out (15 minutes) is still on; the code (10 minutes) still good
    with pytest.raises(LinkLocked):
        await loop.identities.redeem_link_code(*WA, code.code)
    clock.advance(minutes=7)
    code = await loop.identities.issue_link_code(*TG)
    assert (await loop.identities.redeem_link_code(*WA, code.code)).linked


async def test_unlinking_stops_new_learning_into_the_user(loop: learnloop.Loop) -> None:
    tg, _ = await loop.identities.resolve(*TG), await loop.identities.resolve(*WA)
    with pytest.raises(ValidationError):
        await loop.identities.unlink(*TG)  # its user's only identity
    await loop.identities.redeem_link_code(*WA, (await loop.identities.issue_link_code(*TG)).code)
    await loop.save("User brews stout in 20 L batches", user=tg.user)
    gone = await loop.identities.unlink(*WA)
    assert gone.previous_user == tg.user and gone.user != tg.user
    now = await loop.identities.resolve(*WA)
    assert now.user == gone.user
    await loop.save("User keeps bees", user=now.user)
    assert await texts_for(loop, tg.user, "does the user keep bees?") == []
    assert await texts_for(loop, now.user, "what does the user brew?") == []
    assert await texts_for(loop, tg.user, "what does the user brew?") == ["User brews stout in 20 L batches"]


async def test_an_identity_can_be_stopped_from_learning(loop: learnloop.Loop) -> None:
    tg = await loop.identities.resolve(*TG)
    assert not (await loop.identities.set_active(*TG, False)).active
    quiet = await loop.identities.resolve(*TG)
    assert quiet.user == tg.user and not quiet.active
    assert (await loop.identities.set_active(*TG, True)).active and (await loop.identities.resolve(*TG)).active
    with pytest.raises(NotFound):
        await loop.identities.set_active("telegram", "never-seen", False)


async def test_an_app_attaches_an_identity_to_a_user_it_knows(loop: learnloop.Loop) -> None:
    web = await loop.identities.attach("web", "session-token-42", "alice")
    assert web.user == "alice" and web.interaction_count == 0
    assert (await loop.identities.resolve("api", "alice-key", user="alice")).user == "alice"
    assert [i.channel for i in await loop.identities.identities("alice")] == ["api", "web"]
    with pytest.raises(ConflictError):
        await loop.identities.attach("web", "session-token-42", "bob")
    with pytest.raises(ValidationError):
        await loop.identities.resolve("Tele gram", "1")
    with pytest.raises(ValidationError):
        await loop.identities.resolve("telegram", "")
    with pytest.raises(NotFound):
        await loop.identities.user("nobody")
    with pytest.raises(NotFound):
        await loop.identities.issue_link_code("telegram", "never-seen")
    # The pseudonym a listing shows is accepted where a channel user id is.
    listed = (await loop.identities.identities("alice"))[1]
    assert listed.id == channel_key("web", "session-token-42")
    assert (await loop.identities.identity("web", listed.id)).user == "alice"


async def test_a_merge_keeps_every_text_of_both_users(loop: learnloop.Loop) -> None:
    tg, wa = await loop.identities.resolve(*TG), await loop.identities.resolve(*WA)
    mine = ["User prefers short answers.", "The user's partner uses CircleCI for CI.", "Kettle A boils off 4 L/hr."]
    theirs = [
        "User prefers short answers.",  # known already: skipped, kept among the sources
        "The user's partner switched from CircleCI to Jenkins for CI.",
        "Kettle A actually boils off 3.5 L/hr.",
        "The user runs 10 km every Sunday.",
    ]
    for text in mine:
        await loop.save(text, user=tg.user)
    for text in theirs:
        await loop.save(text, user=wa.user, status="verified")
    await loop.profiles.learn(wa.user, "revenue last month?")

    code = await loop.identities.issue_link_code(*TG)
    result = await loop.identities.redeem_link_code(*WA, code.code)
    assert result.learnings_moved == len(theirs) and result.learnings_left == []
    assert (await loop.list(user=wa.user, owner=wa.user, limit=100)).items == []  # nothing left behind

    everything = (await loop.list(user=tg.user, owner=tg.user, limit=100)).items
    live = [x for x in everything if x.status is not Status.DEPRECATED]
    by_id = {x.id: x for x in everything}
    wordings = {x.id: [p.text or "" for p in await loop.provenance(x.id, user=tg.user)] for x in live}
    for text in mine + theirs:
        if any(text in x.text for x in live) or any(text in w for x in live for w in wordings[x.id]):
            continue
        for old in (x for x in everything if x.text == text):
            assert old.status is Status.DEPRECATED and old.status_reason and old.superseded_by in by_id
    # No text is live twice.
    assert len({x.text for x in live}) == len(live)
    assert (await loop.profiles.get(tg.user)).interactions == 1


async def test_a_merge_cut_short_resumes_without_doubling(loop: learnloop.Loop) -> None:
    tg, wa = await loop.identities.resolve(*TG), await loop.identities.resolve(*WA)
    await loop.save("User brews stout in 20 L batches.", user=wa.user)
    await loop.save("User keeps bees.", user=wa.user)
    # The link committed, then the process died before the merge moved anything but one copy (its first step).
    store = loop.engine.identities
    assert store is not None
    await store.issue_code(
        loop.tenant, "telegram", channel_key(*TG), "h", loop.engine.clock(), loop.engine.clock().replace(year=2999)
    )

    await store.redeem_code(loop.tenant, "whatsapp", channel_key(*WA), "h", loop.engine.clock(), LinkPolicy(5, 900))
    await loop.save("User brews stout in 20 L batches.", user=tg.user)
    assert await loop.identities.finish_merges() == 1
    assert await loop.identities.finish_merges() == 0
    live = [x.text for x in (await loop.list(user=tg.user, owner=tg.user, status="candidate", limit=100)).items]
    assert sorted(live) == ["User brews stout in 20 L batches.", "User keeps bees."]


async def test_a_good_code_does_not_forgive_wrong_guesses(loop: learnloop.Loop, clock: Clock) -> None:
    await loop.identities.resolve(*TG)
    await loop.identities.resolve(*WA)
    assert (await loop.identities.redeem_link_code(*WA, (await loop.identities.issue_link_code(*TG)).code)).linked
    # One person holding both identities guesses between codes it issues itself: the count goes on.
    for guess in range(IdentityConfig().max_failures - 1):
        with pytest.raises(LinkCodeInvalid):
            await loop.identities.redeem_link_code(*WA, f"GUESS{guess:03d}")
    own = await loop.identities.issue_link_code(*TG)
    assert not (await loop.identities.redeem_link_code(*WA, own.code)).linked
    with pytest.raises(LinkLocked):
        await loop.identities.redeem_link_code(*WA, "GUESS999")
    # After the lock-out, and for failures older than a lock-out's length, the count starts again.
    clock.advance(minutes=16)
    for guess in range(IdentityConfig().max_failures - 1):
        with pytest.raises(LinkCodeInvalid):
            await loop.identities.redeem_link_code(*WA, f"GUESS{guess:03d}")
    clock.advance(minutes=16)
    with pytest.raises(LinkCodeInvalid) as fresh:
        await loop.identities.redeem_link_code(*WA, "GUESS999")
    assert fresh.value.details["tries_left"] == IdentityConfig().max_failures - 1


async def begin_link(loop: learnloop.Loop, issuer: tuple[str, str], redeemer: tuple[str, str]) -> None:
    """A link committed by the store, its merge not run (the process died, or another link is running)."""
    store = loop.engine.identities
    assert store is not None
    now = loop.engine.clock()
    code = f"h-{uuid.uuid4().hex}"
    await store.issue_code(loop.tenant, issuer[0], channel_key(*issuer), code, now, now.replace(year=2999))
    await store.redeem_code(loop.tenant, redeemer[0], channel_key(*redeemer), code, now, LinkPolicy(5, 900))


async def live_texts(loop: learnloop.Loop, user: str) -> list[str]:
    items = (await loop.list(user=user, owner=user, limit=100)).items
    return sorted(x.text for x in items if x.status is not Status.DEPRECATED)


SMS = ("sms", "+15550003")


async def test_chained_links_all_end_with_the_last_user(loop: learnloop.Loop) -> None:
    a, b, c = [await loop.identities.resolve(*who) for who in (TG, WA, SMS)]
    await loop.save("User owns a copper kettle.", user=a.user)
    await loop.save("User keeps bees.", user=b.user)
    await loop.save("User brews stout.", user=c.user)
    async with loop.turn(a.user, "What kettle do I own?", session="s", channel="telegram") as turn:
        await turn.finish("A copper one.")
    await loop.turns.drain()
    # A joins B, then B joins C, before either merge ran: A's merge goes on to C. (The turn's finish started
    # the housekeeping pass, which may be finishing them too: the end is the same.)
    await begin_link(loop, WA, TG)
    await begin_link(loop, SMS, WA)
    await loop.identities.finish_merges()
    assert await live_texts(loop, c.user) == ["User brews stout.", "User keeps bees.", "User owns a copper kettle."]
    assert await live_texts(loop, a.user) == [] and await live_texts(loop, b.user) == []
    assert (await loop.turns.get(turn.id, user=c.user)).response == "A copper one."
    assert sorted(await loop.identities.merged_users(c.user)) == sorted([a.user, b.user])
    assert await loop.engine.identities.pending_merges(loop.tenant) == []  # type: ignore[union-attr]


async def test_two_links_at_once_converge(loop: learnloop.Loop) -> None:
    a = await loop.identities.resolve(*TG)
    await loop.identities.attach("web", "session-a", a.user)
    b, c = await loop.identities.resolve(*WA), await loop.identities.resolve(*SMS)
    texts = [f"User owns a {colour} kettle for brewing." for colour in ("red", "blue", "green", "copper")]
    for text in texts:
        await loop.save(text, user=a.user)
    to_b, to_c = await loop.identities.issue_link_code(*WA), await loop.identities.issue_link_code(*SMS)
    await asyncio.gather(
        loop.identities.redeem_link_code(*TG, to_b.code),
        loop.identities.redeem_link_code("web", "session-a", to_c.code),
    )
    final = (await loop.identities.identity(*TG)).user
    assert final == (await loop.identities.identity("web", "session-a")).user
    assert set(texts) <= set(await live_texts(loop, final))
    assert [u for u in (a.user, b.user, c.user) if u != final and await live_texts(loop, u)] == []
    assert await loop.engine.identities.pending_merges(loop.tenant) == []  # type: ignore[union-attr]


async def test_sending_the_code_again_finishes_a_link_cut_short(loop: learnloop.Loop) -> None:
    tg, wa = await loop.identities.resolve(*TG), await loop.identities.resolve(*WA)
    await loop.save("User keeps bees.", user=tg.user)
    code = await loop.identities.issue_link_code(*WA)
    store = loop.engine.identities
    assert store is not None
    # The link committed and the merge died (no learning moved): the person sends the same code again.
    hashed = loop.identities._hash(code.code)
    await store.redeem_code(loop.tenant, "telegram", channel_key(*TG), hashed, loop.engine.clock(), LinkPolicy(5, 900))
    for _ in range(IdentityConfig().max_failures + 1):  # never a wrong guess
        again = await loop.identities.redeem_link_code(*TG, code.code)
        assert again.user == wa.user and not again.linked
    assert await live_texts(loop, wa.user) == ["User keeps bees."] and await live_texts(loop, tg.user) == []
    # The same used code from another person is still a wrong one.
    await loop.identities.resolve("web", "someone-else")
    with pytest.raises(LinkCodeInvalid):
        await loop.identities.redeem_link_code("web", "someone-else", code.code)


async def test_housekeeping_finishes_merges_and_two_processes_finish_each_once(
    open_loop: Callable[..., learnloop.Loop], clock: Clock
) -> None:
    first, second = open_loop("shared.db", clock=clock), open_loop("shared.db", clock=clock)
    try:
        tg, wa = await first.identities.resolve(*TG), await first.identities.resolve(*WA)
        home, web = await first.identities.resolve("web", "s-1"), await first.identities.resolve("web", "s-2")
        texts = ["User keeps bees.", "User brews stout.", "User owns a copper kettle."]
        for text in texts:
            await first.save(text, user=wa.user)
            await first.save(text, user=web.user)
        await begin_link(first, TG, WA)
        await begin_link(first, ("web", "s-1"), ("web", "s-2"))
        # Both processes' passes at once: each merge finishes once, and no text is live twice.
        done = await asyncio.gather(first.identities.finish_merges(), second.identities.finish_merges())
        assert sum(done) == 2
        assert await live_texts(first, tg.user) == sorted(texts) == await live_texts(first, home.user)
        await begin_link(first, TG, ("web", "s-1"))
        report = await second.turns.housekeeping()
        assert report.merges == 1 and await live_texts(first, tg.user) == sorted(texts)
    finally:
        await first.aclose()
        await second.aclose()


async def test_a_turn_running_while_its_person_links_finishes(loop: learnloop.Loop) -> None:
    tg, wa = await loop.identities.resolve(*TG), await loop.identities.resolve(*WA)
    await loop.save("User keeps bees.", user=tg.user)
    code = await loop.identities.issue_link_code(*WA)
    async with loop.turn(tg.user, "I prefer vegetarian recipes; I never eat meat.", session="tg") as turn:
        assert (await loop.identities.redeem_link_code(*TG, code.code)).linked
        await turn.finish("Noted.")
    await loop.turns.drain()
    # The turn learned as the user it began with; the housekeeping pass moves that along with the turn.
    await loop.turns.housekeeping()
    assert await live_texts(loop, tg.user) == []
    assert "User keeps bees." in await live_texts(loop, wa.user)
    assert any("vegetarian" in text for text in await live_texts(loop, wa.user))
    assert (await loop.turns.get(turn.id, user=wa.user)).response == "Noted."


async def test_a_telegram_sender_with_long_names_is_resolved_and_its_id_kept_only_as_a_pseudonym(
    loop: learnloop.Loop,
) -> None:
    sender = {"id": 987654321, "is_bot": False, "first_name": "A" * 64, "last_name": "B" * 64, "username": "u" * 140}
    update = {
        "update_id": 1,
        "message": {"message_id": 1, "from": sender, "chat": {"id": 987654321, "type": "private"}},
    }
    person = TelegramAdapter("1:token").resolve_user(update)
    assert person is not None and len(person.display_name or "") == 129
    who = await loop.identities.resolve(
        person.channel,
        person.channel_user_id,
        username=person.username,
        display_name=person.display_name,
        metadata=person.metadata,
    )
    account = await loop.identities.user(who.user)
    assert account.display_name == "A" * 64 + " " + "B" * 63  # cut at 128 characters, never refused
    [identity] = account.identities
    assert identity.username == "u" * 128 and identity.metadata == {"chat_type": "private"}
    assert "987654321" not in identity.model_dump_json()


async def test_forget_removes_identities_codes_attempts_and_merged_users(loop: learnloop.Loop, tmp_path: Path) -> None:
    tg, wa = await loop.identities.resolve(*TG), await loop.identities.resolve(*WA)
    await loop.save("User brews stout in 20 L batches", user=wa.user)
    with pytest.raises(LinkCodeInvalid):
        await loop.identities.redeem_link_code(*WA, "WRONG123")
    await loop.identities.redeem_link_code(*WA, (await loop.identities.issue_link_code(*TG)).code)
    await loop.identities.issue_link_code(*TG)
    with pytest.raises(LinkCodeInvalid):
        await loop.identities.redeem_link_code(*WA, "WRONG123")
    other = await loop.identities.resolve("telegram", "555000111")

    await loop.forget(tg.user)
    conn = sqlite3.connect(tmp_path / "identities.db")
    try:
        for table in ("canonical_users", "channel_identities", "link_codes", "link_attempts", "learnings", "events"):
            users = {r[0] for r in conn.execute(f"SELECT user_id FROM {table}")}
            assert not users & {tg.user, wa.user}, table
    finally:
        conn.close()
    assert (await loop.identities.resolve("telegram", "555000111")).user == other.user
    fresh = await loop.identities.resolve(*TG)
    assert fresh.created and fresh.user != tg.user


async def test_no_tenant_sees_another_tenants_identities(loop: learnloop.Loop) -> None:
    ours = await loop.identities.resolve(*TG)
    theirs = await loop.for_tenant("acme").identities.resolve(*TG)
    assert ours.user != theirs.user and theirs.created
    assert await loop.for_tenant("acme").identities.identities(ours.user) == []
    code = await loop.identities.issue_link_code(*TG)
    await loop.for_tenant("acme").identities.resolve(*WA)
    with pytest.raises(LinkCodeInvalid):
        await loop.for_tenant("acme").identities.redeem_link_code(*WA, code.code)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(statement, min_size=1, max_size=6), st.lists(statement, min_size=1, max_size=6))
def test_every_text_of_two_merged_users_is_live_superseded_or_contained(
    open_loop: Callable[..., learnloop.Loop],
    mine: list[tuple[str, list[str]]],
    theirs: list[tuple[str, list[str]]],
) -> None:
    """tests/capture/test_nothing_lost.py's property across a merge: whatever the two users knew, every text is
    live for the joined user, or deprecated naming its successor and why, or contained in a live text, or kept
    among the sources of the live learning that already knew it."""

    async def run() -> None:
        loop = open_loop(f"merge-{uuid.uuid4().hex}.db")
        try:
            tg, wa = await loop.identities.resolve(*TG), await loop.identities.resolve(*WA)
            for user, sequence in ((tg.user, mine), (wa.user, theirs)):
                for text, tags in sequence:
                    assert (await loop.save(text, user=user, tags=tags)).action != "refused"
            await loop.identities.redeem_link_code(*WA, (await loop.identities.issue_link_code(*TG)).code)
            assert (await loop.list(user=wa.user, owner=wa.user, limit=10)).items == []
            await assert_nothing_lost(loop, tg.user, [text for text, _ in mine + theirs])
        finally:
            await loop.aclose()

    asyncio.run(run())
