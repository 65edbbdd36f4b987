"""The learning MCP proxy, driven by the official `mcp` client, in front of two real stdio MCP servers."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import Client, MCPError, StdioServerParameters

import learnloop
from learnloop.mcp.downstream import load_config
from learnloop.mcp.proxy import DEFAULT_PORT, SessionTable
from learnloop.tools import SignalKind, Strength
from tests.mcp.test_server_harness import http_client

SERVERS = Path(__file__).resolve().parent / "servers"
ALL_TOOLS = {"get_forecast", "air_quality", "sunrise_times", "shop_analytics", "list_orders", "refund_order"}
OWN = {"set_context", "search_available_tools"}


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "servers.json"
    servers = {name: {"command": sys.executable, "args": [str(SERVERS / f"{name}.py")]} for name in ("weather", "shop")}
    path.write_text(json.dumps({"mcpServers": servers, "learnloop": {"k": 3}}), "utf-8")
    return path


def proxy_params(config: Path, db: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "learnloop", "proxy", "--config", str(config), *extra],
        env={"LEARNLOOP_DB": str(db)},
    )


class Notifications:
    def __init__(self) -> None:
        self.list_changed = 0
        self._arrived = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.list_changed += 1
            self._arrived.set()

    async def wait(self, count: int) -> None:
        with anyio.fail_after(10):
            while self.list_changed < count:
                await self._arrived.wait()
                self._arrived = anyio.Event()


async def names(client: Client) -> set[str]:
    return {t.name for t in (await client.list_tools(cache_mode="refresh")).tools}


@pytest.mark.slow
async def test_the_proxy_filters_forwards_learns_and_remembers(config: Path, tmp_path: Path) -> None:
    db = tmp_path / "proxy.db"
    seen = Notifications()
    async with Client(proxy_params(config, db), mode="legacy", message_handler=seen) as client:
        assert client.server_capabilities.tools is not None and client.server_capabilities.tools.list_changed
        first = await names(client)
        assert first >= OWN and len(first - OWN) == 3 and first - OWN < ALL_TOOLS | {"weather__status", "shop__status"}

        reply = await client.call_tool("set_context", {"query": "will it rain in Paris tomorrow?"})
        assert "get_forecast" in reply.content[0].text  # type: ignore[union-attr]
        await seen.wait(1)
        listed = await names(client)
        assert "get_forecast" in listed and len(listed - OWN) == 3

        forecast = await client.call_tool("get_forecast", {"city": "Paris"})
        assert not forecast.is_error and forecast.content[0].text == "Paris: sunny, 21 °C, light wind"  # type: ignore[union-attr]
        assert forecast.structured_content == {"result": "Paris: sunny, 21 °C, light wind"}

        found = await client.call_tool("search_available_tools", {"query": "refund a customer's order", "limit": 2})
        assert "refund_order" in [t["name"] for t in json.loads(found.content[0].text)]  # type: ignore[union-attr]
        await seen.wait(2)
        assert "refund_order" in await names(client)
        refunded = await client.call_tool("refund_order", {"order_id": "A7"})
        assert refunded.content[0].text == "order A7 refunded"  # type: ignore[union-attr]

        await client.call_tool("set_context", {"query": "top selling products this month"})
        wrong = await client.call_tool("shop_analytics", {"resource": "products", "sort_key": "REVENUE"})
        assert wrong.is_error and "Invalid sort key REVENUE" in wrong.content[0].text  # type: ignore[union-attr]
        right = await client.call_tool("shop_analytics", {"resource": "products", "sort_key": "BEST_SELLING"})
        assert not right.is_error

        with pytest.raises(MCPError):
            await client.call_tool("no_such_tool", {})

    async with learnloop.open(str(db)) as loop:
        tools = loop.tools
        signals = await tools.signals(limit=1000)
        assert {s.kind for s in signals} == {SignalKind.LIST, SignalKind.CALL, SignalKind.SEARCH}
        calls = {s.tool: s for s in signals if s.kind is SignalKind.CALL}
        assert calls["get_forecast"].strength is Strength.STRONG
        assert calls["refund_order"].strength is Strength.DISCOVERY  # listed only because a search found it
        assert calls["shop_analytics"].ok is True
        [pattern] = await tools.recovery_patterns()
        assert pattern.description == "Changed sort_key from 'REVENUE' to 'BEST_SELLING'"
        assert {t.name for t in await tools.catalog()} == ALL_TOOLS | {"weather__status", "shop__status"}
        before_restart = len(signals)

    # A new proxy process on the same file starts from what the first one learned.
    async with Client(proxy_params(config, db), mode="legacy") as client:
        await client.call_tool("set_context", {"query": "top selling products this month"})
        wrong = await client.call_tool("shop_analytics", {"resource": "products", "sort_key": "REVENUE"})
        assert wrong.is_error
    async with learnloop.open(str(db)) as loop:
        assert len(await loop.tools.signals(limit=1000)) > before_restart
        routed = await loop.tools.route("will it rain in Paris tomorrow?", 1)
        assert routed[0].name == "get_forecast" and routed[0].learned > 0
        suggestion = await loop.tools.suggest_recovery(
            "shop_analytics", {"resource": "products", "sort_key": "REVENUE"}, "Invalid sort key REVENUE for products"
        )
        assert suggestion is not None and suggestion.recovery_params["sort_key"] == "BEST_SELLING"


@pytest.mark.slow
async def test_the_2026_protocol_gets_list_changed_through_listen(config: Path, tmp_path: Path) -> None:
    async with Client(proxy_params(config, tmp_path / "modern.db")) as client:
        assert client.protocol_version == "2026-07-28"
        async with client.listen(tools_list_changed=True) as subscription:
            await client.call_tool("set_context", {"query": "air pollution near zip 94103"})
            with anyio.fail_after(10):
                event = await subscription.__anext__()
        assert type(event).__name__ == "ToolsListChanged"
        assert "air_quality" in await names(client)


KEY = "proxy-shared-secret-9d2e"


async def service_keys(db: Path) -> dict[str, str]:
    """Keys of the service's key store (`learnloop keys create`): a user key of the proxy's tenant, and an app
    key of another tenant."""
    from learnloop.server.keys import issue_key
    from learnloop.server.state import service_store_for

    issued = {"bob": issue_key("default", "user", user="bob"), "cellar": issue_key("cellar", "app")}
    async with learnloop.open(str(db)) as loop:
        await loop.engine.ensure_started()
        for item in issued.values():
            await service_store_for(loop).create_key(item.record)
    return {name: item.key for name, item in issued.items()}


@asynccontextmanager
async def http_proxy(config: Path, db: Path, *extra: str) -> AsyncIterator[str]:
    """`learnloop proxy --http --port 0` in a subprocess; yields its URL once it says it is serving."""
    command = [sys.executable, "-m", "learnloop", "proxy", "--config", str(config), "--http", "--port", "0", *extra]
    async with await anyio.open_process(command, env={"LEARNLOOP_DB": str(db)}) as process:
        assert process.stderr is not None
        log, url = b"", None
        try:
            with anyio.fail_after(120):
                while url is None:
                    chunk = await process.stderr.receive()
                    log += chunk
                    for line in log.decode(errors="replace").splitlines():
                        if "serving on " in line:
                            url = line.split("serving on ", 1)[1].strip()
            async with anyio.create_task_group() as group:

                async def drain() -> None:  # a full stderr pipe would block the proxy
                    async for _ in process.stderr:  # type: ignore[union-attr]
                        pass

                group.start_soon(drain)
                yield url
                group.cancel_scope.cancel()
        finally:
            process.terminate()
            with anyio.fail_after(30):
                await process.wait()


@pytest.mark.slow
async def test_the_proxy_serves_streamable_http_to_key_holders_only(config: Path, tmp_path: Path) -> None:
    db = tmp_path / "http.db"
    keys = await service_keys(db)
    async with http_proxy(config, db, "--key", KEY) as url:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        headers = {"Accept": "application/json, text/event-stream"}
        async with httpx.AsyncClient() as http:
            missing = await http.post(url, json=body, headers=headers)
            assert missing.status_code == 401 and missing.headers["www-authenticate"].startswith("Bearer")
            for wrong in ("not-the-key", keys["cellar"]):  # a key of another tenant opens nothing here either
                refused = await http.post(url, json=body, headers={**headers, "Authorization": f"Bearer {wrong}"})
                assert refused.status_code == 401 and refused.json()["error"]["message"] == "unknown API key"
        async with http_client(url, KEY, mode="legacy") as client:
            await client.call_tool("set_context", {"query": "sunset time in Lisbon today"})
            assert "sunrise_times" in await names(client)
            result = await client.call_tool("sunrise_times", {"city": "Lisbon"})
            assert result.content[0].text == "Lisbon: sunrise 06:12, sunset 20:41"  # type: ignore[union-attr]
        async with http_client(url, keys["bob"], mode="legacy") as bob:
            await bob.call_tool("set_context", {"query": "will it rain in Paris tomorrow?"})
            assert not (await bob.call_tool("get_forecast", {"city": "Paris"})).is_error
    async with learnloop.open(str(db)) as loop:
        # A user key's calls are that user's signals; the shared secret stands for the configured user (none).
        bobs = await loop.tools.signals(user="bob", kind=SignalKind.CALL)
        assert [s.tool for s in bobs] == ["get_forecast"]
        calls = await loop.tools.signals(kind=SignalKind.CALL)
        assert {(s.tool, s.user) for s in calls} == {("sunrise_times", None), ("get_forecast", "bob")}


def test_the_proxy_port_is_its_own() -> None:
    assert DEFAULT_PORT not in (8765, 8766)  # `learnloop serve`, `learnloop mcp`


def test_sessions_are_bounded_and_idle_ones_expire() -> None:
    now = [0.0]
    table = SessionTable(limit=2, ttl=60.0, clock=lambda: now[0])
    first = table.get("a", "alice")
    assert table.get("a", "alice") is first and first.user == "alice"
    table.get("b", None)
    table.get("a", "alice")  # "a" is now the most recently used
    table.get("c", None)
    assert len(table) == 2 and "b" not in table and "a" in table  # the least recently used went
    now[0] = 30.0
    table.get("c", None)
    now[0] = 75.0  # "a" idle for 75 s, "c" for 45 s
    table.get("d", None)
    assert "a" not in table and "c" in table and "d" in table
    assert table.get("a", "alice") is not first  # a dropped session starts afresh


def test_config_errors_are_explained(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"mcpServers": {"x": {"command": "a", "url": "http://b"}}}), "utf-8")
    with pytest.raises(learnloop.ConfigurationError, match="exactly one of"):
        load_config(bad)
    bad.write_text("{}", "utf-8")
    with pytest.raises(learnloop.ConfigurationError, match="mcpServers"):
        load_config(bad)
    good = tmp_path / "good.json"
    good.write_text(
        json.dumps({"mcpServers": {"w": {"command": "python", "args": ["w.py"]}, "h": {"url": "http://h/mcp"}}}),
        "utf-8",
    )
    loaded = load_config(good)
    assert [s.name for s in loaded.servers] == ["w", "h"] and loaded.servers[1].url == "http://h/mcp"
