"""The report as a picture: the learning curve of both arms, and each outcome's difference with its 95%
interval beside a zero line (one row per outcome, per experiment). SVG is written here with no dependency; PNG
goes through matplotlib (`pip install 'learnloop[report]'`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from ..errors import ConfigurationError
from .report import ExperimentReport, HoldbackReport

__all__ = ["report_png", "report_svg"]

_COLORS = {"memory": "#2563eb", "holdback": "#b91c1c", "aa": "#6b7280"}
_W, _CURVE_H, _ROW_H = 900, 260, 26
_M = {"left": 190, "right": 24, "top": 36, "bottom": 34}


@dataclass(frozen=True)
class _Row:
    """One outcome with an interval: the experiment it belongs to, its name, and where to draw it."""

    experiment: str
    name: str
    effect: str
    difference: float
    low: float
    high: float


def _rows(report: HoldbackReport) -> list[_Row]:
    rows = []
    for e in report.experiments:
        for o in e.outcomes:
            if o.low is None or o.high is None or o.difference is None:
                continue
            name = ("A/A " if e.experiment == "aa" else "") + o.label
            rows.append(_Row(e.experiment, name, o.effect, o.difference, o.low, o.high))
    return rows


def _main(report: HoldbackReport) -> ExperimentReport | None:
    return next((e for e in report.experiments if e.experiment == "holdback"), None) or (
        report.experiments[0] if report.experiments else None
    )


def _text(x: float, y: float, text: str, size: int = 12, anchor: str = "start", fill: str = "#111827") -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{fill}" '
        f'font-family="sans-serif">{escape(text)}</text>'
    )


def report_svg(report: HoldbackReport) -> str:
    """A standalone SVG document of the report."""
    rows = _rows(report)
    height = _CURVE_H + 60 + _ROW_H * max(1, len(rows)) + 40
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_W} {height}" width="{_W}" height="{height}" '
        'role="img">',
        f'<rect width="{_W}" height="{height}" fill="#ffffff"/>',
        _text(16, 22, f"Does memory help? Tenant {report.tenant}", 15),
    ]
    out += _curve_svg(_main(report))
    out += _intervals_svg(rows, _CURVE_H + 40)
    out.append(_text(16, height - 14, report.verdict[:150], 12, fill="#374151"))
    out.append("</svg>")
    return "\n".join(out)


def _curve_svg(experiment: ExperimentReport | None) -> list[str]:
    left, top, right, bottom = _M["left"], _M["top"], _W - _M["right"], _CURVE_H - _M["bottom"]
    out = [_text(16, top + 8, "Feedback score by", 12), _text(16, top + 24, "the user's turn number", 12)]
    if experiment is None or not experiment.curve:
        return [*out, _text(left, top + 60, "No turns under an experiment yet.", 13, fill="#6b7280")]
    points = experiment.curve
    lo, hi = -1.0, 1.0

    def x(i: int) -> float:
        return left + (i + 0.5) * (right - left) / len(points)

    def y(v: float) -> float:
        return bottom - (v - lo) / (hi - lo) * (bottom - top)

    for tick in (-1.0, -0.5, 0.0, 0.5, 1.0):
        color = "#9ca3af" if tick == 0 else "#e5e7eb"
        out.append(f'<line x1="{left}" x2="{right}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="{color}"/>')
        out.append(_text(left - 6, y(tick) + 4, f"{tick:+.1f}", 11, "end", "#6b7280"))
    for i, point in enumerate(points):
        out.append(_text(x(i), _CURVE_H - 14, point.turns, 11, "middle", "#6b7280"))
    for arm in ("memory", "holdback"):
        label = arm if experiment.experiment == "holdback" else f"{arm} (A/A: both get memory)"
        values = [(x(i), getattr(p, arm)) for i, p in enumerate(points)]
        coords = " ".join(f"{px:.1f},{y(v):.1f}" for px, v in values if v is not None)
        color = _COLORS[arm]
        if coords:
            out.append(f'<polyline points="{coords}" fill="none" stroke="{color}" stroke-width="2"/>')
        for px, v in values:
            if v is not None:
                out.append(f'<circle cx="{px:.1f}" cy="{y(v):.1f}" r="3" fill="{color}"/>')
        legend_y = top + 50 + (0 if arm == "memory" else 18)
        out.append(f'<rect x="16" y="{legend_y - 9}" width="10" height="10" fill="{color}"/>')
        out.append(_text(32, legend_y, label, 12))
    return out


def _intervals_svg(rows: list[_Row], top: float) -> list[str]:
    left, right = _M["left"] + 150, _W - _M["right"] - 20
    out = [_text(16, top, "Memory − holdback, 95% interval (bootstrap over users)", 13)]
    if not rows:
        return [*out, _text(16, top + 26, "Too few users in an arm for an interval yet.", 12, fill="#6b7280")]
    extent = max(1e-9, *(max(abs(r.low), abs(r.high)) for r in rows)) * 1.1

    def x(v: float) -> float:
        return left + (v + extent) / (2 * extent) * (right - left)

    bottom = top + 12 + _ROW_H * len(rows)
    out.append(f'<line x1="{x(0):.1f}" x2="{x(0):.1f}" y1="{top + 8}" y2="{bottom}" stroke="#9ca3af"/>')
    for i, o in enumerate(rows):
        cy = top + 12 + _ROW_H * (i + 0.5)
        name = o.name
        color = _COLORS["aa"] if o.experiment == "aa" else _COLORS["memory"]
        if o.effect == "worse":
            color = _COLORS["holdback"]
        out.append(_text(16, cy + 4, name, 12))
        out.append(
            f'<line x1="{x(o.low):.1f}" x2="{x(o.high):.1f}" y1="{cy:.1f}" y2="{cy:.1f}" '
            f'stroke="{color}" stroke-width="3"/>'
        )
        out.append(f'<circle cx="{x(o.difference):.1f}" cy="{cy:.1f}" r="4" fill="{color}"/>')
        out.append(_text(right + 14, cy + 4, o.effect, 11, "end", "#6b7280"))
    return out


def report_png(report: HoldbackReport, path: str | Path) -> Path:
    """Write the report's chart as a PNG (needs matplotlib: `pip install 'learnloop[report]'`)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ConfigurationError("PNG charts need matplotlib: pip install 'learnloop[report]'") from exc
    rows = _rows(report)
    main = _main(report)
    figure, (curve, intervals) = plt.subplots(
        2, 1, figsize=(9, 4 + 0.35 * max(1, len(rows))), gridspec_kw={"height_ratios": [3, max(1, len(rows)) * 0.5]}
    )
    figure.suptitle(f"Does memory help? Tenant {report.tenant}")
    if main is not None and main.curve:
        labels = [p.turns for p in main.curve]
        for arm in ("memory", "holdback"):
            values = [getattr(p, arm) for p in main.curve]
            positions = [i for i, v in enumerate(values) if v is not None]
            curve.plot(positions, [values[i] for i in positions], marker="o", color=_COLORS[arm], label=arm)
        curve.set_xticks(range(len(labels)), labels)
        curve.legend(loc="lower right")
    curve.set_ylim(-1, 1)
    curve.axhline(0, color="#9ca3af", linewidth=0.8)
    curve.set_xlabel("the user's turn number")
    curve.set_ylabel("feedback score")
    names = []
    for i, o in enumerate(rows):
        color = _COLORS["aa"] if o.experiment == "aa" else _COLORS["memory"]
        intervals.plot([o.low, o.high], [i, i], color=color, linewidth=3)
        intervals.plot([o.difference], [i], "o", color=color)
        names.append(o.name)
    intervals.axvline(0, color="#9ca3af", linewidth=0.8)
    intervals.set_yticks(range(len(names)), names)
    intervals.invert_yaxis()
    intervals.set_xlabel("memory − holdback, 95% interval (bootstrap over users)")
    figure.text(0.01, 0.005, report.verdict[:150], fontsize=8)
    figure.tight_layout(rect=(0, 0.03, 1, 1))
    target = Path(path)
    figure.savefig(target, format="png", dpi=100)
    plt.close(figure)
    return target
