"""The pages over plain HTTP: login and its cookie, redirects, rendering, headers, cookie-write protection."""

from __future__ import annotations

import contextlib

import httpx
import pytest
from markupsafe import escape

from learnloop.server.pages import EMPTY_STATE as SENTENCE
from tests.server.conftest import RunningServer, error_of

pytestmark = pytest.mark.server

TENANT = "pages"
EMPTY_STATE = str(escape(SENTENCE))  # as it appears in the HTML source


def _login(service: RunningServer, key: str) -> httpx.Client:
    client = httpx.Client(base_url=service.url, timeout=30)
    response = client.post("/login", data={"key": key, "next": "/knowledge"})
    assert response.status_code == 303 and response.headers["location"] == "/knowledge"
    return client


def test_pages_need_a_login(service: RunningServer) -> None:
    with httpx.Client(base_url=service.url) as c:
        for path in ("/knowledge", "/activity"):
            response = c.get(path)
            assert response.status_code == 303 and response.headers["location"].startswith("/login?next=")
        page = c.get("/metrics", headers={"accept": "text/html"})
        assert page.status_code == 303
        assert c.get("/").headers["location"] == "/knowledge"
        form = c.get("/login")
        assert form.status_code == 200 and 'name="key"' in form.text
        wrong = c.post("/login", data={"key": "ll_0123456789abcdef_" + "y" * 43})
        assert wrong.status_code == 401 and "unknown or revoked" in wrong.text
        # Only local redirects after login.
        key = service.key(TENANT, "admin")
        evil = c.post("/login", data={"key": key, "next": "//evil.example/"})
        assert evil.headers["location"] == "/knowledge"


def test_login_cookie_and_rendering(service: RunningServer) -> None:
    key = service.key(TENANT, "admin")
    with contextlib.closing(_login(service, key)) as c:
        cookie = next(h for h in c.cookies.jar)
        assert cookie.name == "learnloop_key" and cookie.has_nonstandard_attr("HttpOnly")
        empty = c.get("/knowledge")
        assert empty.status_code == 200 and EMPTY_STATE in empty.text
        assert "default-src 'self'" in empty.headers["content-security-policy"]
        for label in ("All", "Equipment", "Technique", "Recipe", "Ingredient", "Correction"):
            assert f">{label}</a>" in empty.text
        service.save(key, "Pat's Anvil Foundry boils off 2.5 L/hr", "equipment", "pat", source_context="Stout day")
        page = c.get("/knowledge", params={"category": "equipment"})
        assert "Pat&#39;s Anvil Foundry boils off 2.5 L/hr" in page.text and "Stout day" in page.text
        assert EMPTY_STATE not in page.text
        other_tab = c.get("/knowledge", params={"category": "recipe"})
        assert "Anvil" not in other_tab.text and EMPTY_STATE not in other_tab.text
        assert "No learnings match" in c.get("/knowledge", params={"q": "zebra"}).text
        assert "Anvil" in c.get("/knowledge", params={"q": "foundry"}).text
        assert c.get("/activity").status_code == 200
        metrics_page = c.get("/metrics", headers={"accept": "text/html"})
        assert metrics_page.status_code == 200 and "chart-status" in metrics_page.text
        assert c.get("/static/charts.js").status_code == 200
        # Cookie-authenticated reads work; cookie-authenticated writes need the header the pages send.
        listing = c.get("/api/learnings").json()
        learning_id = listing["items"][0]["id"]
        blocked = c.put(f"/api/learnings/{learning_id}", json={"text": "changed by a forged form"})
        assert blocked.status_code == 403 and "x-requested-with" in error_of(blocked)["message"]
        allowed = c.put(
            f"/api/learnings/{learning_id}",
            json={"text": "Pat's Foundry boils off 2.6 L/hr"},
            headers={"X-Requested-With": "learnloop"},
        )
        assert allowed.status_code == 200
        logout = c.post("/logout")
        assert logout.status_code == 303
        assert c.get("/knowledge").status_code == 303


def test_user_key_sees_its_own_knowledge_only(service: RunningServer) -> None:
    admin = service.key(TENANT, "admin")
    service.save(admin, "Quinn's hop schedule: 60/15/0", "recipe", "quinn")
    service.save(admin, "Rita's hop schedule: 45/10", "recipe", "rita")
    with contextlib.closing(_login(service, service.key(TENANT, "user", "quinn"))) as c:
        page = c.get("/knowledge", params={"category": "recipe", "user": "rita"}).text
        assert "Quinn&#39;s hop schedule" in page and "Rita" not in page
