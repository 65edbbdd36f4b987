"""The pages in a real browser: Debian's chromium driven by Playwright (never `playwright install`).

Screenshots of each page are kept under test-output/ (gitignored) for a human to look at.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from learnloop.llms import resolve_llm
from learnloop.server.pages import EMPTY_STATE
from tests.agent.support import LearningScript, calls
from tests.server.conftest import RunningServer, running_server
from tests.support.scripted_openai import Reply, ScriptedOpenAI
from tests.tools.conftest import CATALOG

pytestmark = [pytest.mark.server, pytest.mark.browser]

CHROMIUM = Path("/usr/bin/chromium")
OUTPUT = Path(__file__).resolve().parents[2] / "test-output" / "browser"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TENANT = "browser"


@pytest.fixture(scope="module")
def context() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed: run scripts/ensure-chromium.sh (`make test` does)")
    from playwright.sync_api import sync_playwright

    OUTPUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="learnloop-chromium-") as profile, sync_playwright() as playwright:
        browser_context = playwright.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), headless=True, args=ARGS, viewport={"width": 1200, "height": 900}
        )
        browser_context.set_default_timeout(10_000)
        try:
            yield browser_context
        finally:
            browser_context.close()


def _login(context: Any, service: RunningServer, key: str) -> Any:
    context.clear_cookies()
    page = context.new_page()
    page.goto(f"{service.url}/knowledge")
    assert "/login" in page.url
    page.screenshot(path=str(OUTPUT / "login.png"))
    page.fill("#key", key)
    page.click("button[type=submit]")
    page.wait_for_url(f"{service.url}/knowledge")
    return page


def test_empty_state(context: Any, service: RunningServer) -> None:
    page = _login(context, service, service.key("browser-empty", "admin"))
    assert page.get_by_text(EMPTY_STATE).is_visible()
    tabs = page.locator(".tabs a").all_inner_texts()
    assert tabs == ["All", "Equipment", "Technique", "Recipe", "Ingredient", "Correction"]
    page.screenshot(path=str(OUTPUT / "knowledge-empty.png"), full_page=True)
    page.close()


def test_tool_save_appears_under_its_tab(context: Any, service: RunningServer) -> None:
    key = service.key(TENANT, "admin")
    text = "Grainfather Gen 1 boil-off rate is ~3.5 L/hr, lower than the typical 4-5 L/hr"
    service.save(key, text, "equipment", "brewer", source_context="Pale Ale brew day")
    page = _login(context, service, key)
    page.click(".tabs a:has-text('Equipment')")
    page.wait_for_url("**/knowledge?category=equipment*")
    item = page.locator(".learning", has_text=text)
    assert item.is_visible()
    assert item.locator(".badge.category").inner_text() == "equipment"
    assert item.locator(".context").inner_text().endswith("Pale Ale brew day")
    assert item.locator(".badge.status").inner_text() == "verified"
    page.screenshot(path=str(OUTPUT / "knowledge-equipment.png"), full_page=True)
    page.click(".tabs a:has-text('Technique')")
    page.wait_for_url("**/knowledge?category=technique*")
    assert page.locator(".learning", has_text=text).count() == 0
    page.close()


def test_inline_edit_persists_after_reload(context: Any, service: RunningServer) -> None:
    key = service.key(TENANT, "admin")
    saved = service.save(key, "US-05 attenuates to ~80% in this system", "ingredient", "brewer")
    page = _login(context, service, key)
    page.goto(f"{service.url}/knowledge?category=ingredient")
    item = page.locator(f".learning[data-id='{saved['learning_id']}']")
    item.locator("button.edit").click()
    item.locator("textarea").fill("US-05 attenuates to ~82% in this system, higher than the listed 75%")
    page.screenshot(path=str(OUTPUT / "knowledge-editing.png"), full_page=True)
    item.locator("button.save").click()
    item.locator(".text", has_text="~82%").wait_for()
    page.reload()
    assert "~82% in this system" in page.locator(f".learning[data-id='{saved['learning_id']}'] .text").inner_text()
    with service.client(key) as c:
        assert "~82%" in c.get(f"/api/learnings/{saved['learning_id']}").json()["text"]
    item = page.locator(f".learning[data-id='{saved['learning_id']}']")
    item.locator("button.history-toggle").click()
    item.locator(".history li", has_text="edited").wait_for()
    page.close()


def test_delete_asks_and_removes_from_retrieval(context: Any, service: RunningServer) -> None:
    key = service.key(TENANT, "admin")
    text = "The brewer's mash tun loses 1.8 litres to dead space"
    saved = service.save(key, text, "equipment", "brewer")
    query = {"query": "how much is lost to mash tun dead space?", "user": "brewer"}
    with service.client(key) as c:
        assert saved["learning_id"] in [
            i["learning"]["id"] for i in c.post("/api/retrieve", json=query).json()["items"]
        ]
    page = _login(context, service, key)
    page.goto(f"{service.url}/knowledge?category=equipment")
    item = page.locator(f".learning[data-id='{saved['learning_id']}']")
    dialogs: list[tuple[str, str]] = []

    def dismiss(dialog: Any) -> None:
        dialogs.append((dialog.type, dialog.message))
        dialog.dismiss()

    page.once("dialog", dismiss)
    item.locator("button.delete").click()
    page.wait_for_timeout(300)
    assert dialogs and dialogs[0][0] == "confirm" and "Delete" in dialogs[0][1]
    assert item.is_visible()  # dismissed: nothing deleted

    def accept(dialog: Any) -> None:
        dialogs.append((dialog.type, dialog.message))
        dialog.accept()

    page.once("dialog", accept)
    item.locator("button.delete").click()
    item.wait_for(state="detached")
    assert len(dialogs) == 2
    with service.client(key) as c:
        result = c.post("/api/retrieve", json=query).json()
        assert saved["learning_id"] not in [i["learning"]["id"] for i in result["items"]]
        assert text not in result["block"]
        assert c.get(f"/api/learnings/{saved['learning_id']}").status_code == 404
    page.reload()
    assert page.locator(".learning", has_text=text).count() == 0
    page.close()


def test_activity_shows_a_new_event_within_two_seconds(context: Any, service: RunningServer) -> None:
    key = service.key(TENANT, "admin")
    page = _login(context, service, key)
    page.goto(f"{service.url}/activity")
    page.locator("#connection.live").wait_for()
    started = time.monotonic()
    saved = service.save(key, "The brewer's fermentation fridge holds 18 °C ± 0.5", "equipment", "brewer")
    page.locator("#learning li", has_text="fermentation fridge").wait_for(timeout=2_000)
    assert time.monotonic() - started < 2.0
    with service.client(key) as c:
        c.post(f"/api/learnings/{saved['learning_id']}/deprecate", json={"reason": "new fridge"}).raise_for_status()
    page.locator("#knowledge_update li", has_text="fermentation fridge").wait_for(timeout=2_000)
    newest = page.locator("#learning li").first.inner_text()
    assert "fermentation fridge" in newest  # newest first
    page.screenshot(path=str(OUTPUT / "activity.png"), full_page=True)
    page.close()


def test_metrics_page_draws_charts(context: Any, service: RunningServer) -> None:
    key = service.key(TENANT, "admin")
    page = _login(context, service, key)
    page.goto(f"{service.url}/metrics")
    for chart in ("#chart-status svg polyline, #chart-status svg circle", "#chart-writes svg rect", "#chart-hits svg"):
        page.locator(chart).first.wait_for()
    assert page.locator("#totals div").count() >= 10
    page.screenshot(path=str(OUTPUT / "metrics.png"), full_page=True)
    page.close()


def test_tools_page_shows_what_was_learned(context: Any, service: RunningServer) -> None:
    page = _login(context, service, service.key("browser-tools-empty", "admin"))
    page.goto(f"{service.url}/tools")
    assert page.locator("header nav a[aria-current='page']").inner_text() == "Tools"
    empty = page.locator(".tools .empty").all_inner_texts()
    assert len(empty) == 5 and empty[0].startswith("No tools registered yet.")
    page.screenshot(path=str(OUTPUT / "tools-empty.png"), full_page=True)
    page.close()

    key = service.key("browser-tools", "admin")
    failed = {"resource": "products", "sort_key": "REVENUE", "limit": 10}
    fixed = {"resource": "products", "sort_key": "BEST_SELLING", "limit": 10}
    with service.client(key) as c:
        c.post("/api/tools/catalog", json={"tools": CATALOG, "server": "shop"}).raise_for_status()
        c.put("/api/tools/privacy/brewer", json={"mode": "full"}).raise_for_status()
        context_body = {"session": "b1", "query": "top products by revenue", "user": "brewer", "intent": "top_products"}
        c.post("/api/tools/context", json=context_body).raise_for_status()
        for arguments, ok in ((failed, False), (fixed, True)):
            call = {"session": "b1", "tool": "shop_analytics", "arguments": arguments, "ok": ok, "user": "brewer"}
            error = {} if ok else {"error": "Invalid sort key REVENUE for products"}
            c.post("/api/tools/calls", json=call | error | {"latency_ms": 120}).raise_for_status()
    page = _login(context, service, key)
    problems: list[str] = []
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.goto(f"{service.url}/tools")
    assert page.locator("#catalog tbody tr").count() == len(CATALOG)
    evidence = page.locator("#evidence tr[data-tool='shop_analytics']")
    assert "top products by revenue" in evidence.inner_text()  # privacy "full": the query is kept
    template = page.locator("#templates tbody tr").first.inner_text()
    assert "top_products" in template and "BEST_SELLING" in template and "120 ms" in template
    recovery = page.locator("#recoveries tbody tr").first.inner_text()
    assert "Changed sort_key from 'REVENUE' to 'BEST_SELLING'" in recovery and "1/1" in recovery
    assert "50%" in page.locator("#intents tr[data-intent='top_products']").inner_text()  # 1 of 2 calls worked

    page.fill("#route-context", "will it rain in Paris tomorrow?")
    page.click("#route-form button")
    page.locator("#routed li").first.wait_for()
    assert page.locator("#routed li").first.inner_text().startswith("get_forecast")
    page.fill("#catalog-filter", "email")
    assert page.locator("#catalog tbody tr:visible").all_inner_texts()[0].startswith("send_email")
    assert page.locator("#catalog tbody tr:visible").count() == 1
    page.fill("#catalog-filter", "")
    page.screenshot(path=str(OUTPUT / "tools.png"), full_page=True)
    assert problems == []  # no script or CSP errors
    page.close()


REVIEW_PAIRS = {
    "keep_both": ("The user's editor is Vim.", "The user's editor is Emacs."),
    "keep_new": ("Our CI runs on Jenkins.", "Our CI runs on CircleCI."),
    "keep_old": ("The office printer is a Brother HL-L2350.", "The office printer is a Canon LBP-6030."),
    "merge": ("Deploys happen on Tuesdays.", "Deploys happen on Thursdays."),
}


def test_review_resolves_a_possible_conflict_each_of_the_four_ways(context: Any, service: RunningServer) -> None:
    key = service.key("browser-review", "admin")
    ids = {}
    for way, (old, new) in REVIEW_PAIRS.items():
        first = service.save(key, old, "equipment", "reviewer")
        second = service.save(key, new, "equipment", "reviewer")
        assert second["action"] == "created"
        ids[way] = (first["learning_id"], second["learning_id"])
    page = _login(context, service, key)
    page.click("a.review-link")
    page.wait_for_url("**/knowledge?review=1*")
    assert page.locator(".review").count() == 4
    page.screenshot(path=str(OUTPUT / "knowledge-review.png"), full_page=True)
    for way in ("keep_both", "keep_new", "keep_old"):
        new_id = ids[way][1]
        card = page.locator(".review", has=page.locator(f".side.new[data-id='{new_id}']"))
        card.locator(f"button[data-resolution='{way}']").click()
        card.wait_for(state="detached")
    new_id = ids["merge"][1]
    card = page.locator(".review", has=page.locator(f".side.new[data-id='{new_id}']"))
    card.locator("button.merge-open").click()
    card.locator("textarea").fill("Deploys moved from Tuesdays to Thursdays.")
    card.locator("button.save-merge").click()
    card.wait_for(state="detached")
    # Resolving reloads the page: wait for the new one (the old card is gone before it has loaded).
    page.get_by_text("Nothing needs review").wait_for(state="visible")
    with service.client(key) as c:

        def status(i: int) -> str:
            return str(c.get(f"/api/learnings/{i}").json()["status"])

        assert [status(i) for i in ids["keep_both"]] != ["deprecated", "deprecated"]
        assert "deprecated" not in {status(i) for i in ids["keep_both"]}
        assert status(ids["keep_new"][0]) == "deprecated" and status(ids["keep_new"][1]) != "deprecated"
        assert status(ids["keep_old"][0]) != "deprecated" and status(ids["keep_old"][1]) == "deprecated"
        assert {status(i) for i in ids["merge"]} == {"deprecated"}
        merged = c.get(f"/api/learnings/{ids['merge'][0]}").json()["superseded_by"]
        assert c.get(f"/api/learnings/{merged}").json()["text"] == "Deploys moved from Tuesdays to Thursdays."
    page.close()


def test_undo_of_a_merge_and_of_a_supersede_restores_both_texts(context: Any, service: RunningServer) -> None:
    key = service.key("browser-undo", "admin")
    base = service.save(key, "The user brews on a Grainfather", "equipment", "undoer")
    merged = service.save(
        key, "The user brews on a Grainfather G30 and chills with its counterflow chiller", "equipment", "undoer"
    )
    assert merged["action"] == "merged"
    old = service.save(key, "The user's kettle boils off 3.5 L/hr.", "equipment", "undoer")
    new = service.save(key, "The user's kettle boils off 4 L/hr.", "equipment", "undoer")
    assert new["action"] == "new_version"
    page = _login(context, service, key)
    for saved in (merged, new):
        page.goto(f"{service.url}/knowledge?category=equipment")
        item = page.locator(f".learning[data-id='{saved['learning_id']}']")
        item.locator("button.undo").click()
        page.wait_for_load_state("load")
        page.locator(f".learning[data-id='{saved['learning_id']}'] button.undo").wait_for(state="detached")
    with service.client(key) as c:
        live = {x["text"] for x in c.get("/api/learnings", params={"status": "verified"}).json()["items"]}
        live |= {x["text"] for x in c.get("/api/learnings", params={"status": "candidate"}).json()["items"]}
        assert "The user brews on a Grainfather" in live
        assert "The user brews on a Grainfather G30 and chills with its counterflow chiller" in live
        assert {"The user's kettle boils off 3.5 L/hr.", "The user's kettle boils off 4 L/hr."} <= live
        history = [e["action"] for e in c.get(f"/api/learnings/{base['learning_id']}/history").json()]
        assert history == ["created", "merged", "undone"]
        assert old["learning_id"]
    page.close()


def test_metrics_page_shows_whether_memory_helps(context: Any, service: RunningServer) -> None:
    from learnloop.holdback.simulation import Population, simulate

    tenant = "browser-holdback"
    loop = service.loop.for_tenant(tenant)
    service.call(loop.holdback.configure(share=0.5))
    # Real time on the server's clock: the scripted users' turns follow each other as fast as they run.
    service.call(simulate(loop, Population(users=12, sessions=3), advance=lambda delta: None))
    key = service.key(tenant, "admin")
    with service.client(key) as client:
        verdict = client.get("/api/holdback").json()["verdict"]
    page = _login(context, service, key)
    page.goto(f"{service.url}/metrics")
    page.locator("#chart-holdback svg polyline").first.wait_for()
    page.locator("#chart-holdback-days svg polyline, #chart-holdback-days svg circle").first.wait_for()
    assert page.locator("#holdback-outcomes tbody tr").count() == 5
    assert page.locator("#holdback-outcomes tbody tr svg line").count() >= 5  # the zero line of every row
    assert page.locator("#holdback-verdict").inner_text() == verdict
    page.locator("#holdback").screenshot(path=str(OUTPUT / "metrics-holdback.png"))
    page.close()


def test_metrics_page_shows_seed_001_s_learning_metrics(context: Any, service: RunningServer) -> None:
    """Seed 001 §11: every metric has its card, and the two charts draw from a real history of turns."""
    tenant = "browser-learning"
    key = service.key(tenant, "admin")
    top = {"resource": "products", "sort_key": "BEST_SELLING", "limit": 10}
    with service.client(key) as c:
        c.post("/api/tools/catalog", json={"tools": CATALOG, "server": "shop"}).raise_for_status()
        for user, message in (("ann", "top products last month"), ("ann", "great, thanks! top products this week")):
            begun = c.post("/api/turns", json={"message": message, "user": user, "session": user}).json()
            c.post(f"/api/turns/{begun['id']}/tool-calls", json={"name": "shop_analytics", "arguments": top})
            c.post(f"/api/turns/{begun['id']}/finish", json={"response": "Here."}).raise_for_status()
    service.call(service.loop.for_tenant(tenant).turns.drain())
    page = _login(context, service, key)
    page.goto(f"{service.url}/metrics")
    page.locator("#chart-templates svg circle, #chart-templates svg polyline").first.wait_for()
    page.locator("#chart-quality svg circle, #chart-quality svg polyline").first.wait_for()
    cards = dict(
        zip(
            page.locator("#learning-totals div span").all_inner_texts(),
            page.locator("#learning-totals div b").all_inner_texts(),
            strict=True,
        )
    )
    assert list(cards) == [
        "Template hit rate",
        "Template confidence",
        "Error recovery rate",
        "First-try success",
        "Response quality",
        "Tool selection accuracy",
        "Cold start (turns)",
        "Correction rate",
    ]
    assert cards["Template hit rate"] == "50%" and cards["First-try success"] == "100%"
    assert cards["Response quality"] == "0.80" and cards["Cold start (turns)"] == "2.0"
    assert cards["Correction rate"] == "0%" and cards["Error recovery rate"] == "–"
    assert page.locator("#learning-empty").is_hidden()
    page.screenshot(path=str(OUTPUT / "metrics-learning.png"), full_page=True)
    page.close()


def test_profiles_page_shows_edits_and_forgets_a_profile(context: Any, service: RunningServer) -> None:
    tenant = "browser-profiles"
    key = service.key(tenant, "admin")
    with service.client(key) as c:
        for n, message in enumerate(("revenue last month?", "revenue by channel last month", "orders last month")):
            begun = c.post("/api/turns", json={"message": message, "user": "pat", "session": f"p{n}"}).json()
            c.post(f"/api/turns/{begun['id']}/finish", json={"response": "Here."}).raise_for_status()
    service.call(service.loop.for_tenant(tenant).turns.drain())
    page = _login(context, service, key)
    page.goto(f"{service.url}/profiles?user=pat")
    assert page.locator("header nav a[aria-current='page']").inner_text() == "Profiles"
    assert page.locator("#favourites").inner_text() == "revenue, orders"
    assert page.locator("#time-range").inner_text() == "last_month"
    assert page.locator("#interactions").inner_text() == "3"
    assert page.locator("#patterns tbody tr").count() >= 5
    page.fill("#edit-range", "last_7_days")
    page.click("#profile-edit button[type=submit]")
    page.get_by_text("last_7_days", exact=True).first.wait_for()
    assert page.locator("#time-range").inner_text() == "last_7_days"
    page.screenshot(path=str(OUTPUT / "profiles.png"), full_page=True)
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#profile-forget")
    page.locator("#profile-empty").wait_for()
    page.close()


def test_learning_done_closes_the_learning_agents_panels(
    context: Any, embedder: Any, scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    """Seed 003 R7: the learning agent's steps show in the Learning and Knowledge update panels while it works,
    and its `learning_done` marks them complete (before: the event was one more line, nothing closed)."""
    with running_server(tmp_path / "agent.db", embedder) as service:
        tenant = "browser-agent"
        key = service.key(tenant, "admin")
        loop = service.loop.for_tenant(tenant)
        pointer = {"id": "ptr-pump", "title": "Pump schedule", "description": "Table of plumbing fixtures"}
        service.call(loop.agent.add_pointer(pointer))
        loop.agent.configure(model=resolve_llm("openai:scripted-model", scripted_openai.settings()), poll_seconds=0.05)
        fix = {"pointer_id": "ptr-pump", "field": "description", "new_content": "Pump tags, flow rates, motor sizes"}
        note = {"path": "notes.md", "content": "# Notes\n- The pump schedule is on M-101.\n"}
        steps = calls(("write_file", note), ("edit_pointer", fix))
        # The second model call is held, so the page sees the turn at work before it is done.
        scripted_openai.chat.respond(
            LearningScript([steps, Reply.text("Noted where the pump schedule is.")], hold={1: 3.0})
        )
        page = _login(context, service, key)
        page.goto(f"{service.url}/activity")
        page.locator("#connection.live").wait_for()
        with service.client(key) as c:
            turn = {"session": "b1", "user_query": "Where is the pump schedule?", "assistant_response": "On M-101."}
            assert c.post("/api/interactions", json=turn).status_code == 202
        page.locator("#learning li.run.working details[open]", has_text="wrote notes.md").wait_for(timeout=10_000)
        page.locator("#knowledge_update li.run.working", has_text="ptr-pump").wait_for(timeout=10_000)
        assert page.locator(".panel.learning").get_attribute("data-state") == "working"
        page.screenshot(path=str(OUTPUT / "activity-learning.png"), full_page=True)
        done = page.locator("#learning li.run.done")
        done.wait_for(timeout=15_000)
        assert "Noted where the pump schedule is" in done.inner_text()
        assert done.locator("details").get_attribute("open") is None  # closed
        updated = page.locator("#knowledge_update li.run.done")
        assert "1 knowledge update" in updated.inner_text() and updated.locator("details").get_attribute("open") is None
        assert page.locator(".panel.learning").get_attribute("data-state") == "idle"
        assert page.locator(".panel.knowledge_update").get_attribute("data-state") == "idle"
        page.screenshot(path=str(OUTPUT / "activity-learning-done.png"), full_page=True)
        page.close()
        service.call(loop.agent.close_session("b1"))


def test_knowledge_page_shows_a_users_channels(context: Any, service: RunningServer) -> None:
    tenant = "browser-channels"
    admin = service.key(tenant, "admin")
    with service.client(admin) as c:
        tg = {"channel": "telegram", "channel_user_id": "123456789"}
        wa = {"channel": "whatsapp", "channel_user_id": "+44 7700 900123"}
        c.post("/api/identities/resolve", json={**tg, "user": "pat", "username": "pat_tg"}).raise_for_status()
        c.post("/api/identities/resolve", json=wa).raise_for_status()
        code = c.post("/api/identities/link-codes", json=tg).json()["code"]
        c.post("/api/identities/link", json={**wa, "code": code}).raise_for_status()
    page = _login(context, service, admin)
    assert page.locator("section.channels").count() == 0  # the whole tenant: nobody's channels
    page.goto(f"{service.url}/knowledge?user=pat")
    rows = page.locator("section.channels tbody tr")
    assert rows.count() == 2
    telegram = page.locator("section.channels tr[data-channel='telegram']").inner_text()
    assert "@pat_tg" in telegram and "•••6789" in telegram
    assert "•••0123" in page.locator("section.channels tr[data-channel='whatsapp']").inner_text()
    assert "7700" not in page.content()  # the phone number is never on the page
    page.screenshot(path=str(OUTPUT / "channels.png"), full_page=True)
    page.close()
    mine = _login(context, service, service.key(tenant, "user", "pat"))
    assert mine.locator("section.channels tbody tr").count() == 2  # a user's own view shows their channels
    mine.close()
