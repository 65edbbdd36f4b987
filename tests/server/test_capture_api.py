"""Capture, recall and administration endpoints through a real server."""

from __future__ import annotations

import base64
import json
import time

import numpy as np
import pytest

from tests.server.conftest import RunningServer, error_of, file_contains

pytestmark = pytest.mark.server

TENANT = "capture-api"


@pytest.fixture(scope="module")
def key(service: RunningServer) -> str:
    return service.key(TENANT, "admin")


def test_save_learning_outcomes(service: RunningServer, key: str) -> None:
    text = "Eve's Brewzilla 35L loses 4.2 litres per hour to boil-off"
    first = service.save(key, text, "equipment", "eve", source_context="Pale Ale brew day")
    assert first["ok"] and first["action"] == "created"
    assert first["content"] == f"Saved learning #{first['learning_id']} (equipment)."
    assert first["learning"]["source"]["context"] == "Pale Ale brew day"
    assert first["learning"]["origin"] == "tool"
    again = service.save(key, text, "equipment", "eve")
    assert again["action"] in ("skipped", "merged") and again["related_id"] == first["learning_id"]
    with service.client(key) as c:
        as_string = c.post(
            "/api/tools/save_learning",
            json={
                "arguments": json.dumps({"learning": "Eve prefers a 60 minute mash", "category": "technique"}),
                "user": "eve",
                "session": "s-1",
            },
        ).json()
        assert as_string["action"] == "created" and as_string["learning"]["source"]["session"] == "s-1"
        refused = c.post(
            "/api/tools/save_learning",
            json={
                "arguments": {"learning": "The deploy key is AKIAEB5XOOTJGCPXMER3", "category": "equipment"},
                "user": "eve",
            },
        )
        assert refused.status_code == 200
        assert refused.json()["ok"] is False and refused.json()["action"] == "refused"
        assert refused.json()["rule"]
        bad_category = c.post(
            "/api/tools/save_learning",
            json={"arguments": {"learning": "x is 5", "category": "astrology"}, "user": "eve"},
        )
        assert bad_category.status_code == 422
        assert error_of(bad_category)["allowed"] == ["equipment", "technique", "recipe", "ingredient", "correction"]
        for arguments in ({"learning": "x"}, "{oops", "[1, 2]", {"learning": 5, "category": "recipe"}):
            response = c.post("/api/tools/save_learning", json={"arguments": arguments, "user": "eve"})
            assert response.status_code == 422, (arguments, response.text)
            assert error_of(response)["code"] == "validation_error"
        deep = c.post("/api/tools/save_learning", json={"arguments": "[" * 5000 + "]" * 5000, "user": "eve"})
        assert deep.status_code == 422
        # The refusal left no event, but its count (never its text) is persisted for the metrics.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            metrics = c.get("/api/metrics", params={"days": 1}).json()
            if metrics["totals"]["refusals"]:
                break
            time.sleep(0.1)
        assert metrics["totals"]["refusals"] == 1
        assert sum(metrics["totals"]["refusals_by_rule"].values()) == 1
        assert metrics["totals"]["saves"] == 2
    for path in (service.db, service.db.with_name(service.db.name + "-wal")):
        assert not file_contains(path, b"AKIAEB5XOOTJGCPXMER3")


def test_retrieve_and_observe_close_the_loop(service: RunningServer, key: str) -> None:
    learning_id = service.save(key, "Finn's mash tun dead space is 2 litres", "equipment", "finn")["learning_id"]
    with service.client(key) as c:
        result = c.post("/api/retrieve", json={"query": "how much wort stays in the mash tun?", "user": "finn"}).json()
        assert result["items"][0]["learning"]["id"] == learning_id
        assert result["items"][0]["why"] and result["items"][0]["score"] > 0
        assert "Finn's mash tun dead space is 2 litres" in result["block"]
        filtered = c.post(
            "/api/retrieve",
            json={"query": "mash tun", "user": "finn", "categories": ["recipe"], "limits": {"top_k": 2}},
        ).json()
        assert filtered["items"] == []
        # The user says the answer was wrong: the learning that was shown gets the negative feedback.
        c.post(
            "/api/observe",
            json={
                "user_message": "How much is left in my mash tun?",
                "user": "finn",
                "session": "f1",
                "retrieved_ids": [learning_id],
            },
        ).raise_for_status()
        feedback = c.post(
            "/api/observe",
            json={"user_message": "That's wrong, it didn't work", "user": "finn", "session": "f1"},
        ).json()
        assert feedback["feedback"]["score"] < 0
        assert learning_id in feedback["feedback"]["demoted"] + feedback["feedback"]["deprecated"]
        bad = c.post("/api/retrieve", json={"query": "", "user": "finn"})
        assert bad.status_code == 422
        assert c.post("/api/retrieve", json={"query": "x", "limits": {"top_k": 0}}).status_code == 422


