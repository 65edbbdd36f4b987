"""Issue 17 and the proxy: a downstream server that cannot start is named in one line (or skipped when optional),
a search adds only the few relevant hits to the list, and a failing call comes back with the recovery that
worked before."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from .test_proxy import ALL_TOOLS, OWN, SERVERS, names, proxy_params

pytestmark = [pytest.mark.slow]

BROKEN = {"command": sys.executable, "args": ["-c", "import sys; sys.exit(3)"]}


def _config(tmp_path: Path, **extra: dict[str, object]) -> Path:
    servers: dict[str, object] = {
        name: {"command": sys.executable, "args": [str(SERVERS / f"{name}.py")]} for name in ("weather", "shop")
    }
    servers.update(extra)
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": servers, "learnloop": {"k": 3}}), "utf-8")
    return path


def test_a_downstream_that_cannot_start_is_named_in_one_line(tmp_path: Path) -> None:
    config = _config(tmp_path, broken=BROKEN)
    done = subprocess.run(
        [sys.executable, "-m", "learnloop", "--db", str(tmp_path / "p.db"), "proxy", "--config", str(config)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines and lines[-1].startswith("Error: downstream MCP server 'broken' (")
    assert "could not be started" in lines[-1]
    assert "Traceback" not in done.stderr and "ExceptionGroup" not in done.stderr


async def test_an_optional_downstream_that_cannot_start_is_skipped(tmp_path: Path) -> None:
    config = _config(tmp_path, broken={**BROKEN, "optional": True})
    async with Client(proxy_params(config, tmp_path / "p.db"), mode="legacy") as client:
        await client.call_tool("set_context", {"query": "will it rain in Paris tomorrow?"})
        assert "get_forecast" in await names(client)


async def test_search_adds_only_relevant_hits_and_failures_carry_the_learned_recovery(tmp_path: Path) -> None:
    config = _config(tmp_path)
    async with Client(proxy_params(config, tmp_path / "p.db"), mode="legacy") as client:
        await client.call_tool("set_context", {"query": "will it rain in Paris tomorrow?"})
        before = await names(client)
        found = await client.call_tool("search_available_tools", {"query": "refund a customer's order"})
        hits = [t["name"] for t in json.loads(found.content[0].text)]  # type: ignore[union-attr]
        assert hits[0] == "refund_order" and len(hits) <= 3
        after = await names(client)
        assert "refund_order" in after and len(after - before) <= 3
        assert after - OWN < ALL_TOOLS | {"weather__status", "shop__status"}

        await client.call_tool("set_context", {"query": "top selling products this month"})
        first = await client.call_tool("shop_analytics", {"resource": "products", "sort_key": "REVENUE"})
        assert first.is_error and len(first.content) == 1  # nothing learned yet: the tool's own answer only
        fixed = await client.call_tool("shop_analytics", {"resource": "products", "sort_key": "BEST_SELLING"})
        assert not fixed.is_error

        await client.call_tool("set_context", {"query": "best selling products last week"})
        again = await client.call_tool("shop_analytics", {"resource": "products", "sort_key": "REVENUE"})
        assert again.is_error
        texts = [c.text for c in again.content]  # type: ignore[union-attr]
        assert "Invalid sort key REVENUE" in texts[0]  # the tool's answer, unchanged
        assert texts[-1].startswith("learnloop: this call failed like this before")
        assert "Changed sort_key from 'REVENUE' to 'BEST_SELLING'" in texts[-1]
