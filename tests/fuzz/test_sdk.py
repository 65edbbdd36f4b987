"""Fuzz: hostile text through every public SDK method (`Loop`, `loop.tools`, `loop.agent`).

Each method is found by introspection, so a method added later is fuzzed too. In every example one text argument
gets hostile text (`tests.support.hostile`) and the others ordinary values. Allowed outcomes: a result, or a
`LearnloopError`; anything else (a pydantic, tokenizer or sqlite error, a TypeError) fails. After each call the
loop must still answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import learnloop
from learnloop.embedders.base import Embedder
from learnloop.factory import build_engine
from learnloop.stores.sqlite import SQLiteStore
from tests.conftest import BREWING, _Shared
from tests.support.hostile import hostile_text

pytestmark = pytest.mark.fuzz

EXAMPLES = 25
# Not fuzzed, and why: closing ends the loop; the rest start, stop or wait for background workers.
SKIPPED = {"aclose", "start", "stop", "rehydrate", "reap_workers", "drain", "close", "flush"}
ORDINARY = {
    "user": "fuzz",
    "session": "s1",
    "namespace": "learning",
    "category": "equipment",
    "project": "fuzz",
    "tenant": "fuzz",
    "status": "candidate",
    "type": "fact",
    "origin": "person",
    "format": "openai",
    "actor": "person",
    "mode": "hashed",
}


def _textual(annotation: Any) -> str | None:
    """How a parameter takes text: 'str', 'list' or 'map'; None when it takes none."""
    text = str(annotation)
    if text.startswith(("Sequence[Mapping", "Sequence[PackageToolCall | Mapping", "list[dict")):
        return "maps"
    if "Mapping" in text or "dict" in text:
        return "map"
    if "Sequence[str]" in text or "list[str]" in text or "Iterable" in text:
        return "list"
    if ("str" in text and "Status" not in text) or text in ("Any",):
        return "str"
    return None


def _calls(target: object, name: str) -> tuple[inspect.Signature, list[str]]:
    signature = inspect.signature(getattr(target, name))
    textual = [
        p
        for p, param in signature.parameters.items()
        if _textual(param.annotation) and param.kind not in (param.VAR_KEYWORD, param.VAR_POSITIONAL)
    ]
    return signature, textual


def _arguments(signature: inspect.Signature, hostile_param: str, hostile: str) -> dict[str, Any]:
    arguments: dict[str, Any] = {}
    for name, param in signature.parameters.items():
        kind = _textual(param.annotation)
        if name == hostile_param:
            if kind == "list":
                arguments[name] = [hostile]
            elif kind == "maps":
                arguments[name] = [{"name": hostile, hostile: "x"}]
            elif kind == "map":
                arguments[name] = {"learning": hostile, hostile: "x", "category": "equipment"}
            else:
                arguments[name] = hostile
            continue
        if param.default is not inspect.Parameter.empty or param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
            continue
        annotation = str(param.annotation)
        if "Sequence[int]" in annotation or "list[int]" in annotation:
            arguments[name] = [1]
        elif "timedelta" in annotation:
            arguments[name] = timedelta(days=30)
        elif kind == "str":
            arguments[name] = ORDINARY.get(name, "The kettle holds 30 litres")
        elif kind == "list":
            arguments[name] = ["The kettle holds 30 litres"]
        elif kind == "map":
            arguments[name] = {"learning": "The kettle holds 30 litres", "category": "equipment"}
        elif kind == "maps":
            arguments[name] = [{"name": "search"}]
        elif "int" in str(param.annotation):
            arguments[name] = 1
        elif "float" in str(param.annotation):
            arguments[name] = 0.5
        else:
            arguments[name] = None
    return arguments


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[tuple[asyncio.Runner, Any]]:
    folder = tmp_path_factory.mktemp("fuzz-sdk")
    store = SQLiteStore(folder / "fuzz.db", embedding_model=embedder.model_id, dimension=embedder.dimension)
    engine = build_engine(store, _Shared(embedder), default_vocabulary=learnloop.Vocabulary.from_mapping(BREWING))  # type: ignore[arg-type]
    loop = learnloop.Loop(engine, tenant="fuzz")
    with asyncio.Runner() as runner:
        runner.run(loop.save("The kettle holds 30 litres", user="fuzz", category="equipment"))
        yield runner, loop
        runner.run(loop.aclose())


def _targets() -> list[tuple[str, str]]:
    from learnloop.agent import AgentService
    from learnloop.tools import ToolIntelligence

    found = [("loop", name) for name in _methods_of(learnloop.Loop)]
    found += [("tools", name) for name in _methods_of(ToolIntelligence)]
    found += [("agent", name) for name in _methods_of(AgentService)]
    classes = {"loop": learnloop.Loop, "tools": ToolIntelligence, "agent": AgentService}
    return [(face, name) for face, name in found if _calls(classes[face], name)[1]]  # those that take text


def _methods_of(cls: type) -> list[str]:
    return [
        name
        for name in dir(cls)
        if not name.startswith("_")
        and name not in SKIPPED
        and (
            inspect.iscoroutinefunction(inspect.getattr_static(cls, name))
            or inspect.isasyncgenfunction(inspect.getattr_static(cls, name))
        )
    ]


async def _call(method: Any, arguments: dict[str, Any]) -> None:
    if inspect.isasyncgenfunction(method):
        async for _ in method(**arguments):
            break
        return
    await method(**arguments)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # route(context=...), the deprecated alias, is fuzzed too
@pytest.mark.parametrize(("face", "name"), _targets())
@settings(
    max_examples=EXAMPLES, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)
@given(data=st.data())
def test_hostile_text_through_every_public_method(
    fuzzed: tuple[asyncio.Runner, Any],
    face: str,
    name: str,
    data: st.DataObject,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    runner, loop = fuzzed
    target = {"loop": loop, "tools": loop.tools, "agent": loop.agent}[face]
    signature, textual = _calls(target, name)
    hostile_param = data.draw(st.sampled_from(textual), label="parameter")
    hostile = data.draw(hostile_text, label="text")
    arguments = _arguments(signature, hostile_param, hostile)
    if name in ("export_to", "import_jsonl"):  # paths: keep what they write inside a temporary folder
        key = "path" if name == "export_to" else "lines"
        if key == hostile_param:
            arguments[key] = str(tmp_path_factory.getbasetemp() / hostile[:100])
        else:
            arguments[key] = str(tmp_path_factory.mktemp("io") / "file.jsonl")
    with contextlib.suppress(learnloop.LearnloopError):  # the one error type a caller may get
        runner.run(asyncio.wait_for(_call(getattr(target, name), arguments), timeout=60))
    assert runner.run(loop.list(limit=1)).total >= 0  # the loop still answers
