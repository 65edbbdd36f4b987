"""Fuzz: hostile arguments through every tool of `learnloop mcp` (the official client, in process), and hostile
lines through the screening every MCP transport applies before the SDK parses a message.

Allowed outcomes: a tool result (an error result included) or a JSON-RPC error; never a crash or silence, and
the next call on the same session works.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.client.client import Client
from mcp.shared.exceptions import MCPError

import learnloop
from learnloop.embedders.base import Embedder
from learnloop.factory import build_engine
from learnloop.mcp.screening import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, screen
from learnloop.mcp.server import LearnloopMCP
from learnloop.mcp.server_auth import Principal
from learnloop.stores.sqlite import SQLiteStore
from tests.conftest import BREWING, _Shared
from tests.support.hostile import deep_json, hostile_text

pytestmark = pytest.mark.fuzz

TOOLS: dict[str, dict[str, Any]] = {
    "save_learning": {"learning": "The kettle holds 30 litres", "category": "equipment"},
    "recall": {"query": "how big is the kettle?"},
    "list_learnings": {"text": "kettle"},
    "confirm_learning": {"id": 1, "reason": "it worked"},
    "deprecate_learning": {"id": 1, "reason": "wrong"},
}


# The client cannot send JSON deeper than pydantic serialises (about 250 levels); deeper lines are fuzzed below,
# through the screening the transports apply.
_ARGUMENT = st.one_of(
    hostile_text,
    st.lists(hostile_text, max_size=3),
    # (the client itself cannot serialise a lone surrogate in a key; the screening below gets those)
    st.dictionaries(hostile_text.filter(lambda t: not any(0xD800 <= ord(c) <= 0xDFFF for c in t)), hostile_text),
    st.sampled_from([70, 200]).map(deep_json),
    st.sampled_from([None, True, 2**70, -1, 1.5, float("nan")]),
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[tuple[asyncio.Runner, Any]]:
    folder = tmp_path_factory.mktemp("fuzz-mcp")
    store = SQLiteStore(folder / "mcp.db", embedding_model=embedder.model_id, dimension=embedder.dimension)
    vocabulary = learnloop.Vocabulary.from_mapping(BREWING)
    engine = build_engine(store, _Shared(embedder), default_vocabulary=vocabulary)  # type: ignore[arg-type]
    loop = learnloop.Loop(engine)
    with asyncio.Runner() as runner:
        try:
            yield runner, LearnloopMCP(loop, Principal("default", "fuzz")).server
        finally:
            runner.run(loop.aclose())


async def _call_then_list(server: Any, tool: str, arguments: dict[str, Any]) -> set[str]:
    """One session: the hostile call, then a call that must work on the same session."""
    async with Client(server) as client:
        with contextlib.suppress(MCPError):
            result = await asyncio.wait_for(client.call_tool(tool, arguments), timeout=60)
            assert result.content, result  # an answer, error or not, that says something
        return {t.name for t in (await client.list_tools()).tools}


@settings(max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(tool=st.sampled_from(sorted(TOOLS)), data=st.data())
def test_hostile_arguments_through_every_tool(
    server: tuple[asyncio.Runner, Any], tool: str, data: st.DataObject
) -> None:
    runner, mcp_server = server
    arguments = dict(TOOLS[tool])
    name = data.draw(st.sampled_from([*arguments, "extra"]), label="argument")
    arguments[name] = data.draw(_ARGUMENT, label="value")
    assert "recall" in runner.run(_call_then_list(mcp_server, tool, arguments))


def _envelope(params: Any) -> bytes:
    message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "recall", "arguments": params}}
    return json.dumps(message, ensure_ascii=True).encode()


@settings(max_examples=400, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(
    line=st.one_of(
        hostile_text.map(lambda text: _envelope({"query": text})),
        _ARGUMENT.map(lambda value: _envelope({"query": value})),
        hostile_text.map(lambda text: text.encode("utf-8", "surrogatepass")),
        st.binary(max_size=200),
        st.sampled_from([b"[" * 100_000, b'{"jsonrpc": "2.0", "id": 1, "method": ' + b"[" * 5000 + b"]" * 5000 + b"}"]),
    )
)
def test_screening_answers_every_hostile_line(line: bytes) -> None:
    verdict = screen(line)
    if verdict.text is not None:
        assert verdict.error is None
        json.loads(verdict.text)  # what goes on to the SDK is plain JSON
        return
    if verdict.error is not None:
        assert verdict.error["jsonrpc"] == "2.0" and "id" in verdict.error
        assert verdict.error["error"]["code"] in (PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS)
