"""Issue 17: an import no longer freezes the server. It is a job: spooled within the key's limits (413 past them),
imported in batches in the background while the server keeps answering, reported at GET /api/import/{job}
(rows imported, rejected with line numbers and reasons), and resumable after an interruption."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

import learnloop
from learnloop.importing import ImportSettings
from learnloop.server.import_jobs import ImportJobs
from tests.server.conftest import RunningServer, error_of

pytestmark = pytest.mark.server

TENANT = "import-jobs"


def _wait_done(service: RunningServer, key: str, job: str) -> dict[str, object]:
    with service.client(key) as c:
        for _ in range(600):
            state = c.get(f"/api/import/{job}").json()
            if state["status"] in ("done", "failed"):
                return dict(state)
            time.sleep(0.1)
    raise AssertionError(f"import {job} did not finish")


def test_the_server_answers_while_an_import_runs(service: RunningServer) -> None:
    key = service.key(TENANT, "admin")
    body = b"{}\n" * 300_000  # the reproduction, scaled to the admin key's line limit
    with service.client(key) as c:
        posted = c.post("/api/import", params={"user": "ida"}, content=body)
        assert posted.status_code == 202, posted.text
        job = posted.json()["job"]
        assert posted.headers["location"] == f"/api/import/{job}"
        assert c.get("/api/me").status_code == 200
        during = c.get(f"/api/import/{job}").json()
        assert during["status"] in ("queued", "running") and during["progress"] < 1.0
    done = _wait_done(service, key, job)
    report = done["report"]
    assert isinstance(report, dict)
    assert report["rejected"] == 300_000 and len(report["rejected_lines"]) == 1000
    assert report["rejected_lines"][0] == {"line": 1, "reason": "text: Field required"}


def test_good_lines_are_imported_and_bad_ones_reported(service: RunningServer) -> None:
    key = service.key(TENANT, "app")
    lines = [
        json.dumps({"text": f"Jo's batch {i} fermented at {18 + i % 4} C", "category": "technique"}) for i in range(5)
    ]
    lines.insert(2, '{"text": "Jo\'s kettle \\ud800"}')
    with service.client(key) as c:
        finished = c.post("/api/import", params={"user": "jo", "wait": "true"}, content="\n".join(lines))
        assert finished.status_code == 200
        state = finished.json()
        assert state["status"] == "done" and state["progress"] == 1.0
        assert state["report"]["imported"] == 5 and state["report"]["rejected_lines"][0]["line"] == 3
        assert "surrogate" in state["report"]["rejected_lines"][0]["reason"]
        assert c.get("/api/learnings", params={"user": "jo"}).json()["total"] == 5
        again = c.post(f"/api/import/{state['job']}/resume")
        assert again.status_code == 409


def test_import_limits_follow_the_key(service: RunningServer) -> None:
    user_key = service.key(TENANT, "user", "kim")
    with service.client(user_key) as c:
        too_many = c.post("/api/import", content=b"{}\n" * 60_000)
        assert too_many.status_code == 413 and "lines" in error_of(too_many)["message"]
        too_big = c.post("/api/import", content=b" " * (9 * 1024 * 1024))
        assert too_big.status_code == 413 and error_of(too_big)["code"] == "too_large"


def test_jobs_are_private_to_their_tenant_and_user(service: RunningServer) -> None:
    key = service.key(TENANT, "user", "lee")
    with service.client(key) as c:
        job = c.post("/api/import", content=b"").json()["job"]
        assert c.get(f"/api/import/{job}").status_code == 200
    with service.client(service.key(TENANT, "user", "max")) as other:
        assert other.get(f"/api/import/{job}").status_code == 404
    with service.client(service.key("import-elsewhere", "admin")) as elsewhere:
        assert elsewhere.get(f"/api/import/{job}").status_code == 404
        assert elsewhere.get("/api/import/0123456789abcdef").status_code == 404


async def test_an_interrupted_job_resumes_after_its_last_batch(tmp_path: Path, loop: learnloop.Loop) -> None:
    jobs = ImportJobs(tmp_path / "jobs", ImportSettings(batch_size=20, pause_share=0.5))
    body = "\n".join(json.dumps({"text": f"Resumed brew {i} used {i % 9 + 1} kg of malt"}) for i in range(200)).encode()

    async def chunks():  # type: ignore[no-untyped-def]
        yield body

    job, size, lines = await jobs.spool(chunks(), (10**9, 10**6))
    jobs.create(job, loop.tenant, "nia", "import", size, lines)
    jobs.start(job, loop)
    while jobs.get(job, loop.tenant, None).report.last_line == 0:  # noqa: ASYNC110 - clients poll the state too
        await asyncio.sleep(0.01)
    await jobs.stop()  # as on shutdown
    stopped = jobs.get(job, loop.tenant, None)
    assert stopped.status == "interrupted" and 0 < stopped.report.imported < 200
    jobs.resumable(job, loop.tenant, None)
    jobs.start(job, loop)
    await jobs.wait(job)
    finished = jobs.get(job, loop.tenant, None)
    assert finished.status == "done" and finished.report.last_line == 200
    assert (await loop.list(owner="nia", limit=1)).total == 200
    assert finished.report.imported + finished.report.skipped_existing == 200
