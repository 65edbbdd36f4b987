"""API keys: stored hashed, revocable, managed from the CLI; `learnloop serve` prints a first admin key."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from learnloop.cli.main import cli
from learnloop.errors import ValidationError
from learnloop.server.keys import issue_key, parse_key, verify
from learnloop.server.state import service_store_for
from tests.server.conftest import RunningServer, error_of, file_contains

pytestmark = pytest.mark.server

KEY = re.compile(r"ll_[0-9a-f]{16}_[A-Za-z0-9_-]+")


def test_issue_parse_verify() -> None:
    issued = issue_key("acme", "user", user="alice")
    key_id, secret = parse_key(issued.key) or ("", "")
    assert key_id == issued.record.key_id and verify(issued.record, secret)
    assert not verify(issued.record, secret[:-1] + ("A" if secret[-1] != "A" else "B"))
    assert issued.record.digest != secret and secret not in repr(issued.record)
    assert parse_key("ll_short_x") is None and parse_key("") is None
    with pytest.raises(ValidationError):
        issue_key("acme", "user")  # a user-bound key needs its user
    with pytest.raises(ValidationError):
        issue_key("acme", "app", user="alice")


def test_keys_are_stored_hashed_and_revocable(service: RunningServer) -> None:
    key = service.key("keys-revoke", "app")
    key_id, secret = parse_key(key) or ("", "")
    with service.client(key) as c:
        assert c.get("/api/me").json() == {"tenant": "keys-revoke", "role": "app", "user": None, "key_id": key_id}
    conn = sqlite3.connect(service.db)
    stored = conn.execute("SELECT salt, digest FROM api_keys WHERE key_id = ?", (key_id,)).fetchone()
    conn.close()
    assert stored is not None and secret not in stored
    assert not file_contains(service.db, secret.encode())
    assert not file_contains(service.db.with_name(service.db.name + "-wal"), secret.encode())
    revoked = service.call(service_store_for(service.loop).revoke_key(key_id, datetime.now(UTC)))
    assert revoked
    time.sleep(2.1)  # accepted keys are cached for 2 s per process
    with service.client(key) as c:
        response = c.get("/api/me")
        assert response.status_code == 401 and "revoked" in error_of(response)["message"]


def test_cli_create_list_revoke(tmp_path: Path) -> None:
    db = str(tmp_path / "keys.db")
    runner = CliRunner()
    created = runner.invoke(
        cli, ["--db", db, "--tenant", "acme", "--json", "keys", "create", "--role", "user", "--user", "ann"]
    )
    assert created.exit_code == 0, created.output
    row = json.loads(created.output)
    assert row["role"] == "user" and row["user"] == "ann" and KEY.fullmatch(row["key"])
    listed = runner.invoke(cli, ["--db", db, "--tenant", "acme", "keys", "list"])
    assert row["key_id"] in listed.output and "active" in listed.output and row["key"] not in listed.output
    assert runner.invoke(cli, ["--db", db, "--tenant", "other", "keys", "list"]).output.startswith("no keys yet")
    assert runner.invoke(cli, ["--db", db, "keys", "list", "--all-tenants"]).output.count(row["key_id"]) == 1
    assert runner.invoke(cli, ["--db", db, "keys", "revoke", row["key_id"]]).exit_code == 0
    again = runner.invoke(cli, ["--db", db, "keys", "revoke", row["key_id"]])
    assert again.exit_code != 0 and "no active key" in again.output
    bad = runner.invoke(cli, ["--db", db, "keys", "create", "--role", "user"])
    assert bad.exit_code != 0 and "needs a user" in bad.output


def test_serve_first_run_prints_url_and_one_admin_key(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEARNLOOP_")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2] / "src")
    command = [sys.executable, "-m", "learnloop", "serve", "--port", "0", "--log-level", "warning"]
    for run in (1, 2):
        process = subprocess.Popen(
            command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            lines: list[str] = []
            assert process.stdout is not None
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                line = process.stdout.readline()
                lines.append(line)
                if line.startswith("More keys") or (run == 2 and "OpenAPI" in line):
                    break
            output = "".join(lines)
            url = re.search(r"at (http://\S+)", output)
            assert url, output
            keys = KEY.findall(output)
            if run == 1:
                assert len(keys) == 1, output
                first_key = keys[0]
                with httpx.Client(base_url=url.group(1)) as c:
                    me = c.get("/api/me", headers={"Authorization": f"Bearer {first_key}"}).json()
                    assert me["role"] == "admin" and me["tenant"] == "default"
            else:
                assert keys == [], "the admin key is printed on the first run only"
        finally:
            process.terminate()
            process.wait(timeout=30)
    assert (tmp_path / "learnloop.db").exists()  # the embedded default: a file in the working folder


def test_key_names_and_user_ids_are_checked() -> None:
    with pytest.raises(ValidationError):
        issue_key("acme", "user", user="not valid!")
    with pytest.raises(ValueError, match="root"):
        issue_key("acme", "root")
