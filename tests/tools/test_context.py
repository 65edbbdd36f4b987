"""The tool sections of the context block (seed 001 §8.9): priority order under one budget."""

from __future__ import annotations

from datetime import UTC, datetime

import learnloop
from learnloop.models import Learning, Limits, RetrievedItem
from learnloop.prompting import MEMORY_NOTICE, Section
from learnloop.retrieval import MEMORY_SECTION_TITLE, render_memories
from learnloop.tools.base import ToolKnowledge
from learnloop.tools.config import ToolConfig
from learnloop.tools.context import (
    ERRORS_TITLE,
    INSIGHTS_TITLE,
    RECOVERY_TITLE,
    TEMPLATES_TITLE,
    build_sections,
    render_with_tool_sections,
)
from learnloop.tools.models import Insight

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def item(text: str, n: int) -> RetrievedItem:
    learning = Learning(id=n, tenant="t", user="alice", text=text, simhash64="0" * 16, created_at=NOW, updated_at=NOW)
    return RetrievedItem(
        learning=learning,
        score=1.0,
        relevance=1.0,
        vector_similarity=0.5,
        text_rank=1,
        vector_rank=1,
        recency=1.0,
        why="",
    )


def test_sections_come_in_seed_001_priority_order_and_the_budget_drops_the_last_first() -> None:
    sections = [
        Section(INSIGHTS_TITLE, ["insight " + "x" * 60], priority=5),
        Section(ERRORS_TITLE, ["error " + "x" * 60], priority=4),
        Section(TEMPLATES_TITLE, ["template " + "x" * 60], priority=2),
        Section(RECOVERY_TITLE, ["recovery " + "x" * 60], priority=1),
    ]
    items = [item("memory " + "x" * 60, 1), item("second memory", 2)]
    wide, kept = render_with_tool_sections(items, Limits(max_chars=5000), sections)
    titles = [line for line in wide.text.splitlines() if line.endswith(":")]
    assert titles == [RECOVERY_TITLE, TEMPLATES_TITLE, MEMORY_SECTION_TITLE, ERRORS_TITLE, INSIGHTS_TITLE]
    assert [i.learning.id for i in kept] == [1, 2]
    narrow, kept = render_with_tool_sections(items, Limits(max_chars=330 + len(MEMORY_NOTICE) + 1), sections)
    assert RECOVERY_TITLE in narrow.text and TEMPLATES_TITLE in narrow.text
    assert INSIGHTS_TITLE not in narrow.text and ERRORS_TITLE not in narrow.text
    assert len(narrow.text) <= 330 + len(MEMORY_NOTICE) + 1


def test_max_items_limits_memories_not_tool_sections() -> None:
    sections = [Section(RECOVERY_TITLE, [f"recovery {n}" for n in range(3)], priority=1)]
    items = [item(f"memory {n}", n) for n in range(1, 5)]
    block, kept = render_with_tool_sections(items, Limits(max_items=2), sections)
    assert block.text.count("- recovery") == 3 and [i.learning.id for i in kept] == [1, 2]


def test_without_tool_knowledge_nothing_is_added() -> None:
    assert build_sections(ToolKnowledge(), ToolConfig(), NOW, relevant=None) == []
    items = [item("memory", 1)]
    plain, _ = render_memories(items, Limits())
    tools_free, _ = render_with_tool_sections(items, Limits(), [])
    assert tools_free.text == plain.text


def test_insights_about_other_tools_or_too_old_stay_out() -> None:
    def insight(tool: str, days_old: float) -> Insight:
        return Insight(
            type="common_mistake",
            key=f"invalid_argument:{tool}",
            value={"description": f"invalid_argument errors with {tool}", "count": 4, "lessons": []},
            sample_size=4,
            confidence=0.2,
            effective_confidence=0.2,
            updated_at=datetime.fromtimestamp(NOW.timestamp() - days_old * 86_400, UTC),
        )

    knowledge = ToolKnowledge(insights=[insight("shop", 1), insight("weather", 1), insight("shop_old", 200)])
    [section] = build_sections(knowledge, ToolConfig(), NOW, relevant={"shop", "shop_old"})
    assert section.lines == ["Common mistake: invalid_argument errors with shop (4×)"]


async def test_retrieve_context_gains_the_tool_sections(tools_loop: learnloop.Loop) -> None:
    tools = tools_loop.tools
    await tools_loop.save(
        "Alice reports product revenue in euros", user="alice", category="correction", status="verified"
    )
    plain = (await tools_loop.retrieve_context("alice", "top products by revenue", record=False)).block
    assert plain.startswith(f"<learning_memories>\n{MEMORY_NOTICE}\n{MEMORY_SECTION_TITLE}\n")
    for session in ("s0", "s1"):  # a recovery is shown once applied twice (seed 001 §6.2)
        await tools.set_context(session, "top products by revenue", user="alice")
        await tools.record_call(
            session,
            "shop_analytics",
            {"resource": "products", "sort_key": "REVENUE"},
            ok=False,
            error="Invalid sort key REVENUE",
        )
        await tools.record_call(session, "shop_analytics", {"resource": "products", "sort_key": "BEST_SELLING"})
    await tools.record_call("s1", "refund_order", {"order_id": "1"}, ok=False, error="order 1 not found")
    block = (await tools_loop.retrieve_context("alice", "top products by revenue", record=False)).block
    lines = block.splitlines()
    assert lines[1] == MEMORY_NOTICE and lines[2] == RECOVERY_TITLE and TEMPLATES_TITLE in lines
    assert MEMORY_SECTION_TITLE in lines
    assert lines.index(TEMPLATES_TITLE) < lines.index(MEMORY_SECTION_TITLE)
    assert '- [verified/correction] "Alice reports product revenue in euros"' in lines
    lesson = "Lesson: make sure the record exists (list or search first) before calling refund_order"
    assert f"- [refund_order] not_found: order 1 not found {lesson}" in lines
    sections = await tools.context_sections("alice", "top products by revenue")
    assert [s.title for s in sections][:2] == [RECOVERY_TITLE, TEMPLATES_TITLE]
    other = (await tools_loop.retrieve_context("bob", "top products by revenue", record=False)).block
    assert ERRORS_TITLE not in other  # past errors are the user's own
