"""`learnloop profile`: show, learn, set and forget a user's profile from the shell, on a real file."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_cli import learnloop


def test_profile_from_the_shell(tmp_path: Path) -> None:
    db = tmp_path / "profile.db"
    read = json.loads(learnloop(db, "--json", "profile", "learn", "alice", "top products by revenue last month").stdout)
    assert read == {
        "coarse": "products",
        "fine": "products_ranking_revenue_last_month",
        "complexity": "simple",
        "metrics": ["revenue"],
        "time_range": "last_month",
    }
    learnloop(db, "profile", "learn", "alice", "revenue last month")
    shown = learnloop(db, "profile", "show", "alice").stdout
    assert "interactions: 2" in shown and "favourite metrics: revenue" in shown
    assert "preferred time range: last_month" in shown
    edited = json.loads(learnloop(db, "--json", "profile", "set", "alice", "--time-range", "last_7_days").stdout)
    assert edited["preferred_time_range"] == "last_7_days"
    assert "--value needs --kind" in learnloop(db, "profile", "forget", "alice", "--value", "x", check=False).stderr
    assert learnloop(db, "profile", "forget", "alice", "--yes").stdout.startswith("removed ")
    missing = learnloop(db, "profile", "show", "alice", check=False)
    assert missing.returncode != 0 and "no profile for user 'alice'" in missing.stderr
