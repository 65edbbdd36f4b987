"""`learnloop mcp` end to end: the official `mcp` Python client against the server in a subprocess, over stdio and
over streamable HTTP, on a real SQLite file with the real local embedding model."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import mcp_types as types
import pytest
from mcp.client.client import Client

import learnloop

from .test_server_harness import (
    BOIL,
    CANDIDATE,
    CATEGORIES,
    KEY,
    SECRET,
    TENANT,
    TOOLS,
    USER,
    HttpServer,
    http_client,
    http_server,
    seed_candidate,
    stdio_client,
    structured,
    text,
)

pytestmark = [pytest.mark.slow]

RESOURCE = "learnloop://prompts/proactive-learning"


# -- what every transport must do (one client = one session) ---------------------------------------------------


async def check_tool_list(client: Client) -> None:
    listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert list(listed) == TOOLS
    save = listed["save_learning"].input_schema
    assert save["required"] == ["learning", "category"]
    assert save["properties"]["category"]["enum"] == CATEGORIES
    assert listed["recall"].input_schema["required"] == ["query"]
    assert listed["recall"].output_schema is not None
    assert listed["deprecate_learning"].input_schema["required"] == ["id", "reason"]
    assert listed["recall"].annotations is not None and listed["recall"].annotations.read_only_hint


async def save_boil(client: Client) -> int:
    result = await client.call_tool("save_learning", {"learning": BOIL, "category": "fact", "source_context": "brew"})
    assert not result.is_error, text(result)
    data = structured(result)
    assert data["ok"] is True and data["action"] == "created"
    assert text(result) == f"Saved learning #{data['learning_id']} (fact)."
    return int(data["learning_id"])


async def check_recall(client: Client, learning_id: int) -> None:
    result = await client.call_tool("recall", {"query": "How much water boils off in a 60 minute boil?"})
    assert not result.is_error, text(result)
    data = structured(result)
    assert isinstance(result.content[0], types.TextContent)
    assert result.content[0].text == data["block"]  # the block, as the model should see it
    assert f'- [verified/fact] "{BOIL}"' in data["block"]
    [item] = [i for i in data["items"] if i["id"] == learning_id]
    assert item["text"] == BOIL and item["owner"] == USER and item["status"] == "verified"
    assert f"#{learning_id}" in text(result)  # ids for confirm/deprecate, which the block does not carry


async def check_refusals(client: Client) -> None:
    secret = await client.call_tool("save_learning", {"learning": SECRET, "category": "fact"})
    assert secret.is_error
    assert "AWS Access Key" in text(secret) and "secret.ds.aws" in text(secret)
    assert structured(secret)["action"] == "refused" and structured(secret)["rule"] == "secret.ds.aws"
    bad = await client.call_tool("save_learning", {"learning": "The mill gap is 1.1 mm", "category": "gear"})
    assert bad.is_error and "allowed: preference, fact, procedure, correction" in text(bad)
    listed = await client.call_tool("list_learnings", {"text": "AKIAQ7ZKX4J2M5RTWB6N"})
    assert structured(listed)["total"] == 0  # nothing of the refused call was kept


async def check_confirm_and_deprecate(client: Client, candidate_id: int) -> None:
    confirmed = await client.call_tool("confirm_learning", {"id": candidate_id, "reason": "it worked"})
    assert not confirmed.is_error, text(confirmed)
    assert structured(confirmed)["status"] == "verified" and structured(confirmed)["confidence"] >= 0.9
    deprecated = await client.call_tool("deprecate_learning", {"id": candidate_id, "reason": "she mashes at 64 C now"})
    assert not deprecated.is_error, text(deprecated)
    assert structured(deprecated)["status"] == "deprecated"
    recalled = await client.call_tool("recall", {"query": "What mash temperature does Alice use for pale ales?"})
    assert candidate_id not in [i["id"] for i in structured(recalled)["items"]]
    again = await client.call_tool("confirm_learning", {"id": candidate_id})
    assert again.is_error and "deprecated" in text(again)  # only a person brings a learning back
    missing = await client.call_tool("deprecate_learning", {"id": 99999, "reason": "no such thing"})
    assert missing.is_error and "not found" in text(missing)
    listed = await client.call_tool("list_learnings", {"status": "deprecated"})
    assert [i["text"] for i in structured(listed)["items"]] == [CANDIDATE]


async def check_prompt_section(client: Client) -> None:
    assert [r.uri for r in (await client.list_resources()).resources] == [RESOURCE]
    [contents] = (await client.read_resource(RESOURCE)).contents
    assert isinstance(contents, types.TextResourceContents) and contents.mime_type == "text/markdown"
    assert contents.text.startswith("## Proactive Learning") and "`save_learning`" in contents.text
    assert "preference, fact, procedure, correction" in contents.text
    assert [p.name for p in (await client.list_prompts()).prompts] == ["proactive_learning"]
    assert text(await client.get_prompt("proactive_learning")) == contents.text


# -- stdio -----------------------------------------------------------------------------------------------------


async def test_stdio_save_then_recall_in_a_fresh_session(tmp_path: Path) -> None:
    db = tmp_path / "stdio.db"
    async with stdio_client(db) as first:
        await check_tool_list(first)
        learning_id = await save_boil(first)
    # A new client starts a new server process; the handshake-era protocol covers older clients too.
    async with stdio_client(db, mode="legacy") as second:
        assert second.protocol_version < "2026"
        await check_recall(second, learning_id)


async def test_stdio_refusals_corrections_and_the_prompt_section(tmp_path: Path) -> None:
    db = tmp_path / "stdio.db"
    candidate_id = await seed_candidate(db)
    async with stdio_client(db) as client:
        await check_refusals(client)
        await check_confirm_and_deprecate(client, candidate_id)
        await check_prompt_section(client)


# -- streamable HTTP -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcp-http") / "http.db"


@pytest.fixture(scope="module")
def api_keys(db: Path) -> dict[str, str]:
    """Keys of the service's key store (what `learnloop keys create` makes), written before the server starts."""
    from learnloop.server.keys import issue_key
    from learnloop.server.state import service_store_for

    issued = {"bob": issue_key(TENANT, "user", user="bob"), "cellar": issue_key("cellar", "app")}

    async def store() -> None:
        async with learnloop.open(str(db), tenant=TENANT) as loop:
            await loop.engine.ensure_started()
            for item in issued.values():
                await service_store_for(loop).create_key(item.record)

    asyncio.run(store())
    return {name: item.key for name, item in issued.items()}


