"""Issue 17's page fixes in a real browser: the nav fits a 390 px phone, empty /activity and /metrics say why they
are empty, the Learning panel says what was asked and which learnings were recalled, a user key is offered no
change to global learnings, and /tools shows template values as written."""

from __future__ import annotations

from typing import Any

import pytest

from tests.server.conftest import RunningServer
from tests.server.test_browser import OUTPUT, _login, context  # noqa: F401 - the browser fixture

pytestmark = [pytest.mark.server, pytest.mark.browser]

TENANT = "browser-hardening"


def test_the_nav_fits_a_phone(context: Any, service: RunningServer) -> None:  # noqa: F811
    page = _login(context, service, service.key(TENANT, "user", "a-rather-long-user-name-for-a-phone"))
    page.set_viewport_size({"width": 390, "height": 844})
    for path in ("/knowledge", "/activity", "/metrics", "/tools"):
        page.goto(f"{service.url}{path}")
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, (path, overflow)
        for link in page.locator("header nav a").all():
            box = link.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, (path, box)
    page.screenshot(path=str(OUTPUT / "nav-390.png"), full_page=True)
    page.set_viewport_size({"width": 1200, "height": 900})
    page.close()


def test_empty_activity_and_metrics_explain_themselves(context: Any, service: RunningServer) -> None:  # noqa: F811
    page = _login(context, service, service.key("browser-hardening-empty", "admin"))
    page.goto(f"{service.url}/activity")
    page.wait_for_selector("#connection.live")
    assert page.locator('[data-empty-for="learning"]').is_visible()
    assert "Nothing learned or recalled yet" in page.locator('[data-empty-for="learning"]').inner_text()
    assert page.locator('[data-empty-for="knowledge_update"]').is_visible()
    page.goto(f"{service.url}/metrics")
    page.wait_for_selector("#metrics-empty:not([hidden])")
    assert "Nothing to measure in this window yet" in page.locator("#metrics-empty").inner_text()
    assert not page.locator(".metrics .chart").first.is_visible()
    page.screenshot(path=str(OUTPUT / "metrics-empty.png"), full_page=True)
    page.close()


def test_the_learning_panel_says_what_was_asked_and_recalled(context: Any, service: RunningServer) -> None:  # noqa: F811
    key = service.key(TENANT, "admin")
    saved = service.save(key, "Olga's kettle boils off 3.1 litres per hour", "equipment", "olga")
    page = _login(context, service, key)
    page.goto(f"{service.url}/activity")
    page.wait_for_selector("#connection.live")
    with service.client(key) as c:
        c.post("/api/retrieve", json={"query": "how much does Olga's kettle boil off?", "user": "olga"})
    line = page.locator("#learning li[data-action=retrieved]").first
    line.wait_for()
    summary = line.locator(".summary").inner_text()
    assert "how much does Olga's kettle boil off?" in summary and f"#{saved['learning_id']}" in summary
    assert not page.locator('[data-empty-for="learning"]').is_visible()
    page.close()


def test_a_user_key_is_offered_no_change_to_global_learnings(context: Any, service: RunningServer) -> None:  # noqa: F811
    admin = service.key(TENANT, "admin")
    shared = service.save(admin, "The shared brewery kettle holds 60 litres", "equipment")  # global
    own = service.save(admin, "Pia's own kettle holds 25 litres", "equipment", "pia")
    page = _login(context, service, service.key(TENANT, "user", "pia"))
    global_item = page.locator(f'.learning[data-id="{shared["learning_id"]}"]')
    own_item = page.locator(f'.learning[data-id="{own["learning_id"]}"]')
    assert global_item.is_visible() and own_item.is_visible()
    for action in ("edit", "promote", "deprecate", "restore", "delete"):
        assert global_item.locator(f"button.{action}").count() == 0, action
    assert global_item.locator(".shared").inner_text() == "shared · read-only"
    assert global_item.locator("button.history-toggle").count() == 1
    assert own_item.locator("button.edit").count() == 1 and own_item.locator("button.delete").count() == 1
    page.close()


def test_tools_page_shows_template_values_as_written(context: Any, service: RunningServer) -> None:  # noqa: F811
    key = service.key("browser-hardening-tools", "admin")
    with service.client(key) as c:
        c.post("/api/tools/catalog", json={"tools": [{"name": "search_docs", "description": "Search the docs"}]})
        seeded = c.post(
            "/api/tools/templates/seed",
            json={"templates": [{"intent": "lookup", "tool": "search_docs", "params": {"q": "<text> & more"}}]},
        )
        assert seeded.status_code == 200, seeded.text
    page = _login(context, service, key)
    page.goto(f"{service.url}/tools")
    call = page.locator("#templates code").first.inner_text()
    assert call == 'search_docs(q="<text> & more")', call
    assert "\\u003c" not in page.content()
    page.close()
