"""Property-based API testing against the OpenAPI spec: schemathesis generates valid and invalid requests
for every operation (a few hundred cases in all); the service must never answer with a 5xx.

Runs with an admin key of a tenant of its own, so generated deletes and vocabulary changes harm nothing
else. The event stream is left out: it never ends by design (its own tests cover it).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import GenerationMode

from tests.server.conftest import RunningServer

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


def test_zz_enough_cases_ran() -> None:
    """Runs after the generated tests (file order): a few hundred cases, none a 5xx."""
    operations = {k: v for k, v in _calls.items() if not k.startswith("status")}
    total = sum(operations.values())
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(
        json.dumps(
            {
                "cases": total,
                "operations": operations,
                "statuses": {k: v for k, v in _calls.items() if k.startswith("status")},
            },
            indent=2,
        )
    )
    if not operations:
        pytest.skip("the generated tests were not selected in this run")
    assert total >= 250, operations
    assert _calls["status 5xx"] == 0