@pytest.fixture(scope="module")
def server(db: Path, api_keys: dict[str, str]) -> Iterator[HttpServer]:
    with http_server(db) as running:
        yield running


@pytest.mark.server
def test_http_needs_the_api_key(server: HttpServer, api_keys: dict[str, str]) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream"}
    missing = httpx.post(server.url, json=body, headers=headers)
    assert missing.status_code == 401 and missing.headers["www-authenticate"].startswith("Bearer")
    wrong = httpx.post(server.url, json=body, headers={**headers, "Authorization": "Bearer not-the-key"})
    assert wrong.status_code == 401 and wrong.json()["error"]["message"] == "unknown API key"
    # A malformed user header is the caller's mistake.
    malformed = {**headers, "Authorization": f"Bearer {api_keys['cellar']}", "X-Learnloop-User": "a b"}
    assert httpx.post(server.url, json=body, headers=malformed).status_code == 400


@pytest.mark.server
async def test_http_another_users_data_is_not_found_and_tenant_wide_writes_name_their_user(
    server: HttpServer, api_keys: dict[str, str]
) -> None:
    # A user-bound key acts for its own user only: naming another reads as "not found", never "forbidden".
    async with http_client(server.url, api_keys["bob"], user=USER) as as_alice:
        listed = await as_alice.call_tool("list_learnings", {})
        assert listed.is_error and f"user '{USER}' not found" in text(listed) and "permission" not in text(listed)
    # A tenant-wide key without a user may not write: the save would reach every user of the tenant.
    async with http_client(server.url, api_keys["cellar"]) as anyone:
        refused = await anyone.call_tool("save_learning", {"learning": "The cellar is at 12 C", "category": "fact"})
        assert refused.is_error and "user_required" in text(refused)
    async with http_client(server.url, api_keys["cellar"], user="*global*") as everyone:
        kept = await everyone.call_tool("save_learning", {"learning": "The cellar is at 12 C", "category": "fact"})
        assert not kept.is_error, text(kept)
        listed = await everyone.call_tool("list_learnings", {})
        assert {item["owner"] for item in structured(listed)["items"]} == {None}  # no user's own learnings


@pytest.mark.server
async def test_http_save_then_recall_in_a_fresh_session(server: HttpServer, db: Path) -> None:
    # Saved over the handshake-era protocol, whose HTTP sessions have ids; recalled over the 2026 one.
    async with http_client(server.url, mode="legacy") as first:
        await check_tool_list(first)
        learning_id = await save_boil(first)
    async with http_client(server.url) as second:
        await check_recall(second, learning_id)
    # The key's tenant and user own what was saved.
    async with learnloop.open(str(db), tenant=TENANT) as loop:
        stored = await loop.get(learning_id)
    assert (stored.tenant, stored.user, stored.origin.value) == (TENANT, USER, "tool")
    assert stored.source.session is not None  # the MCP session it came from
    assert not any(KEY in line for line in server.log)  # the key is never logged


@pytest.mark.server
async def test_http_refusals_corrections_and_the_prompt_section(server: HttpServer, db: Path) -> None:
    candidate_id = await seed_candidate(db)
    async with http_client(server.url) as client:
        await check_refusals(client)
        await check_confirm_and_deprecate(client, candidate_id)
        await check_prompt_section(client)


@pytest.mark.server
async def test_http_keys_from_the_key_store_carry_their_tenant_and_user(
    server: HttpServer, db: Path, api_keys: dict[str, str]
) -> None:
    lager = "Bob ferments his lagers at 10 C for three weeks"
    async with http_client(server.url, api_keys["bob"]) as bob:
        listed = await bob.call_tool("list_learnings", {})
        assert {item["owner"] for item in structured(listed)["items"]} <= {"bob", None}  # not alice's
        saved = await bob.call_tool("save_learning", {"learning": lager, "category": "procedure"})
        assert not saved.is_error, text(saved)
    # A tenant-wide (app) key names the user it acts for in a header.
    brie = "Carol keeps her brie at 8 C and eats it within a week"
    async with http_client(server.url, api_keys["cellar"], user="carol") as carol:
        kept = await carol.call_tool("save_learning", {"learning": brie, "category": "fact"})
        assert not kept.is_error, text(kept)
    async with learnloop.open(str(db), tenant=TENANT) as loop:
        by_bob = await loop.get(structured(saved)["learning_id"])
        by_carol = await loop.for_tenant("cellar").get(structured(kept)["learning_id"])
    assert (by_bob.tenant, by_bob.user, by_bob.text) == (TENANT, "bob", lager)
    assert (by_carol.tenant, by_carol.user, by_carol.text) == ("cellar", "carol", brie)
