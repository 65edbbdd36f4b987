"""`learnloop calibrate`: dedupe's cosine thresholds for your embedding model, from texts of your own."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import click
import numpy as np

from ..capture.calibration import RANKS, LabelledPair, calibrate, save_policy, score
from ..capture.dedupe import DedupePolicy
from ..embedders import resolve_embedder
from ..sync import run_sync
from .context import CliContext, echo_json, pass_context

_MAX_TEXTS = 2000


@click.command("calibrate")
@click.argument("pairs", type=click.Path(exists=True, dir_okay=False), required=False)
@click.option("--out", type=click.Path(dir_okay=False), help="Write the policy here (LEARNLOOP_DEDUPE_CALIBRATION).")
@pass_context
def calibrate_command(ctx: CliContext, pairs: str | None, out: str | None) -> None:
    """Place dedupe's thresholds for the configured embedder among the cosines of unrelated texts.

    The texts are the learnings in the database (up to 2,000), or with PAIRS the texts of labelled pairs
    (JSON Lines {"existing", "existing_tags", "new", "new_tags", "label": skip|merge|new_version|create}, the
    shape of bench/data/dedupe/*.jsonl), which are then also scored with the current and the new thresholds.
    """
    embedder = resolve_embedder(ctx.settings.embedder, ctx.settings)
    rows = [json.loads(line) for line in Path(pairs).read_text("utf-8").splitlines() if line.strip()] if pairs else []

    async def texts_from_db() -> list[str]:
        loop = ctx.open_loop()
        try:
            page = await loop.list(limit=1000)
            texts = [x.text for x in page.items]
            if page.total > 1000:
                texts += [x.text for x in (await loop.list(limit=1000, offset=1000)).items]
            return texts[:_MAX_TEXTS]
        finally:
            await loop.aclose()

    async def embed(texts: list[str]) -> np.ndarray:
        try:
            return np.asarray(await embedder.embed(texts), dtype=np.float32)
        finally:
            await embedder.aclose()

    if rows:
        vectors = run_sync(embed([r["existing"] for r in rows] + [r["new"] for r in rows]))
        existing, new = vectors[: len(rows)], vectors[len(rows) :]
        cross = existing @ new.T
        unrelated = cross[~np.eye(len(rows), dtype=bool)].tolist()
        similarities = [float(a @ b) for a, b in zip(existing, new, strict=True)]
    else:
        texts = run_sync(texts_from_db())
        vectors = run_sync(embed(texts))
        cross = vectors @ vectors.T
        unrelated = cross[np.triu_indices(len(texts), k=1)].tolist()
        similarities = []
    current = DedupePolicy.for_model(embedder.model_id)
    fitted = calibrate(unrelated, embedder.model_id)
    report: dict[str, object] = {
        "model": embedder.model_id,
        "unrelated_pairs": len(unrelated),
        "policy": asdict(fitted),
    }
    if rows:
        labelled = [LabelledPair.from_json(r, s) for r, s in zip(rows, similarities, strict=True)]
        report["current"] = {"calibrated": current.calibrated, **score(labelled, current)}
        report["calibrated"] = score(labelled, fitted)
    if out:
        save_policy(fitted, out)
        report["written"] = out
    if ctx.as_json:
        echo_json(report)
        return
    click.echo(f"{embedder.model_id}: {len(unrelated)} unrelated pairs")
    for name in RANKS:
        click.echo(f"  {name} = {getattr(fitted, name):.4f}   (shipped: {getattr(current, name):.4f})")
    for name in ("current", "calibrated"):
        if name in report:
            f = report[name]
            assert isinstance(f, dict)
            rates = f"kept apart {f['kept_apart']:.3f}  stale gone {f['stale_gone']:.3f}  one live {f['one_live']:.3f}"
            click.echo(f"  {name:10} {rates}")
    if out:
        click.echo(f"written to {out}; set LEARNLOOP_DEDUPE_CALIBRATION={out} to use it")
