"""The MCP server's own decisions, in process (the SDK's in-memory client; real SQLite and embedder): schemas that
follow each tenant's vocabulary, argument errors the model can read, read-only keys, whose learnings a tenant-wide
caller works on, other users' data reading as missing, the bearer middleware."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.client.client import Client

from learnloop import Loop
from learnloop.errors import NotFound, ValidationError
from learnloop.mcp.server import LearnloopMCP
from learnloop.mcp.server_auth import (
    GLOBAL_USER,
    PRINCIPAL_KEY,
    BearerAuth,
    Principal,
    acting_for,
    resolve_key,
    shared_secret,
)

from .test_server_harness import structured, text

BREWING = ["equipment", "technique", "recipe", "ingredient", "correction"]  # tests/conftest.py's vocabulary


def client(loop: Loop, principal: Principal, *, mode: str = "auto") -> Client:
    return Client(LearnloopMCP(loop, principal).server, mode=mode)


async def test_save_schema_follows_each_tenants_vocabulary(loop: Loop) -> None:
    await loop.for_tenant("cellar").set_vocabulary({"wine": "Wines tasted", "cheese": "Cheeses tried"})
    async with client(loop, Principal("default", "alice")) as brewery:
        tools = {t.name: t for t in (await brewery.list_tools()).tools}
        assert tools["save_learning"].input_schema["properties"]["category"]["enum"] == BREWING
        assert tools["recall"].input_schema["properties"]["categories"]["items"]["enum"] == BREWING
    async with client(loop, Principal("cellar", "alice"), mode="legacy") as cellar:
        tools = {t.name: t for t in (await cellar.list_tools()).tools}
        assert tools["save_learning"].input_schema["properties"]["category"]["enum"] == ["wine", "cheese"]
        saved = await cellar.call_tool("save_learning", {"learning": "Alice loves aged Comte", "category": "cheese"})
        assert not saved.is_error, text(saved)
        section = await cellar.get_prompt("proactive_learning")
        assert "**Cheese**" in text(section) and "equipment" not in text(section)
    # Tenants do not see each other's learnings.
    async with client(loop, Principal("default", "alice")) as brewery:
        listed = await brewery.call_tool("list_learnings", {})
        assert structured(listed)["total"] == 0


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("save_learning", {"category": "equipment"}, "'learning' is required"),
        ("recall", {}, "'query' is required"),
        ("recall", {"query": "boil", "categories": ["gear"]}, "allowed: equipment, technique"),
        ("recall", {"query": "boil", "limit": 500}, "'limit' must be within 1..20"),
        ("list_learnings", {"status": "maybe"}, "'status' must be one of: candidate, verified, deprecated"),
        ("list_learnings", {"category": "gear"}, "allowed: equipment, technique"),
        ("deprecate_learning", {"id": 1}, "'reason' is required"),
        ("deprecate_learning", {"id": "one", "reason": "x"}, "'id' must be an integer"),
        ("confirm_learning", {"id": 0}, "'id' must be at least 1"),
    ],
)
async def test_bad_arguments_are_tool_errors_the_model_can_read(
    loop: Loop, tool: str, arguments: dict[str, Any], message: str
) -> None:
    async with client(loop, Principal("default", "alice")) as mcp:
        result = await mcp.call_tool(tool, arguments)
    assert result.is_error and message in text(result), text(result)


async def test_ids_sent_as_strings_are_accepted(loop: Loop) -> None:
    saved = await loop.save("The mash tun loses 1.5 L to dead space", user="alice", category="equipment")
    assert saved.learning is not None
    async with client(loop, Principal("default", "alice")) as mcp:
        result = await mcp.call_tool("confirm_learning", {"id": str(saved.learning.id)})
    assert not result.is_error and structured(result)["status"] == "verified"


async def test_a_user_cannot_change_another_users_learning(loop: Loop) -> None:
    saved = await loop.save("Bob's kettle holds 30 L", user="bob", category="equipment")
    assert saved.learning is not None
    async with client(loop, Principal("default", "alice")) as mcp:
        result = await mcp.call_tool("deprecate_learning", {"id": saved.learning.id, "reason": "mine now"})
    assert result.is_error and "not found" in text(result)
    assert (await loop.get(saved.learning.id)).status.value == "candidate"


async def test_a_read_only_key_recalls_but_does_not_write(loop: Loop) -> None:
    await loop.save("Boil-off is 3.5 L/hr on the Grainfather", user="alice", category="equipment", status="verified")
    async with client(loop, Principal("default", "alice", "read")) as mcp:
        recalled = await mcp.call_tool("recall", {"query": "boil-off rate"})
        assert not recalled.is_error and "3.5 L/hr" in text(recalled)
        refused = await mcp.call_tool("save_learning", {"learning": "Mash at 67 C", "category": "technique"})
    assert refused.is_error and "permission_denied" in text(refused) and "only reads" in text(refused)


async def test_unknown_tool_is_a_protocol_error(loop: Loop) -> None:
    async with client(loop, Principal("default", "alice")) as mcp:
        with pytest.raises(Exception, match="unknown tool 'forget_everything'"):
            await mcp.call_tool("forget_everything", {})


async def test_bearer_middleware_hands_the_resolved_principal_to_the_server() -> None:
    seen: list[Any] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.append(scope.get(PRINCIPAL_KEY))

    async def key_store(api_key: str) -> tuple[str, str | None, str] | None:
        # The shape a key store returns: (tenant, user or None, scope), looked up asynchronously.
        return ("beta", None, "read") if api_key == "k-beta" else None

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    middleware = BearerAuth(app, key_store)  # type: ignore[arg-type]
    await middleware({"type": "http", "headers": [(b"authorization", b"Bearer k-beta")]}, None, send)  # type: ignore[arg-type]
    assert seen == [Principal("beta", None, "read")] and not seen[0].can_write
    await middleware({"type": "http", "headers": [(b"authorization", b"Bearer nope")]}, None, send)  # type: ignore[arg-type]
    await middleware({"type": "http", "headers": []}, None, send)  # type: ignore[arg-type]
    assert len(seen) == 1 and [m["status"] for m in sent if "status" in m] == [401, 401]


async def test_shared_secret_maps_to_the_configured_identity() -> None:
    resolve = shared_secret("s3cret", "acme", "alice")
    assert await resolve_key(resolve, "s3cret") == Principal("acme", "alice", "write")
    assert await resolve_key(resolve, "s3cret ") is None


def test_only_a_tenant_wide_key_may_name_the_user_it_acts_for() -> None:
    tenant_wide = Principal("acme", None, "write")
    assert acting_for(tenant_wide, "carol") == Principal("acme", "carol", "write")
    assert acting_for(tenant_wide, GLOBAL_USER) == Principal("acme", None, "write", shared=True)
    assert acting_for(Principal("acme", "bob"), "bob") == Principal("acme", "bob")
    # Another user is as missing as a user who does not exist (REST answers 404), never "forbidden".
    with pytest.raises(NotFound, match="user 'carol' not found"):
        acting_for(Principal("acme", "bob"), "carol")
    with pytest.raises(NotFound):
        acting_for(Principal("acme", "bob"), GLOBAL_USER)
    with pytest.raises(ValidationError):
        acting_for(tenant_wide, "carol smith; drop table")


async def test_another_users_data_reads_as_not_found_over_the_middleware(loop: Loop) -> None:
    """A user-bound key naming someone else is let through, and every tool call answers "not found"."""
    seen: list[Any] = []
    sent: list[dict[str, Any]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.append(scope.get(PRINCIPAL_KEY))

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    headers = [(b"authorization", b"Bearer k-bob"), (b"x-learnloop-user", b"alice")]
    # Where the app cannot answer for itself, the middleware says "not found", never "forbidden".
    await BearerAuth(app, shared_secret("k-bob", "default", "bob"))(  # type: ignore[arg-type]
        {"type": "http", "headers": headers},
        None,
        send,  # type: ignore[arg-type]
    )
    assert seen == [] and [m["status"] for m in sent if "status" in m] == [404]
    sent.clear()
    # LearnloopMCP lets the request through and answers every tool call with "not found".
    middleware = BearerAuth(app, shared_secret("k-bob", "default", "bob"), defer_unknown_user=True)  # type: ignore[arg-type]
    await middleware({"type": "http", "headers": headers}, None, send)  # type: ignore[arg-type]
    assert sent == [] and seen == [Principal("default", "bob", "write", unknown_user="alice")]

    await loop.save("Alice's kettle holds 40 L", user="alice", category="equipment", status="verified")
    async with client(loop, seen[0]) as mcp:
        for tool, arguments in (
            ("list_learnings", {}),
            ("recall", {"query": "kettle"}),
            ("save_learning", {"learning": "Alice's kettle holds 41 L", "category": "equipment"}),
            ("deprecate_learning", {"id": 1, "reason": "x"}),
        ):
            result = await mcp.call_tool(tool, arguments)
            assert result.is_error and "not_found" in text(result) and "user 'alice' not found" in text(result)
            assert "permission" not in text(result) and "40 L" not in text(result)
    assert (await loop.list(user="alice")).total == 1  # nothing was saved for her

    # A malformed user from a tenant-wide key is the caller's mistake: 400, not a silent global.
    await BearerAuth(app, shared_secret("k-app", "default", None))(  # type: ignore[arg-type]
        {"type": "http", "headers": [(b"authorization", b"Bearer k-app"), (b"x-learnloop-user", b"a b")]},
        None,  # type: ignore[arg-type]
        send,
    )
    assert [m["status"] for m in sent if "status" in m] == [400] and len(seen) == 1


async def test_a_tenant_wide_caller_names_the_user_or_global_before_writing(loop: Loop) -> None:
    alice = await loop.save("Alice mashes at 65 C", user="alice", category="technique", status="verified")
    shared = await loop.save("The club mill gap is 1.0 mm", user=None, category="equipment", status="verified")
    assert alice.learning is not None and shared.learning is not None

    async with client(loop, Principal("default", None)) as anyone:  # an app key without X-Learnloop-User
        refused = await anyone.call_tool("save_learning", {"learning": "Mash at 67 C", "category": "technique"})
        assert refused.is_error and "user_required" in text(refused) and GLOBAL_USER in text(refused)
        for tool in ("deprecate_learning", "confirm_learning"):
            result = await anyone.call_tool(tool, {"id": shared.learning.id, "reason": "r"})
            assert result.is_error and "user_required" in text(result)
        # Reads see what recall sees: the global learnings, never every user's own.
        listed = structured(await anyone.call_tool("list_learnings", {}))
        assert [item["id"] for item in listed["items"]] == [shared.learning.id]
    assert (await loop.list(text="67")).total == 0 and (await loop.get(shared.learning.id)).status == "verified"

    async with client(loop, Principal("default", None, shared=True)) as everyone:  # X-Learnloop-User: *global*
        saved = await everyone.call_tool(
            "save_learning", {"learning": "The club kettle is 50 L", "category": "equipment"}
        )
        assert not saved.is_error, text(saved)
        assert (await loop.get(structured(saved)["learning_id"])).user is None
        # Global means the global learnings: a user's own is out of reach, though the scope is tenant-wide.
        hidden = await everyone.call_tool("deprecate_learning", {"id": alice.learning.id, "reason": "not yours"})
        assert hidden.is_error and "not found" in text(hidden)
        assert (await loop.get(alice.learning.id)).status == "verified"
        done = await everyone.call_tool("deprecate_learning", {"id": shared.learning.id, "reason": "new mill"})
        assert not done.is_error and structured(done)["status"] == "deprecated"


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("deprecate_learning", {"id": 2**70, "reason": "x"}, f"'id' must be at most {2**53}"),
        ("confirm_learning", {"id": str(2**70)}, f"'id' must be at most {2**53}"),
        ("list_learnings", {"offset": 2**70}, f"'offset' must be at most {2**53}"),
    ],
)
async def test_huge_integers_are_argument_errors(
    loop: Loop, tool: str, arguments: dict[str, Any], message: str
) -> None:
    async with client(loop, Principal("default", "alice")) as mcp:
        result = await mcp.call_tool(tool, arguments)
    assert result.is_error and message in text(result), text(result)


async def test_confirming_a_verified_learning_raises_its_confidence(loop: Loop) -> None:
    """The README says confirm_learning raises confidence; on a verified learning it was an error."""
    saved = await loop.save("Alice's kettle holds 30 litres", user="alice", category="equipment", status="verified")
    assert saved.learning is not None
    async with client(loop, Principal("default", "alice")) as mcp:
        first = await mcp.call_tool("confirm_learning", {"id": saved.learning.id})
        second = await mcp.call_tool("confirm_learning", {"id": saved.learning.id, "reason": "still right"})
    assert not first.is_error and not second.is_error, text(first)
    assert structured(first)["status"] == "verified" and structured(first)["confidence"] >= 0.9
    assert structured(second)["confidence"] > structured(first)["confidence"]
