"""Issue 17 at the SDK's edge: hostile text is a `ValidationError` naming the argument, and no library error
(pydantic, the tokenizer, sqlite3) reaches the caller."""

from __future__ import annotations

from pathlib import Path

import pytest

import learnloop
from learnloop.embedders.base import Embedder
from learnloop.factory import build_engine
from learnloop.models import Vocabulary
from learnloop.sdk_edge import as_learnloop_error
from tests.conftest import BREWING, _Shared, make_store


async def test_a_lone_surrogate_is_a_validation_error_naming_the_argument(loop: learnloop.Loop) -> None:
    with pytest.raises(learnloop.ValidationError) as caught:
        await loop.save("Alice kettle \ud800 hops", user="alice", category="equipment")
    assert caught.value.details["field"] == "text" and "surrogate" in caught.value.message
    with pytest.raises(learnloop.ValidationError) as caught:
        await loop.handle_tool_call({"learning": "Kettle \ud800", "category": "equipment"}, user="alice")
    assert caught.value.details["field"] == "arguments.learning"
    with pytest.raises(learnloop.ValidationError) as caught:
        await loop.retrieve_context("alice", "kettle\x00")
    assert caught.value.details["field"] == "query" and "NUL" in caught.value.message
    with pytest.raises(learnloop.ValidationError) as caught:
        await loop.save("Kettle holds 30 L", user="alice", source=learnloop.Source(context="brew \x1b[2J day"))
    assert caught.value.details["field"] == "source.context"
    with pytest.raises(learnloop.ValidationError):
        await loop.tools.route("rain \udfff in Paris")
    # The loop still works after each refusal.
    saved = await loop.save("Alice's kettle holds 30 litres", user="alice", category="equipment")
    assert saved.stored


async def test_a_long_token_in_a_turn_is_no_error(loop: learnloop.Loop) -> None:
    result = await loop.observe("Actually we use " + "x=1&" * 260, "ok", user="alice")
    assert [s for s in result.saved if s.stored] == []


async def test_rtl_and_joiners_stay_allowed(loop: learnloop.Loop) -> None:
    text = "Dana labels the fermenter \u05ea\u05e1\u05e1\u05d4 \u200fand \U0001f468\u200d\U0001f469\u200d\U0001f467"
    saved = await loop.save(text, user="dana", category="equipment")
    assert saved.stored and saved.learning is not None and saved.learning.text == text


def test_library_errors_become_learnloop_errors() -> None:
    import sqlite3

    from pydantic import BaseModel

    class Shape(BaseModel):
        n: int

    try:
        Shape.model_validate({"n": "many"})
    except Exception as exc:
        translated = as_learnloop_error(exc)
    assert isinstance(translated, learnloop.ValidationError) and translated.details["field"] == "n"
    assert isinstance(as_learnloop_error(sqlite3.OperationalError("disk I/O error")), learnloop.StoreError)
    assert isinstance(as_learnloop_error(RecursionError()), learnloop.ValidationError)
    assert as_learnloop_error(KeyError("bug")) is None


async def test_the_sync_face_raises_the_same(open_loop) -> None:  # type: ignore[no-untyped-def]
    loop = open_loop("sync.db").sync
    try:
        with pytest.raises(learnloop.ValidationError):
            loop.save("Kettle \ud800", user="alice", category="equipment")
        assert loop.save("Kettle holds 31 litres", user="alice", category="equipment").stored
    finally:
        loop.close()


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def test_a_nul_is_the_same_validation_error_on_every_backend(
    backend: str, tmp_path: Path, embedder: Embedder
) -> None:
    """PostgreSQL cannot store a NUL in text at all; SQLite could. A save, a retrieval or an interaction
    carrying one is refused before the store on both, with the field named, and nothing is written."""
    store = make_store(backend, tmp_path, embedding_model=embedder.model_id, dimension=embedder.dimension)
    loop = learnloop.Loop(build_engine(store, _Shared(embedder), default_vocabulary=Vocabulary.from_mapping(BREWING)))  # type: ignore[arg-type]
    try:
        refused = {
            "text": loop.save("the mill\x00 gap is 0.9 mm", user="lee", category="equipment"),
            "tags[0]": loop.save("the mill gap is 0.9 mm", user="lee", category="equipment", tags=["a\x00"]),
            "arguments.learning": loop.handle_tool_call({"learning": "gap\x00", "category": "equipment"}, user="lee"),
            "query": loop.retrieve_context("lee", "mill\x00gap"),
            "user_query": loop.submit_interaction("s1", "what gap?\x00", "0.9 mm", user="lee"),
        }
        for field, call in refused.items():
            with pytest.raises(learnloop.ValidationError) as caught:
                await call
            assert caught.value.details["field"] == field and "NUL" in caught.value.message
        assert (await loop.list(user="lee")).total == 0
    finally:
        await loop.aclose()
