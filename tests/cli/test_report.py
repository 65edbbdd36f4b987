"""`learnloop report` on a database a scripted run filled: the table, the verdict, and the chart as PNG and SVG;
`learnloop holdback` switches the experiment and pins users."""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

import learnloop
from learnloop.holdback.simulation import Population, simulate
from learnloop.turns import TurnConfig
from tests.support.clock import Clock
from tests.test_cli import learnloop as run_cli


@pytest.fixture
async def filled(open_loop: Callable[..., learnloop.Loop], tmp_path: Path) -> Path:
    clock = Clock()
    loop = open_loop("report.db", clock=clock)
    loop.agent.configure(run_workers=False)
    loop.turns.configure(TurnConfig(agent=False))

    def advance(delta: timedelta) -> None:
        clock.now += delta

    try:
        await loop.holdback.configure(share=0.5)
        await simulate(loop, Population(), advance=advance)
    finally:
        await loop.aclose()
    return tmp_path / "report.db"


def test_the_report_prints_both_arms_and_writes_the_chart_as_png_and_svg(filled: Path, tmp_path: Path) -> None:
    png, svg = tmp_path / "holdback.png", tmp_path / "holdback.svg"
    out = run_cli(filled, "report", "--png", str(png), "--svg", str(svg)).stdout
    assert "Memory helps" in out and "learning curve" in out and "95% interval" in out
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk comes first
    assert width == 900 and height > 300
    drawing = svg.read_text()
    assert drawing.startswith("<svg") and "<polyline" in drawing and "Memory helps" in drawing
    figures = json.loads(run_cli(filled, "--json", "report", "--seed", "3").stdout)
    [experiment] = figures["experiments"]
    assert experiment["experiment"] == "holdback" and figures["seed"] == 3


def test_the_experiment_is_switched_and_users_pinned_from_the_shell(tmp_path: Path) -> None:
    db = tmp_path / "switch.db"
    assert "no holdback experiment" in run_cli(db, "holdback", "show").stdout
    assert "tenant default: on, mode aa, share 20%" in run_cli(db, "holdback", "on", "--share", "0.2", "--aa").stdout
    assert "pinned: alice -> holdback" in run_cli(db, "holdback", "pin", "alice", "holdback").stdout
    shown = json.loads(run_cli(db, "--json", "holdback", "off").stdout)
    assert shown["settings"][0]["enabled"] is False and shown["pins"] == {"alice": "holdback"}
    refused = run_cli(db, "holdback", "on", "--share", "2", check=False)
    assert refused.returncode != 0 and "share must be" in refused.stderr
    assert "No turns under a holdback experiment" in run_cli(db, "report").stdout
