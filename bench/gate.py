"""Write-gate speed and refusal rates over the test corpora, or refusal counts on your own texts.

    python bench/gate.py                  # table: µs per check (p50/p95) and refusal rate per corpus
    python bench/gate.py --json           # one JSON object
    python bench/gate.py --data FILE      # one text per line: refusals by rule (add --json for JSON)

Each corpus line is checked `--repeat` times (default 20); the timing is per `WriteGate.check` call on one
text, measured with perf_counter_ns, so it includes normalisation and every rule that runs. The "~200-char"
row times benign learnings joined into texts of 170-200 characters, the size the design targets.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import emit_json, percentile, print_table
from learnloop.capture.gate import WriteGate

CORPORA = Path(__file__).resolve().parent.parent / "tests" / "capture" / "corpora"
EXPECTED = {"secrets_pii": "refuse", "benign": "allow", "injections": "refuse", "unstable": "refuse"}


def read_lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def whole_sentences(lines: list[str], low: int, high: int) -> list[str]:
    """Benign learnings joined into texts of `low`..`high` characters, never cutting one in the middle."""
    texts, current = [], ""
    for line in lines:
        if len(current) + 1 + len(line) > high:
            if len(current) >= low:
                texts.append(current)
            current = line
        else:
            current = f"{current} {line}".strip()
    return texts


def time_checks(gate: WriteGate, texts: list[str], repeat: int) -> list[float]:
    samples: list[float] = []
    check = gate.check
    for _ in range(repeat):
        for text in texts:
            start = time.perf_counter_ns()
            check(text)
            samples.append((time.perf_counter_ns() - start) / 1000)
    return samples


def corpora_figures(gate: WriteGate, repeat: int) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    sets = {name: read_lines(CORPORA / f"{name}.txt") for name in EXPECTED}
    sets["~200-char"] = whole_sentences(sets["benign"], 170, 200)
    for name, texts in sets.items():
        verdicts = [gate.check(text) for text in texts]
        refused = sum(not v.allowed for v in verdicts)
        samples = time_checks(gate, texts, repeat)
        figures[name] = {
            "texts": len(texts),
            "refused": refused,
            "refused_pct": round(100 * refused / len(texts), 2),
            "by_kind": dict(Counter(v.kind for v in verdicts if v.kind)),
            "p50_us": round(percentile(samples, 50), 1),
            "p95_us": round(percentile(samples, 95), 1),
            "mean_chars": round(sum(map(len, texts)) / len(texts), 1),
        }
    return figures


def data_figures(gate: WriteGate, path: Path) -> dict[str, Any]:
    texts = read_lines(path)
    verdicts = [gate.check(text) for text in texts]
    by_rule = Counter(v.rule for v in verdicts if not v.allowed)
    return {
        "file": str(path),
        "texts": len(texts),
        "refused": sum(by_rule.values()),
        "by_rule": dict(by_rule.most_common()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    parser.add_argument("--data", type=Path, help="a file with one text per line: count refusals by rule")
    parser.add_argument("--repeat", type=int, default=20, help="timing passes over each corpus")
    args = parser.parse_args(argv)
    gate = WriteGate()

    if args.data:
        figures = data_figures(gate, args.data)
        if args.json:
            emit_json(figures)
        else:
            rows = [[rule, n] for rule, n in figures["by_rule"].items()]
            title = f"{args.data}: {figures['refused']} of {figures['texts']} texts refused"
            print_table(title, ["rule", "refused"], rows or [["(none)", 0]])
        return 0

    figures = corpora_figures(gate, args.repeat)
    if args.json:
        emit_json({"gate": figures})
        return 0
    rows = [
        [
            name,
            EXPECTED.get(name, "allow"),
            f["texts"],
            f["mean_chars"],
            f"{f['refused_pct']}%",
            f["p50_us"],
            f["p95_us"],
        ]
        for name, f in figures.items()
    ]
    header = ["corpus", "expected", "texts", "mean chars", "refused", "p50 µs", "p95 µs"]
    print_table("Write gate: refusal rate and time per check", header, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
