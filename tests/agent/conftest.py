"""Fixtures of the learning-agent tests: a loop on each backend, wired to the scripted model server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from learnloop.loop import Loop
from tests.agent.support import build_loop
from tests.conftest import database_target
from tests.support.scripted_openai import ScriptedOpenAI


@pytest.fixture
async def agent_loop(backend: str, tmp_path: Path, scripted_openai: ScriptedOpenAI) -> AsyncIterator[Loop]:
    loop = build_loop(database_target(backend, tmp_path, "agent.db"), scripted_openai.settings())
    yield loop
    await loop.aclose()