def test_observe_names_the_channel_and_a_copy_from_another_channel_is_a_duplicate(
    service: RunningServer, key: str
) -> None:
    turn = {"user_message": "I brew on a Grainfather G30 now.", "user": "gina"}
    with service.client(key) as c:
        first = c.post("/api/observe", json={**turn, "session": "tg-1", "channel": "telegram"}).json()
        again = c.post("/api/observe", json={**turn, "session": "web-1", "channel": "web"}).json()
        assert not first["duplicate"] and again["duplicate"] and again["session"] == "tg-1"
        bad = c.post("/api/observe", json={**turn, "channel": "two words"})
        assert bad.status_code == 422 and error_of(bad)["code"] == "validation_error"


def test_tool_schemas_and_prompt_follow_the_vocabulary(service: RunningServer, key: str) -> None:
    with service.client(key) as c:
        openai = c.get("/api/tools/schema").json()
        assert openai["function"]["name"] == "save_learning"
        enum = openai["function"]["parameters"]["properties"]["category"]["enum"]
        assert enum == ["equipment", "technique", "recipe", "ingredient", "correction"]
        assert c.get("/api/tools/schema", params={"format": "anthropic"}).json()["input_schema"]["required"] == [
            "learning",
            "category",
        ]
        assert "inputSchema" in c.get("/api/tools/schema", params={"format": "mcp", "name": "remember"}).json()
        assert c.get("/api/tools/schema", params={"format": "xml"}).status_code == 422
        prompt = c.get("/api/prompt/proactive-learning").json()
        assert prompt["text"].startswith("## Proactive Learning")
        vocabulary = {
            "namespace": "notes",
            "categories": [
                {"name": "style", "description": "How the user writes"},
                {"name": "fact", "description": "Facts"},
            ],
        }
        assert c.put("/api/vocabulary", json=vocabulary).json()["namespace"] == "notes"
        schema = c.get("/api/tools/schema", params={"namespace": "notes"}).json()
        assert schema["function"]["parameters"]["properties"]["category"]["enum"] == ["style", "fact"]
        assert "notes" in [v["namespace"] for v in c.get("/api/vocabularies").json()]
        duplicate = dict(vocabulary, categories=vocabulary["categories"] * 2)
        assert c.put("/api/vocabulary", json=duplicate).status_code == 422
    with service.client(service.key(TENANT, "app")) as app:
        denied = app.put("/api/vocabulary", json=vocabulary)
        assert denied.status_code == 403 and error_of(denied)["code"] == "permission_denied"
        assert app.get("/api/vocabulary", params={"namespace": "notes"}).status_code == 200


def test_export_import_round_trip(service: RunningServer, key: str) -> None:
    service.save(key, "Gus ferments lagers at 10 °C", "technique", "gus")
    service.save(key, "Gus's keezer holds four kegs", "equipment", "gus")
    with service.client(key) as c:
        exported = c.get("/api/export", params={"user": "gus"})
        assert exported.headers["content-type"].startswith("application/x-ndjson")
        learnings = [json.loads(line) for line in exported.text.splitlines() if "text" in json.loads(line)]
        assert len(learnings) == 2 and all(line["user"] == "gus" for line in learnings)
    other = service.key("capture-import", "admin")
    with service.client(other) as c:
        posted = c.post(
            "/api/import",
            params={"wait": "true"},
            content=exported.text,
            headers={"content-type": "application/x-ndjson"},
        )
        assert posted.status_code == 200 and posted.json()["status"] == "done"
        report = posted.json()["report"]
        assert report["imported"] == 2 and report["reembedded"] == 0
        again = c.post("/api/import", params={"wait": "true"}, content=exported.text).json()["report"]
        assert again["imported"] == 0 and again["skipped_existing"] == 2
        broken = exported.text + '{"text": ""}\n'
        rejected = c.post("/api/import", params={"wait": "true"}, content=broken).json()["report"]
        bad_line = len(exported.text.splitlines()) + 1
        assert rejected["rejected"] == 1 and rejected["rejected_lines"][0]["line"] == bad_line
        # A vector of this server's model must be sound (the importer checks it and rejects the line).
        model, dimension = service.loop.engine.embedder.model_id, service.loop.engine.embedder.dimension
        bad_vectors = {
            "!!!": "not valid base64",
            base64.b64encode(np.ones(dimension - 1, dtype=np.float32).tobytes()).decode(): "dimensions",
            base64.b64encode(np.full(dimension, np.nan, dtype=np.float32).tobytes()).decode(): "non-finite",
        }
        for embedding, problem in bad_vectors.items():
            line = json.dumps({"text": "Gus likes IPAs", "embedding": embedding, "embedding_model": model})
            job = c.post("/api/import", params={"wait": "true"}, content=line).json()
            [only] = job["report"]["rejected_lines"]
            assert only["line"] == 1 and problem in only["reason"], job
        deep = '{"vocabulary": ' + "[" * 100_000 + "]" * 100_000 + "}"
        assert (
            "deeply"
            in c.post("/api/import", params={"wait": "true"}, content=deep).json()["report"]["rejected_lines"][0][
                "reason"
            ]
        )
        not_text = c.post("/api/import", params={"wait": "true"}, content=b"\xff\xfe").json()["report"]
        assert "UTF-8" in not_text["rejected_lines"][0]["reason"]
        assert c.get("/api/learnings", params={"user": "gus"}).json()["total"] == 2


