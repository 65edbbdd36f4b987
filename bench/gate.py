"""Write-gate speed and refusal rates: over the project's corpus, the test corpora, or your own texts.

    python bench/gate.py                  # tables: the labelled corpus (bench/data/gate/tuning.jsonl and
                                          # holdout.jsonl) per class and per language, µs per check p50/p95,
                                          # then the test corpora
    python bench/gate.py --json           # one JSON object
    python bench/gate.py --data FILE      # a labelled JSONL file ({"text","class","kind","lang"}): per class and
                                          # per language; any other file: one text per line, refusals by rule
    python bench/gate.py --misses         # also list the texts judged wrongly (texts of your own data only)
    python bench/gate.py --data FILE --through-save   # each text through `loop.save()` on a scratch database:
                                          # the whole governed write (validation, gate on text, size limit)
    python bench/gate.py --vectors        # also give the gate each text's MiniLM vector, as the save path
                                          # does (the learned classifier reads it; embedding not timed)

Classes: secret, pii and injection should be refused, benign allowed. A text counts as refused whatever rule
refuses it (an injection carrying a key is still refused); `by_kind` says which kind of rule fired.

The labelled sets: `tuning.jsonl`, `holdout.jsonl` and `learned/test.jsonl` (the poisoning classifier's
frame-held-out split, `bench/data/gate/learned/make_training.py`). The speed table times the whole gate, the
gate without the learned classifier, and (with --vectors) the gate given the vector.

Each corpus line is checked `--repeat` times (default 20); the timing is per `WriteGate.check` call on one
text, measured with perf_counter_ns, so it includes normalisation and every rule that runs. The "~200-char"
row times benign learnings joined into texts of 170-200 characters, the size the design targets.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import emit_json, percentile, print_table
from learnloop.capture.gate import LEARNED_ID, GateVerdict, WriteGate

CORPORA = Path(__file__).resolve().parent.parent / "tests" / "capture" / "corpora"
LABELLED = Path(__file__).resolve().parent / "data" / "gate"
HARMFUL = ("secret", "pii", "injection")
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


def time_checks(gate: WriteGate, texts: list[str], repeat: int, vectors: Any = None) -> list[float]:
    samples: list[float] = []
    check = gate.check
    for _ in range(repeat):
        for i, text in enumerate(texts):
            vector = None if vectors is None else vectors[i]
            start = time.perf_counter_ns()
            check(text, vector)
            samples.append((time.perf_counter_ns() - start) / 1000)
    return samples


def embed_texts(texts: list[str]) -> Any:
    """The default embedder's vectors (the bundled MiniLM), as the save path computes them."""
    from learnloop.config import Settings
    from learnloop.embedders import resolve_embedder

    embedder = resolve_embedder(Settings().embedder, Settings())

    async def run() -> Any:
        return await embedder.embed(texts, purpose="document")

    return asyncio.run(run())


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


