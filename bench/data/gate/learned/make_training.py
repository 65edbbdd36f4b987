"""Build the memory-poisoning classifier's corpus: `train.jsonl` and `test.jsonl` beside this script.

    python bench/data/gate/learned/make_training.py

One JSON object per line: {"text", "class" (injection | benign), "kind" (intent or benign / hard), "lang",
"frame"}. Frames (sentences with {slots}, in `frames_*.py`) are expanded with seeded random slot values and
varied in form: a benign sentence of the same language before or after, a label ("Note:", "Rule:"), no final
full stop, lower case, a line break. Whole frames are held out: every fifth frame of each list goes to the
test part only, so a test text never shares its sentence shape with a training text.
"""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import frames_en  # noqa: E402
from frames_de_ko_ja import DE, JA, KO  # noqa: E402
from frames_es_pt import ES, PT  # noqa: E402
from frames_fr_it import FR, IT  # noqa: E402
from frames_more import BENIGN_IMPERATIVE, INJECTION_MORE, META_BENIGN, URL_BENIGN  # noqa: E402
from shared import SHARED  # noqa: E402

EN: dict[str, Any] = {
    "slots": frames_en.SLOTS,
    "injection": frames_en.INJECTION,
    "benign": frames_en.BENIGN,
    "hard": frames_en.HARD + META_BENIGN,
}
LANGS: dict[str, dict[str, Any]] = {"en": EN, "es": ES, "pt": PT, "fr": FR, "it": IT, "de": DE, "ko": KO, "ja": JA}
_SLOT = re.compile(r"\{([a-z_]+)\}")
LABELS = {
    "en": ["Note:", "Rule:", "Important:", "Remember:", "Memory:", "Preference:", "FYI"],
    "es": ["Nota:", "Regla:", "Importante:", "Recuerda:"],
    "pt": ["Nota:", "Regra:", "Importante:", "Lembre-se:"],
    "fr": ["Note :", "Règle :", "Important :", "À retenir :"],
    "it": ["Nota:", "Regola:", "Importante:", "Ricorda:"],
    "de": ["Hinweis:", "Regel:", "Wichtig:", "Merke:"],
    "ko": ["참고:", "규칙:", "중요:", "메모:"],
    "ja": ["メモ：", "ルール：", "重要：", "注意："],
}
#: Texts per frame: poisoning frames are fewer and carry more slots.
PER_INJECTION_FRAME = {"en": 7, "es": 12, "pt": 12, "fr": 12, "it": 12, "de": 12, "ko": 12, "ja": 12}
PER_BENIGN_FRAME = 8
PER_HARD_FRAME = 4


def fill(frame: str, slots: dict[str, list[str]], rng: random.Random) -> str:
    def one(m: re.Match[str]) -> str:
        name = m.group(1)
        values = slots.get(name) or SHARED.get(name)
        if values is None:
            raise KeyError(f"no slot {name!r} for frame {frame!r}")
        return rng.choice(values)

    text = _SLOT.sub(one, frame)
    return text[0].upper() + text[1:] if text[:1].islower() else text


def vary(text: str, lang: str, benign_pool: list[str], rng: random.Random) -> str:
    """One random change of form, or none."""
    roll = rng.random()
    if roll < 0.18 and benign_pool:
        other = rng.choice(benign_pool)
        return f"{other} {text}" if rng.random() < 0.6 else f"{text} {other}"
    if roll < 0.28:
        return f"{rng.choice(LABELS[lang])} {text}"
    if roll < 0.38:
        return text.rstrip(".。")
    if roll < 0.43 and lang not in ("ko", "ja"):
        return text.lower()
    if roll < 0.47:
        return text.replace(". ", ".\n", 1) if ". " in text else text
    return text


def build(seed: int = 14) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    rng = random.Random(seed)
    train: list[dict[str, str]] = []
    test: list[dict[str, str]] = []
    seen: set[str] = set()

    def add(part: list[dict[str, str]], text: str, klass: str, kind: str, lang: str, frame: str) -> None:
        if text not in seen:
            seen.add(text)
            part.append({"text": text, "class": klass, "kind": kind, "lang": lang, "frame": frame})

    for lang, spec in LANGS.items():
        slots: dict[str, list[str]] = spec["slots"]
        benign_frames: list[str] = spec["benign"] + BENIGN_IMPERATIVE[lang] + URL_BENIGN[lang]
        injection: dict[str, list[str]] = {**spec["injection"], "more": INJECTION_MORE[lang]}
        pool = [fill(f, slots, rng) for f in benign_frames for _ in range(2)]
        for intent, frames in injection.items():
            for i, frame in enumerate(frames):
                part = test if i % 5 == 4 else train
                for _ in range(PER_INJECTION_FRAME[lang]):
                    add(part, vary(fill(frame, slots, rng), lang, pool, rng), "injection", intent, lang, frame)
        for kind, frames, per in (("benign", benign_frames, PER_BENIGN_FRAME), ("hard", spec["hard"], PER_HARD_FRAME)):
            for i, frame in enumerate(frames):
                part = test if i % 5 == 4 else train
                for _ in range(per):
                    add(part, vary(fill(frame, slots, rng), lang, pool, rng), "benign", kind, lang, frame)
    return train, test


def main() -> int:
    train, test = build()
    for name, rows in (("train", train), ("test", test)):
        with (HERE / f"{name}.jsonl").open("w", encoding="utf-8") as out:
            for row in rows:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
        counts: dict[str, int] = {}
        for row in rows:
            key = f"{row['class']}/{row['lang']}"
            counts[key] = counts.get(key, 0) + 1
        print(name, len(rows), dict(sorted(counts.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