def test_forget_user(service: RunningServer, key: str) -> None:
    service.save(key, "Hal's kettle is 40 litres", "equipment", "hal")
    with service.client(key) as c:
        removed = c.delete("/api/users/hal").json()
        assert removed["learnings"] == 1
        assert c.get("/api/learnings", params={"user": "hal"}).json()["total"] == 0
        assert c.delete("/api/users/not%20valid").status_code == 422


def test_metrics_json_and_prometheus(service: RunningServer, key: str) -> None:
    learning_id = service.save(key, "Ivy's hop spider holds 200 g", "equipment", "ivy")["learning_id"]
    with service.client(key) as c:
        c.post(f"/api/learnings/{learning_id}/deprecate", json={"reason": "replaced"}).raise_for_status()
        c.post("/api/retrieve", json={"query": "hop spider capacity", "user": "ivy"}).raise_for_status()
        c.post("/api/retrieve", json={"query": "zzz qqq", "user": "nobody-here"}).raise_for_status()
        time.sleep(0.3)  # retrieval events are written in the background
        metrics = c.get("/api/metrics", params={"days": 1}).json()
        assert metrics["bucket"] == "hour"
        assert metrics["learnings"]["by_status"]["deprecated"] >= 1
        assert metrics["learnings"]["by_origin"]["tool"] >= 1
        assert metrics["totals"]["deprecations"] >= 1
        assert metrics["totals"]["retrievals"] >= 2
        assert 0 < metrics["totals"]["retrieval_hit_rate"] < 1
        last = metrics["series"][-1]
        assert last["deprecated"] == metrics["learnings"]["by_status"]["deprecated"]
        assert last["verified"] == metrics["learnings"]["by_status"]["verified"]
        assert sum(p["saves"] for p in metrics["series"]) == metrics["totals"]["saves"]
        assert len(c.get("/api/metrics", params={"days": 30}).json()["series"]) in (30, 31)
        text = c.get("/metrics", headers={"accept": "text/plain"})
        assert text.headers["content-type"].startswith("text/plain")
        assert f'learnloop_learnings{{tenant="{TENANT}",status="deprecated",origin="tool"}}' in text.text
        assert "learnloop_retrieval_hit_ratio" in text.text
    with service.client() as anonymous:
        assert anonymous.get("/metrics").status_code == 401


def test_tenant_wide_writes_name_their_user_or_say_global(service: RunningServer) -> None:
    """An admin or app key that names no user is refused (422 user_required) instead of saving a learning
    that every user of the tenant would be shown; `"global": true` says that is what is meant."""
    tenant = "capture-owner"
    app, ulla = service.key(tenant, "app"), service.key(tenant, "user", "ulla")
    save = {"arguments": {"learning": "Ulla's kettle holds 25 litres", "category": "equipment"}}
    turn = {"user_message": "Actually my kettle holds 26 litres, not 25.", "assistant_message": "Noted."}
    with service.client(app) as c:
        for path, body in (("/api/tools/save_learning", save), ("/api/observe", turn)):
            missing = c.post(path, json=body)
            assert missing.status_code == 422 and error_of(missing)["code"] == "user_required", missing.text
            assert "global" in error_of(missing)["message"]
            both = c.post(path, json={**body, "user": "ulla", "global": True})
            assert both.status_code == 422 and error_of(both)["code"] == "validation_error"
        assert c.get("/api/learnings").json()["total"] == 0  # nothing was written

        shared = c.post("/api/tools/save_learning", json={**save, "global": True}).json()
        assert shared["action"] == "created" and shared["learning"]["user"] is None
        mash = {"arguments": {"learning": "Ulla's mash tun holds 30 litres", "category": "equipment"}}
        own = c.post("/api/tools/save_learning", json={**mash, "user": "ulla"}).json()
        assert own["action"] == "created" and own["learning"]["user"] == "ulla"
    with service.client(ulla) as c:
        # A user-bound key writes for its user; tenant-global learnings are not its to write.
        denied = c.post("/api/tools/save_learning", json={**save, "global": True})
        assert denied.status_code == 403 and error_of(denied)["code"] == "permission_denied"
        assert c.post("/api/observe", json=turn).status_code == 200