def read_labelled(path: Path) -> list[dict[str, str]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [row for row in rows if isinstance(row, dict) and isinstance(row.get("text"), str) and "class" in row]


def _rate(refused: int, n: int) -> float:
    return round(100 * refused / n, 2) if n else 0.0


def labelled_figures(
    gate: WriteGate,
    rows: list[dict[str, str]],
    repeat: int,
    misses: bool,
    verdicts: list[GateVerdict] | None = None,
    vectors: Any = None,
) -> dict[str, Any]:
    """Refusal rate per class and per (class, language); µs per check over every text. `verdicts`, if given,
    are the ones to count (from `loop.save()`); the timing is always of `WriteGate.check` (with `vectors`, each
    text's vector is passed to it)."""
    if verdicts is None:
        verdicts = [gate.check(row["text"], None if vectors is None else vectors[i]) for i, row in enumerate(rows)]
    by_class: dict[str, list[int]] = {}
    by_lang: dict[str, dict[str, list[int]]] = {}
    kinds: dict[str, Counter[str]] = {}
    wrong = []
    for row, verdict in zip(rows, verdicts, strict=True):
        klass, lang = row["class"], row.get("lang", "?")
        refused = not verdict.allowed
        for cell in (by_class.setdefault(klass, [0, 0]), by_lang.setdefault(klass, {}).setdefault(lang, [0, 0])):
            cell[0] += refused
            cell[1] += 1
        kinds.setdefault(klass, Counter())[verdict.kind or "allowed"] += 1
        if refused != (klass in HARMFUL):
            wrong.append({"class": klass, "lang": lang, "rule": verdict.rule, "text": row["text"]})
    samples = time_checks(gate, [row["text"] for row in rows], repeat, vectors)
    harmful_langs: dict[str, list[int]] = {}
    for klass in HARMFUL:
        for lang, (r, n) in by_lang.get(klass, {}).items():
            cell = harmful_langs.setdefault(lang, [0, 0])
            cell[0] += r
            cell[1] += n
    figures: dict[str, Any] = {
        "texts": len(rows),
        "classes": {
            klass: {
                "texts": n,
                "refused": r,
                "refused_pct": _rate(r, n),
                "by_lang": {
                    lang: {"texts": ln, "refused_pct": _rate(lr, ln)} for lang, (lr, ln) in sorted(langs.items())
                },
                "by_kind": dict(kinds[klass].most_common()),
            }
            for klass, (r, n) in sorted(by_class.items())
            for langs in [by_lang[klass]]
        },
        "harmful_by_lang": {
            lang: {"texts": n, "refused_pct": _rate(r, n)} for lang, (r, n) in sorted(harmful_langs.items())
        },
        "p50_us": round(percentile(samples, 50), 1),
        "p95_us": round(percentile(samples, 95), 1),
        "mean_chars": round(sum(len(row["text"]) for row in rows) / max(1, len(rows)), 1),
    }
    if misses:
        figures["misses"] = wrong
    return figures


async def saved_verdicts(rows: list[dict[str, str]]) -> list[GateVerdict]:
    """Each text saved through `loop.save()` on a scratch database; the verdict says refused or not."""
    from learnloop.config import Settings
    from learnloop.embedders import resolve_embedder
    from learnloop.factory import build_engine
    from learnloop.loop import Loop
    from learnloop.stores.sqlite import SQLiteStore

    embedder = resolve_embedder(Settings().embedder, Settings())
    folder = Path(tempfile.mkdtemp(prefix="learnloop-gate-"))
    store = SQLiteStore(folder / "gate.db", embedding_model=embedder.model_id, dimension=embedder.dimension)
    loop = Loop(build_engine(store, embedder))
    verdicts = []
    try:
        for row in rows:
            result = await loop.save(row["text"], user="bench")
            refused = result.action == "refused"
            kind = WriteGate().check(row["text"]).kind if refused else None
            verdicts.append(GateVerdict(not refused, result.reason if refused else None, result.rule, kind))
    finally:
        await loop.aclose()
    return verdicts


def print_labelled(title: str, figures: dict[str, Any]) -> None:
    langs = sorted({lang for c in figures["classes"].values() for lang in c["by_lang"]})
    rows = [
        [klass, "refuse" if klass in HARMFUL else "allow", c["texts"], f"{c['refused_pct']}%"]
        + [f"{c['by_lang'][lang]['refused_pct']}%" if lang in c["by_lang"] else "-" for lang in langs]
        for klass, c in figures["classes"].items()
    ]
    rows.append(
        ["harmful", "refuse", sum(c["texts"] for k, c in figures["classes"].items() if k in HARMFUL), ""]
        + [
            f"{figures['harmful_by_lang'][lang]['refused_pct']}%" if lang in figures["harmful_by_lang"] else "-"
            for lang in langs
        ]
    )
    header = ["class", "expected", "texts", "refused", *langs]
    print_table(
        f"{title}: refused per class and language (p50 {figures['p50_us']} µs, p95 {figures['p95_us']} µs)",
        header,
        rows,
    )
    for miss in figures.get("misses", []):
        print(f"  MISS [{miss['class']}/{miss['lang']}] {miss['rule']}: {miss['text'][:160]}")


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
    parser.add_argument("--misses", action="store_true", help="list the texts judged wrongly (your --data only)")
    parser.add_argument("--through-save", action="store_true", help="count refusals of loop.save() (labelled --data)")
    parser.add_argument("--vectors", action="store_true", help="give the gate each text's vector (as save does)")
    args = parser.parse_args(argv)
    gate = WriteGate()

    if args.data and args.data.suffix == ".jsonl":
        rows = read_labelled(args.data)
        saved = asyncio.run(saved_verdicts(rows)) if args.through_save else None
        vectors = embed_texts([row["text"] for row in rows]) if args.vectors and not saved else None
        figures = labelled_figures(gate, rows, args.repeat, args.misses, saved, vectors)
        figures["through"] = "loop.save()" if args.through_save else "WriteGate.check"
        if args.json:
            emit_json({"file": str(args.data), **figures})
        else:
            print_labelled(str(args.data), figures)
        return 0
    if args.data:
        figures = data_figures(gate, args.data)
        if args.json:
            emit_json(figures)
        else:
            rows = [[rule, n] for rule, n in figures["by_rule"].items()]
            title = f"{args.data}: {figures['refused']} of {figures['texts']} texts refused"
            print_table(title, ["rule", "refused"], rows or [["(none)", 0]])
        return 0

    labelled: dict[str, Any] = {}
    for part in ("tuning", "holdout", "learned/test"):
        rows = read_labelled(LABELLED / f"{part}.jsonl")
        vectors = embed_texts([row["text"] for row in rows]) if args.vectors else None
        labelled[part] = labelled_figures(gate, rows, args.repeat, False, None, vectors)
    figures = corpora_figures(gate, args.repeat)
    speed = speed_figures(gate, args.repeat, args.vectors)
    if args.json:
        emit_json({"gate": figures, "labelled": labelled, "speed": speed})
        return 0
    for part, part_figures in labelled.items():
        print_labelled(f"bench/data/gate/{part}.jsonl", part_figures)
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
    print_table(
        "Write gate: µs per check of ~200-char benign texts, with and without the learned classifier",
        ["gate", "p50 µs", "p95 µs"],
        [[name, f["p50_us"], f["p95_us"]] for name, f in speed.items()],
    )
    return 0


def speed_figures(gate: WriteGate, repeat: int, with_vectors: bool) -> dict[str, dict[str, float]]:
    """The whole gate on ~200-char benign texts: without the classifier, with it on text alone, with a vector."""
    texts = whole_sentences(read_lines(CORPORA / "benign.txt"), 170, 200)
    runs: dict[str, tuple[WriteGate, Any]] = {
        "rules only": (gate.without(LEARNED_ID), None),
        "rules + classifier (text)": (gate, None),
    }
    if with_vectors:
        runs["rules + classifier (text + vector)"] = (gate, embed_texts(texts))
    out = {}
    for name, (g, vectors) in runs.items():
        samples = time_checks(g, texts, repeat, vectors)
        out[name] = {"p50_us": round(percentile(samples, 50), 1), "p95_us": round(percentile(samples, 95), 1)}
    return out


if __name__ == "__main__":
    raise SystemExit(main())
