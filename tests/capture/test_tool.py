"""The save_learning tool: schemas, the system-prompt section, the handler, and seed 000's flow."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import learnloop
from learnloop import InvalidCategory, Loop
from learnloop.capture.tool import proactive_learning_section, tool_schema
from tests.conftest import BREWING

CATEGORIES = list(BREWING)
VOCABULARY = learnloop.Vocabulary.from_mapping(BREWING)


def test_openai_anthropic_and_mcp_schemas_share_one_parameter_schema() -> None:
    openai = tool_schema(VOCABULARY, "openai")
    anthropic = tool_schema(VOCABULARY, "anthropic")
    mcp = tool_schema(VOCABULARY, "mcp")
    parameters = openai["function"]["parameters"]
    assert openai["type"] == "function" and openai["function"]["name"] == "save_learning"
    assert anthropic["input_schema"] == parameters and mcp["inputSchema"] == parameters
    assert parameters["required"] == ["learning", "category"]
    assert parameters["properties"]["category"]["enum"] == CATEGORIES
    assert "equipment: Boil-off rates" in parameters["properties"]["category"]["description"]
    assert "PROACTIVELY" in openai["function"]["description"]
    with pytest.raises(learnloop.ValidationError):
        tool_schema(VOCABULARY, "cobol")  # type: ignore[arg-type]


def test_proactive_learning_section_follows_the_vocabulary() -> None:
    text = proactive_learning_section(VOCABULARY)
    assert text.startswith("## Proactive Learning")
    assert "`save_learning`" in text and "### When to Save" in text and "### Examples" in text
    assert "**Equipment** — Boil-off rates, dead space, mash tun efficiency" in text
    assert "equipment, technique, recipe, ingredient, correction" in text
    analytics = learnloop.Vocabulary(
        categories=[
            learnloop.Category(
                name="sort_keys",
                description="Which sort key an endpoint accepts",
                examples=["Products API sorts by BEST_SELLING, not REVENUE"],
            )
        ]
    )
    custom = proactive_learning_section(analytics, tool="remember")
    assert (
        "`remember`" in custom and 'remember("Products API sorts by BEST_SELLING, not REVENUE", "sort_keys")' in custom
    )


async def test_handler_reports_each_outcome_for_the_model(loop: Loop) -> None:
    call = {"learning": "Grainfather Gen 1 boil-off rate is ~3.5 L/hr", "category": "equipment"}
    saved = await loop.handle_tool_call(call, user="alice", session="s1")
    assert (
        saved.ok and saved.action == "created" and saved.content == f"Saved learning #{saved.learning_id} (equipment)."
    )
    learning = await loop.get(saved.learning_id or 0)
    assert learning.status == "verified" and learning.origin == "tool" and learning.source.session == "s1"
    again = await loop.handle_tool_call(json.dumps(call), user="alice")
    assert again.action == "skipped" and f"#{saved.learning_id}" in again.content
    refused = await loop.handle_tool_call(
        {"learning": "my password is hunter2hunter2", "category": "correction"}, user="alice"
    )
    assert not refused.ok and refused.action == "refused" and refused.content.startswith("Not saved:")
    bad = await loop.handle_tool_call({"learning": "x is y", "category": "gear"}, user="alice")
    assert not bad.ok and bad.action == "invalid" and "equipment, technique" in bad.content
    assert bad.error is not None and bad.error["allowed"] == CATEGORIES
    with pytest.raises(InvalidCategory):
        await loop.handle_tool_call({"learning": "x is y", "category": "gear"}, user="alice", errors="raise")
    missing = await loop.handle_tool_call("{not json", user="alice")
    assert missing.action == "invalid" and "not valid JSON" in missing.content


def test_seed_000_flow_save_in_session_one_recall_in_a_new_process(tmp_path: Path, embedder: object) -> None:
    db = tmp_path / "brew.db"
    loop = learnloop.open(str(db), vocabulary=BREWING).sync
    result = loop.handle_tool_call(
        {
            "learning": "Grainfather Gen 1 boil-off rate is ~3.5 L/hr, lower than typical 4-5 L/hr",
            "category": "equipment",
            "source_context": "Pale Ale brew day",
        },
        user="brewer",
        session="session-1",
    )
    assert result.ok and result.content.startswith("Saved learning #")
    loop.close()
    session_two = textwrap.dedent(
        f"""
        import learnloop
        loop = learnloop.open({str(db)!r}).sync
        result = loop.retrieve_context("brewer", "How much water will boil off in a 60 minute boil?")
        print(result.block)
        loop.close()
        """
    )
    out = subprocess.run([sys.executable, "-c", session_two], capture_output=True, text=True, check=True).stdout
    assert "<learning_memories>" in out
    assert '- [verified/equipment] "Grainfather Gen 1 boil-off rate is ~3.5 L/hr, lower than typical 4-5 L/hr' in out
