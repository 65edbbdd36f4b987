"""Dedupe on labelled pairs and on facts about many different people, through the public write path.

    python bench/dedupe.py                               # every corpus in bench/data/dedupe/, both profiles
    python bench/dedupe.py --data pairs.jsonl --json     # any corpus in the same JSONL shape
    python bench/dedupe.py --people 10000                # the different-people set only

Pairs: one JSON object per line, {"existing", "existing_tags", "new", "new_tags", "label"} with label one of
skip | merge | new_version | create. Each pair gets a fresh user: `existing` is saved (verified), then `new`
(verified), both with `loop.save()` as a user would, and what is live afterwards is judged:

- kept apart (label create): both texts live, each intact;
- stale gone (label new_version): no live learning states the existing text any more;
- one live (labels skip and merge): exactly one live learning.

It prints a confusion matrix of save actions against labels and the three rates per corpus and embedder.
The people set saves N facts "<First> <Last> <attribute> <value>." about N different people for one user
and reports how many saves ended in anything but `create` and how many learnings were deprecated.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import emit_json, print_table, progress
from learnloop.config import Settings
from learnloop.embedders import resolve_embedder
from learnloop.factory import build_engine
from learnloop.loop import Loop
from learnloop.models import Status
from learnloop.stores.sqlite import SQLiteStore

HERE = Path(__file__).resolve().parent
LABELS = ("create", "new_version", "skip", "merge")
ACTIONS = ("created", "new_version", "skipped", "merged", "refused")
PROFILES = ("local:minilm-q8", "local:minilm-static")


def _loop(folder: Path, spec: str, threads: int | None, name: str) -> Loop:
    embedder = resolve_embedder(spec, Settings(embedder_threads=threads))  # each loop closes its own
    store = SQLiteStore(folder / f"{name}.db", embedding_model=embedder.model_id, dimension=embedder.dimension)
    return Loop(build_engine(store, embedder), tenant="bench")


async def pairs(loop: Loop, rows: list[dict[str, Any]], quiet: bool) -> dict[str, Any]:
    confusion: Counter[tuple[str, str]] = Counter()
    right: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    linked = 0
    for n, row in enumerate(rows):
        if n % 100 == 0:
            progress(f"  pair {n}/{len(rows)}", quiet)
        user = f"pair{n}"
        label = row["label"]
        await loop.save(row["existing"], user=user, tags=row.get("existing_tags", []), status="verified")
        saved = await loop.save(row["new"], user=user, tags=row.get("new_tags", []), status="verified")
        linked += saved.link is not None
        confusion[label, saved.action.value] += 1
        live = [x.text for x in (await loop.list(user=user, owner=user)).items if x.status is not Status.DEPRECATED]
        totals[label] += 1
        if label == "create":
            right[label] += row["existing"] in live and row["new"] in live
        elif label == "new_version":
            right[label] += not any(row["existing"] in text for text in live)
        else:
            right[label] += len(live) == 1
    one_live = (right["skip"] + right["merge"]) / max(1, totals["skip"] + totals["merge"])
    return {
        "pairs": len(rows),
        "kept_apart": round(right["create"] / max(1, totals["create"]), 4),
        "stale_gone": round(right["new_version"] / max(1, totals["new_version"]), 4),
        "one_live": round(one_live, 4),
        "linked_for_review": linked,
        "confusion": {label: {a: confusion[label, a] for a in ACTIONS} for label in LABELS},
    }


FIRST = (
    "Viktor Sofia Goran Aiko Mateo Amara Liam Priya Chen Fatima Lars Elena Kwame Yuki Omar Ingrid Diego Mei "
    "Tomasz Zara "
    "Hiro Nadia Pablo Freya Ravi Leila Sven Ana Kofi Hana Emil Rosa Arjun Chloe Ivan Noor Felix Lucia Tariq Maja "
    "Jonas Aisha Marco Greta Sanjay Ines Dmitri Clara Kenji Amina Hugo Eva Rafael Sara Bruno Yara Oskar Lina Mohammed "
    "Julia Andrei Selin Paulo Nora Hamid Vera Tobias Mira Karim Alma Erik Lea Tomas Rania Nils Ayla Pedro Ida Malik "
    "Sofie Ali Elif Jan Zoe Samir Linnea Carlos Alina Olu Petra Jae Helga Nikos Dana Rui Astrid Vikram Beatriz "
    "Irene Wiktor Laila Mateus Soren Yusuf Keiko Anouk Thabo Ilse Ramon Farida"
).split()
LAST = (
    "Lopez Suzuki Sato Kowalski Okafor Nguyen Müller Rossi Schmidt Haddad Johansson Ivanova Mensah Tanaka Khan Berg "
    "Garcia Wang Nowak Ali Yamamoto Petrov Fernandez Larsen Sharma Farah Lindqvist Costa Boateng Kim Novak Moreno "
    "Patel Dubois Sokolov Hassan Weber Romano Aziz Nielsen Becker Rahman Ricci Hansen Gupta Silva Popescu Martin "
    "Ito Diallo Fischer Jensen Mendes Cho Horvat Bakker Ortiz Eriksson Reyes Adeyemi Vogel Conti Kaya Svensson "
    "Iyer Lima Brandt Moretti Demir Pereira Kato Mwangi Hoffmann Marino Yilmaz Santos Abe Ndlovu Wagner Greco "
    "Aydin Rocha Mori Achieng Richter Bruno Sahin Alves Ueda Banda Wolf Gallo Celik Barbosa Ono Phiri Krause"
).split()
FACTS = (
    (
        "'s favourite author is",
        "Wislawa Szymborska|Toni Morrison|Haruki Murakami|Chinua Achebe|Elena Ferrante|Jorge Luis Borges",
    ),
    (" is", "vegetarian|vegan|left-handed|a night owl|an early riser|allergic to peanuts|lactose intolerant"),
    (" lives in", "Lisbon|Osaka|Nairobi|Krakow|Toronto|Valparaiso|Tromso|Chennai|Leeds|Porto"),
    (" works as a", "nurse|data engineer|carpenter|teacher|pilot|pharmacist|architect|baker|translator"),
    (" drives a", "Toyota Corolla|Volvo XC40|Kia Niro EV|Fiat Panda|Tesla Model 3|Skoda Octavia"),
    (" plays the", "cello|violin|drums|piano|bass guitar|trumpet|oboe"),
    ("'s favourite colour is", "teal|mustard|crimson|lilac|forest green|navy"),
    (" speaks", "Portuguese|Japanese|Swahili|Polish|Farsi|Tagalog|Finnish"),
    (" runs", "5 km every morning|10 km on Sundays|a marathon every spring|3 km at lunch"),
    (" was born in", "1978|1984|1991|1969|2001|1995"),
    ("'s shoe size is", "38|41|44|39|46"),
    (" supports", "Benfica|Arsenal|Boca Juniors|Galatasaray|Celtic|Ajax"),
)


async def people(loop: Loop, count: int, quiet: bool, seed: int = 7) -> dict[str, Any]:
    rng = random.Random(seed)
    names = [f"{f} {last}" for f in FIRST for last in LAST]
    rng.shuffle(names)
    if count > len(names):
        raise SystemExit(f"--people is at most {len(names)}")
    actions: Counter[str] = Counter()
    examples: list[str] = []
    for n, name in enumerate(names[:count]):
        if n % 1000 == 0:
            progress(f"  person {n}/{count}", quiet)
        attribute, values = rng.choice(FACTS)
        text = f"{name}{attribute} {rng.choice(values.split('|'))}."
        saved = await loop.save(text, user="crm")
        actions[saved.action.value] += 1
        if saved.action.value != "created" and len(examples) < 5:
            examples.append(f"{text} → {saved.reason}")
    deprecated = (await loop.list(user="crm", owner="crm", status="deprecated", limit=1)).total
    return {
        "saves": count,
        "not_created": count - actions["created"],
        "not_created_fraction": round((count - actions["created"]) / count, 4),
        "deprecated": deprecated,
        "actions": dict(actions),
        "examples": examples,
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="learnloop-dedupe-"))
    out: dict[str, Any] = {"profiles": {}}
    for spec in args.embedder:
        embedder = resolve_embedder(spec, Settings(embedder_threads=args.threads))
        figures: dict[str, Any] = {"model": embedder.model_id, "corpora": {}}
        for path in args.data:
            rows = [json.loads(line) for line in Path(path).read_text("utf-8").splitlines() if line.strip()]
            progress(f"{spec}: {path.name} ({len(rows)} pairs)", args.quiet)
            loop = _loop(folder, spec, args.threads, f"{embedder.model_id.replace(':', '_')}-{path.stem}")
            figures["corpora"][path.stem] = await pairs(loop, rows, args.quiet)
            await loop.aclose()
        if args.people:
            progress(f"{spec}: {args.people} facts about different people", args.quiet)
            loop = _loop(folder, spec, args.threads, f"{embedder.model_id.replace(':', '_')}-people")
            figures["people"] = await people(loop, args.people, args.quiet)
            await loop.aclose()
        out["profiles"][spec] = figures
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, action="append", help="labelled pairs (JSONL); repeatable")
    parser.add_argument("--embedder", action="append", help=f"embedding model spec (default: {', '.join(PROFILES)})")
    parser.add_argument("--people", type=int, default=None, help="facts about N different people (default 10000)")
    parser.add_argument("--threads", type=int, default=None, help="embedder intra-op threads")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    args = parser.parse_args()
    if args.data is None and args.people is None:
        args.data = sorted((HERE / "data" / "dedupe").glob("*.jsonl"))
        args.people = 10_000
    args.data = args.data or []
    args.embedder = args.embedder or list(PROFILES)
    args.quiet = args.json
    figures = asyncio.run(run(args))
    if args.json:
        emit_json(figures)
        return
    for spec, profile in figures["profiles"].items():
        rows = [
            [name, c["pairs"], c["kept_apart"], c["stale_gone"], c["one_live"], c["linked_for_review"]]
            for name, c in profile["corpora"].items()
        ]
        if rows:
            print_table(
                f"dedupe through save(), {spec} ({profile['model']})",
                ["corpus", "pairs", "kept apart", "stale gone", "one live", "linked"],
                rows,
            )
        for name, c in profile["corpora"].items():
            print_table(
                f"{name}: label → save action",
                ["label", *ACTIONS],
                [[label, *c["confusion"][label].values()] for label in LABELS],
            )
        if "people" in profile:
            p = profile["people"]
            print_table(
                f"facts about different people, {spec}",
                ["saves", "not created", "fraction", "deprecated"],
                [[p["saves"], p["not_created"], p["not_created_fraction"], p["deprecated"]]],
            )
            for example in p["examples"]:
                print(f"    {example}")


if __name__ == "__main__":
    main()
