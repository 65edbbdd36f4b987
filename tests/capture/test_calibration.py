"""Calibration places each threshold at its shipped rank among unrelated pairs, and a calibrated policy is a
file the settings load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from learnloop.capture.calibration import RANKS, calibrate, load_policy, save_policy
from learnloop.capture.dedupe import DedupePolicy
from learnloop.cli.main import cli
from learnloop.errors import ValidationError

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "data" / "dedupe" / "tuning.jsonl"


def test_thresholds_sit_at_their_ranks_among_unrelated_pairs() -> None:
    unrelated = [i / 100_000 for i in range(100_000)]  # uniform on [0, 1)
    policy = calibrate(unrelated, "openai:text-embedding-3-small")
    assert policy.calibrated and policy.model == "openai:text-embedding-3-small"
    for name, rank in RANKS.items():
        assert getattr(policy, name) == pytest.approx(rank, abs=1e-3)
    with pytest.raises(ValidationError):
        calibrate(unrelated[:500], "x")


def test_a_saved_policy_loads_back(tmp_path: Path) -> None:
    policy = DedupePolicy(paraphrase_similarity=0.5, model="openai:x")
    save_policy(policy, tmp_path / "p.json")
    assert load_policy(tmp_path / "p.json") == policy


def test_the_cli_calibrates_on_labelled_pairs_and_scores_them(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("\n".join(CORPUS.read_text("utf-8").splitlines()[:160]) + "\n", "utf-8")
    out = tmp_path / "policy.json"
    result = CliRunner().invoke(cli, ["--json", "calibrate", str(pairs), "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output.strip().splitlines()[-1])
    assert report["unrelated_pairs"] == 160 * 159 and report["written"] == str(out)
    assert set(report["calibrated"]) == {"kept_apart", "stale_gone", "one_live"}
    assert load_policy(out).calibrated
