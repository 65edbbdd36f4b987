"""`learnloop identities`: resolve two channels, link them with a code, show the user, unlink, from the shell."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_cli import learnloop


def test_identities_from_the_shell(tmp_path: Path) -> None:
    db = tmp_path / "identities.db"
    tg = json.loads(
        learnloop(db, "--json", "identities", "resolve", "telegram", "123456789", "--username", "ana").stdout
    )
    wa = json.loads(learnloop(db, "--json", "identities", "resolve", "whatsapp", "+447700900123").stdout)
    assert tg["created"] and tg["user"] != wa["user"]
    code = json.loads(learnloop(db, "--json", "identities", "link-code", "telegram", "123456789").stdout)["code"]
    wrong = learnloop(db, "identities", "link", "whatsapp", "+447700900123", "WRONG123", check=False)
    assert wrong.returncode != 0 and "nothing was linked" in wrong.stderr
    assert f"linked to {tg['user']}" in learnloop(db, "identities", "link", "whatsapp", "+447700900123", code).stdout
    shown = learnloop(db, "identities", "show", tg["user"]).stdout
    assert "telegram" in shown and "@ana" in shown and "•••0123" in shown and "7700" not in shown
    assert f"merged from: {wa['user']}" in shown
    assert learnloop(db, "identities", "finish-merges").stdout.strip() == "finished 0 merges"  # none cut short
    gone = json.loads(learnloop(db, "--json", "identities", "unlink", "whatsapp", "+447700900123").stdout)
    assert gone["previous_user"] == tg["user"]
