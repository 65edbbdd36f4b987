"""Property-based API testing against the OpenAPI spec: schemathesis generates valid and invalid requests
for every operation (a few hundred cases in all); the service must never answer with a 5xx.

Half the generated bodies and query strings also carry hostile input (`tests.support.hostile`: lone
surrogates, NUL, control characters, RTL and zero-width text, 1 MB tokens, deep JSON) in one of their
strings. A request carrying any is sent again on a connection of its own, followed by another request on the
same connection: it must get a 4xx (or a result), and the next request must work.

Runs with an admin key of a tenant of its own, so generated deletes and vocabulary changes harm nothing
else. The event stream is left out: it never ends by design (its own tests cover it).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from learnloop.textcheck import first_problem
from tests.server.conftest import RunningServer
from tests.support.hostile import deep_json, hostile_text
from tests.support.keepalive import OneConnection

pytestmark = pytest.mark.server

TENANT = "fuzz"
EXAMPLES = 10
OUTPUT = Path(__file__).resolve().parents[2] / "test-output" / "schemathesis.json"
_calls: Counter[str] = Counter()


@pytest.fixture(scope="module")
def fuzz_key(service: RunningServer) -> str:
    key = service.key(TENANT, "admin")
    # Something to find, so that ids and users in generated requests sometimes exist.
    for n in range(3):
        service.save(key, f"Fuzz fact number {n}: the kettle holds {30 + n} litres", "equipment", f"user{n}")
    return key


@schemathesis.serializer("application/x-ndjson")
def _ndjson(ctx: Any, value: Any) -> bytes:
    """Import bodies: generated strings as they are (lone surrogates become invalid UTF-8, also worth sending)."""
    return value.encode("utf-8", "surrogatepass") if isinstance(value, str) else json.dumps(value).encode()


def _spec() -> dict[str, Any]:
    """The spec the server serves, built from the same code without starting anything. (schemathesis's
    lazy fixture loader does not work with pytest 9, so the schema is loaded at import time.)"""
    from learnloop.embedders.static import StaticMiniLM  # nothing is loaded until a text is embedded
    from learnloop.engine import Engine
    from learnloop.loop import Loop
    from learnloop.server import create_app
    from learnloop.stores.sqlite import SQLiteStore

    embedder = StaticMiniLM()
    store = SQLiteStore(":memory:", embedding_model=embedder.model_id, dimension=embedder.dimension)
    return create_app(Loop(Engine(store=store, embedder=embedder))).openapi()


schema = schemathesis.openapi.from_dict(_spec()).exclude(path="/api/events")
schema.config.generation.update(
    modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE], max_examples=EXAMPLES, database="none"
)


def _string_paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, str):
        return [path]
    if isinstance(value, dict):
        return [p for key, sub in value.items() for p in _string_paths(sub, (*path, key))]
    if isinstance(value, list):
        return [p for index, sub in enumerate(value) for p in _string_paths(sub, (*path, index))]
    return []


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replaced(value[head], rest, new)}
    copied = list(value)
    copied[head] = _replaced(copied[head], rest, new)
    return copied


def _with_hostile_string(value: Any, hostile: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    paths = _string_paths(value)
    if not paths:
        return st.just(value)
    return st.tuples(st.sampled_from(paths), hostile).map(lambda chosen: _replaced(value, chosen[0], chosen[1]))


_IN_BODIES = st.one_of(hostile_text, st.sampled_from([100, 500]).map(deep_json))
# A URL cannot carry a lone surrogate (no client can percent-encode one) and its length is the HTTP parser's
# business up to MAX_REQUEST_HEAD_BYTES: a 1 MB token, in ASCII, is the longest sent.
_IN_QUERIES = hostile_text.filter(lambda t: not any(0xD800 <= ord(c) <= 0xDFFF for c in t)).filter(
    lambda t: len(quote(t, safe="")) <= 1_500_000
)


@schema.hook
def flatmap_body(context: Any, body: Any) -> st.SearchStrategy[Any]:
    return st.one_of(st.just(body), _with_hostile_string(body, _IN_BODIES))


@schema.hook
def flatmap_query(context: Any, query: dict[str, Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.just(query), _with_hostile_string(query, _IN_QUERIES))


def _hostile(case: Any) -> bool:
    carried = [case.body, case.query]
    return first_problem(carried, "") is not None or len(json.dumps(carried, default=str)) > 20_000


def _same_connection_survives(case: Any, service: RunningServer, key: str) -> None:
    """Send the case again on a connection of its own, then a request that must work on that connection."""
    sent = case.as_transport_kwargs(base_url=service.url, headers={"Authorization": f"Bearer {key}"})
    parts = urlsplit(sent["url"])
    query = urlencode(sent.get("params") or {}, doseq=True)
    target = parts.path + (f"?{query}" if query else "")
    if "json" in sent:
        body: bytes | None = json.dumps(sent["json"]).encode()
    else:
        data = sent.get("data")
        body = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    headers = {k: str(v) for k, v in (sent.get("headers") or {}).items() if k.lower() != "authorization"}
    with OneConnection(service.url, key) as conn:
        answer = conn.request(sent["method"], target, body, headers)
        assert answer.status < 500, f"{sent['method']} {target} → {answer.status}: {answer.body[:300]!r}"
        assert conn.get("/api/me").status == 200


@schema.parametrize()
@settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None
)
def test_no_server_errors(case: Any, service: RunningServer, fuzz_key: str) -> None:
    response = case.call(base_url=service.url, headers={"Authorization": f"Bearer {fuzz_key}"}, timeout=30)
    _calls[f"{case.method} {case.path}"] += 1
    _calls[f"status {response.status_code // 100}xx"] += 1
    assert response.status_code < 500, f"{case.method} {case.formatted_path} → {response.status_code}: {response.text}"
    if response.status_code >= 400:
        body = response.json()
        assert set(body) == {"error"} and {"code", "message"} <= set(body["error"]), body
    if _hostile(case) and response.status_code != 413:  # a 413 ends its connection: the body was never read
        _calls["hostile"] += 1
        _same_connection_survives(case, service, fuzz_key)


def test_zz_enough_cases_ran() -> None:
    """Runs after the generated tests (file order): a few hundred cases, none a 5xx."""
    operations = {k: v for k, v in _calls.items() if not k.startswith("status") and k != "hostile"}
    total = sum(operations.values())
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(
        json.dumps(
            {
                "cases": total,
                "operations": operations,
                "statuses": {k: v for k, v in _calls.items() if k.startswith("status")},
                "hostile": _calls["hostile"],
            },
            indent=2,
        )
    )
    if not operations:
        pytest.skip("the generated tests were not selected in this run")
    assert total >= 250, operations
    assert _calls["status 5xx"] == 0
    assert _calls["hostile"] >= 50, _calls["hostile"]
