"""Shared fixtures: real stores on temporary files, the real local embedder, a brewing vocabulary."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

import learnloop
from learnloop.config import Settings
from learnloop.embedders.base import Embedder
from learnloop.stores.base import Store
from learnloop.stores.sqlite import SQLiteStore

pytest_plugins = ["tests.support.scripted_openai"]

BREWING = {
    "equipment": "Boil-off rates, dead space, mash tun efficiency",
    "technique": "Preferred mash temps, sparge method, water adjustments",
    "recipe": "Recipe feedback, style preferences, what worked/didn't",
    "ingredient": "Yeast performance, hop character, grain behavior",
    "correction": "When the assistant was wrong about something",
}

TEST_DIM = 16


def database_target(backend: str, folder: Path, name: str = "contract.db") -> str:
    """Where `backend` keeps the database of `folder` (a test's temporary folder), as `learnloop.open` takes it:
    the file `name` in it, or a PostgreSQL database of the folder's own on the session's cluster
    (tests.support.postgres). Stores opened on the same folder share it."""
    if backend == "postgres":
        from tests.support.postgres import database_url

        return database_url(folder)
    return str(folder / name)


def _sqlite(
    folder: Path, *, embedding_model: str = "test:model", dimension: int = TEST_DIM, **options: object
) -> Store:
    return SQLiteStore(
        database_target("sqlite", folder), embedding_model=embedding_model, dimension=dimension, **options
    )  # type: ignore[arg-type]


def _postgres(
    folder: Path, *, embedding_model: str = "test:model", dimension: int = TEST_DIM, **options: object
) -> Store:
    from learnloop.stores.postgres import PostgresStore

    return PostgresStore(
        database_target("postgres", folder),
        embedding_model=embedding_model,
        dimension=dimension,
        ann_dir=folder / "contract.ann",
        **options,  # type: ignore[arg-type]
    )


_MARKS = {"postgres": [pytest.mark.postgres]}

# Every backend the contract suites run against (the `backend` fixture): its name and how to open a fresh store
# in a folder, with the store's options. A second backend is one more entry here.
BACKENDS: dict[str, Callable[..., Store]] = {"sqlite": _sqlite, "postgres": _postgres}


def unit_vector(seed: int | str, dim: int = TEST_DIM) -> np.ndarray:
    rng = np.random.default_rng(abs(hash(seed)) % (2**32) if isinstance(seed, str) else seed)
    v = rng.standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


def make_store(backend: str, folder: Path, **options: object) -> Store:
    return BACKENDS[backend](folder, **options)


@pytest.fixture(
    params=[pytest.param(name, marks=[pytest.mark.postgres] if name == "postgres" else []) for name in BACKENDS]
)
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """A backend's name (tests of it carry its marker: `-m "not postgres"` leaves those out). The PostgreSQL
    cluster starts on first use; if it cannot, those tests fail with the reason rather than skip."""
    yield str(request.param)
    if request.param == "postgres":
        from tests.support.postgres import drop_databases

        drop_databases()


@pytest.fixture
async def store(backend: str, tmp_path: Path) -> AsyncIterator[Store]:
    s = make_store(backend, tmp_path)
    await s.start()
    yield s
    await s.aclose()


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    from learnloop.embedders import resolve_embedder

    return resolve_embedder(Settings().embedder, Settings())


@pytest.fixture
def open_loop(tmp_path: Path, embedder: Embedder) -> Callable[..., learnloop.Loop]:
    """Open a loop on a file in tmp_path, sharing the session's embedder (loading it once)."""
    from learnloop.factory import build_engine

    def opener(name: str = "loop.db", **engine_options: object) -> learnloop.Loop:
        store = SQLiteStore(tmp_path / name, embedding_model=embedder.model_id, dimension=embedder.dimension)
        vocabulary = learnloop.Vocabulary.from_mapping(BREWING)
        engine = build_engine(store, _Shared(embedder), default_vocabulary=vocabulary, **engine_options)  # type: ignore[arg-type]
        return learnloop.Loop(engine)

    return opener


@pytest.fixture
async def loop(open_loop: Callable[..., learnloop.Loop]) -> AsyncIterator[learnloop.Loop]:
    lp = open_loop()
    yield lp
    await lp.aclose()


class _Shared:
    """The session embedder, kept open when one test's loop closes."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    async def embed(self, texts, *, purpose="document"):  # type: ignore[no-untyped-def]
        return await self._inner.embed(texts, purpose=purpose)

    async def aclose(self) -> None:
        return None
