"""Feedback: how the user's next message is read, per label, through `loop.observe()` as an app calls it.

    python bench/feedback.py                       # the held-outs never trained on (bench/data/feedback/)
    python bench/feedback.py --data FILE --json    # your own follow-ups

Each row (JSONL: {"previous_user", "assistant", "follow_up", "label"}; labels: positive, refinement, new_topic,
new_statement, exclamation, correction, failure, frustration, outdated) is a session of two turns: the previous
message with its answer, then the follow-up; the verdict is `ObserveResult.feedback`. Two arms in the same run:
the shipped analyzer (learned model over the keyword cues) and the keyword rules alone (`model=None`).

Figures: precision, recall and F1 per label, macro-F1, and the figure that decides what knowledge is lost —
the precision of *deprecating* verdicts (failure, correction, outdated) and how many benign follow-ups
(positive, refinement, new topic, new statement, exclamation) would have deprecated what the answer used.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import emit_json, print_table, progress
from learnloop.capture.feedback import FeedbackAnalyzer, FeedbackType
from learnloop.capture.feedback_model import LABELS
from learnloop.config import Settings
from learnloop.embedders import resolve_embedder
from learnloop.factory import build_engine
from learnloop.loop import Loop
from learnloop.stores.sqlite import SQLiteStore
from train_feedback_model import held_out, load, scores

HERE = Path(__file__).resolve().parent
#: A verdict as one of the nine labels (the seed's extra types read as the label they stand for).
AS_LABEL = {
    FeedbackType.EXPLICIT_POSITIVE: "positive",
    FeedbackType.FOLLOW_UP_REFINEMENT: "refinement",
    FeedbackType.FOLLOW_UP_SAME_TOPIC: "new_topic",
    FeedbackType.FOLLOW_UP_NEW_TOPIC: "new_topic",
    FeedbackType.NO_REPLY: "new_topic",
    FeedbackType.REPEATED_QUESTION: "new_topic",
    FeedbackType.NEW_STATEMENT: "new_statement",
    FeedbackType.EXCLAMATION: "exclamation",
    FeedbackType.FOLLOW_UP_CORRECTION: "correction",
    FeedbackType.FAILURE: "failure",
    FeedbackType.EXPLICIT_NEGATIVE: "frustration",
    FeedbackType.OUTDATED: "outdated",
    FeedbackType.UNCLEAR: "unclear",  # wrong for every label: a verdict not given
}
DEPRECATING = frozenset({"failure", "correction", "outdated"})
BENIGN = frozenset({"positive", "refinement", "new_topic", "new_statement", "exclamation"})


async def verdicts(rows: list[dict[str, Any]], analyzer: FeedbackAnalyzer, folder: Path, name: str) -> list[str]:
    settings = Settings()
    embedder = resolve_embedder(settings.embedder, settings)
    store = SQLiteStore(folder / f"{name}.db", embedding_model=embedder.model_id, dimension=embedder.dimension)
    loop = Loop(build_engine(store, embedder, feedback=analyzer), tenant="bench")
    out = []
    try:
        for i, row in enumerate(rows):
            session = f"s{i}"
            await loop.observe(row["previous_user"], row["assistant"], user="bench", session=session)
            result = await loop.observe(row["follow_up"], user="bench", session=session)
            feedback = result.feedback
            out.append("new_topic" if feedback is None else AS_LABEL[FeedbackType(feedback.type)])
    finally:
        await loop.aclose()
    return out


def operational(labels: list[str], truth: list[str]) -> dict[str, Any]:
    named = [t for p, t in zip(labels, truth, strict=True) if p in DEPRECATING]
    return {
        "deprecating precision": round(sum(t in DEPRECATING for t in named) / len(named), 3) if named else 1.0,
        "deprecating recall": round(len([t for t in named if t in DEPRECATING]) / max(1, truth.count("failure")
                                    + truth.count("correction") + truth.count("outdated")), 3),
        "benign that deprecate": sum(t in BENIGN for t in named),
        "benign follow-ups": sum(t in BENIGN for t in truth),
    }  # fmt: skip


async def run(paths: list[Path], quiet: bool) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            rows = load(path)
            truth = [r["label"] for r in rows]
            for arm, analyzer in (("model", FeedbackAnalyzer()), ("rules", FeedbackAnalyzer(model=None))):
                progress(f"{path.name}: {arm} ({len(rows)} follow-ups)", quiet)
                labels = await verdicts(rows, analyzer, Path(tmp), f"{path.stem}-{arm}")
                figures[f"{path.stem} [{arm}]"] = scores(labels, truth) | operational(labels, truth)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, nargs="*", help="follow-up JSONL files (default: the held-out sets)")
    parser.add_argument("--json", action="store_true", help="one JSON object of the figures on stdout")
    args = parser.parse_args(argv)
    paths = args.data or held_out()
    figures = asyncio.run(run(paths, args.json))
    if args.json:
        emit_json(figures)
        return 0
    for name, cell in figures.items():
        rows = [[label, cell[label]["precision"], cell[label]["recall"], cell[label]["f1"]] for label in LABELS]
        print_table(f"{name}: macro-F1 {cell['macro_f1']}", ["label", "precision", "recall", "F1"], rows)
        print(
            f"  deprecating verdicts: precision {cell['deprecating precision']}, recall {cell['deprecating recall']};"
            f" benign follow-ups that deprecate: {cell['benign that deprecate']} of {cell['benign follow-ups']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
