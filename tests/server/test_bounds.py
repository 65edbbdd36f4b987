"""Integers in requests: every one the API accepts is bounded in its OpenAPI spec, and huge ones are answered
with a 422, never a 500 (SQLite integers are 64-bit; Python's are not)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from learnloop.engine import Engine
from learnloop.loop import Loop
from learnloop.server import create_app
from learnloop.stores.sqlite import SQLiteStore
from tests.server.conftest import RunningServer, error_of

HUGE = 2**70


def _spec() -> dict[str, Any]:
    from learnloop.embedders.static import StaticMiniLM  # nothing is loaded until a text is embedded

    embedder = StaticMiniLM()
    store = SQLiteStore(":memory:", embedding_model=embedder.model_id, dimension=embedder.dimension)
    return create_app(Loop(Engine(store=store, embedder=embedder))).openapi()


def _integers(schema: dict[str, Any], spec: dict[str, Any], where: str, seen: frozenset[str]) -> Iterator[str]:
    """Where an integer without a maximum can appear in `schema` (following $refs, once each)."""
    ref = schema.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if name not in seen:
            yield from _integers(spec["components"]["schemas"][name], spec, f"{where}<{name}>", seen | {name})
        return
    if schema.get("type") == "integer" and "maximum" not in schema and "exclusiveMaximum" not in schema:
        yield where
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key, []):
            yield from _integers(sub, spec, where, seen)
    for name, sub in schema.get("properties", {}).items():
        yield from _integers(sub, spec, f"{where}.{name}", seen)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            yield from _integers(schema[key], spec, f"{where}[]", seen)


def test_every_integer_a_request_carries_is_bounded() -> None:
    spec = _spec()
    unbounded: list[str] = []
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            for parameter in operation.get("parameters", []):
                where = f"{method.upper()} {path} {parameter['in']}:{parameter['name']}"
                unbounded += _integers(parameter.get("schema", {}), spec, where, frozenset())
            for media in operation.get("requestBody", {}).get("content", {}).values():
                unbounded += _integers(media.get("schema", {}), spec, f"{method.upper()} {path} body", frozenset())
    assert unbounded == []


@pytest.mark.server
@pytest.mark.parametrize(
    ("method", "path", "request_args"),
    [
        ("GET", "/api/knowledge/pages", {"params": {"offset": HUGE}}),
        ("GET", "/api/learnings", {"params": {"offset": HUGE}}),
        ("GET", f"/api/learnings/{HUGE}", {}),
        ("GET", "/api/events", {"params": {"after": HUGE}}),
        ("POST", "/api/interactions", {"json": {"session": "s", "user": "una", "user_query": "q", "turn": HUGE}}),
        ("POST", "/api/observe", {"json": {"user_message": "hi", "user": "una", "retrieved_ids": [HUGE]}}),
    ],
)
def test_huge_integers_are_a_422(service: RunningServer, method: str, path: str, request_args: dict[str, Any]) -> None:
    with service.client(service.key("bounds", "admin")) as c:
        response = c.request(method, path, **request_args)
    assert response.status_code == 422, response.text
    assert error_of(response)["code"] == "validation_error"
