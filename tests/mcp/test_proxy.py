"""The learning MCP proxy, driven by the official `mcp` client, in front of two real stdio MCP servers."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import Client, MCPError, StdioServerParameters

import learnloop
from learnloop.mcp.downstream import load_config
from learnloop.tools import SignalKind, Strength

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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
async def test_the_proxy_serves_streamable_http(config: Path, tmp_path: Path) -> None:
    port = free_port()
    command = [sys.executable, "-m", "learnloop", "proxy", "--config", str(config), "--http", "--port", str(port)]
    url = f"http://127.0.0.1:{port}/mcp"
    async with await anyio.open_process(command, env={"LEARNLOOP_DB": str(tmp_path / "http.db")}) as process:
        try:
            async with httpx.AsyncClient() as http:
                with anyio.fail_after(60):
                    while True:
                        try:
                            await http.get(url, timeout=0.5)
                            break
                        except httpx.HTTPError:
                            await anyio.sleep(0.2)
            async with Client(url, mode="legacy") as client:
                await client.call_tool("set_context", {"query": "sunset time in Lisbon today"})
                assert "sunrise_times" in await names(client)
                result = await client.call_tool("sunrise_times", {"city": "Lisbon"})
                assert result.content[0].text == "Lisbon: sunrise 06:12, sunset 20:41"  # type: ignore[union-attr]
        finally:
            process.terminate()
            with anyio.fail_after(30):
                await process.wait()


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
