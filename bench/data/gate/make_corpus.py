"""Build the gate corpus: `tuning.jsonl` (rules are tuned on it) and `holdout.jsonl` (kept for measuring).

    python bench/data/gate/make_corpus.py

One JSON object per line: {"text", "class", "kind", "lang"}; class is secret, pii, injection or benign. Sources:
the English corpora under tests/capture/corpora (secrets_pii.txt, injections.txt, benign.txt) and the
per-language templates beside this script, filled with seeded fake values (`values.py`). A text goes to the
hold-out part when a hash of it falls in the last quarter, so the split does not move when texts are added.
The blind hold-out written by someone who never saw the rules is `heldout.jsonl` (not made here).
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from templates_benign import BENIGN  # noqa: E402
from templates_injection import INJECTION  # noqa: E402
from templates_secret_pii import PII, SECRET  # noqa: E402
from values import Values  # noqa: E402

CORPORA = HERE.parents[2] / "tests" / "capture" / "corpora"
FILLS = 3  # each secret / personal-data template is filled this many times with different values
_SLOT = re.compile(r"\{([a-z_0-9]+)(?::([A-Z]{2}))?(?::([a-z0-9]+))?\}")
# Lines of secrets_pii.txt that hold personal data rather than a credential.
_PERSONAL = re.compile(
    r"@(?![\w.-]*:)[\w-]+\.[a-z]{2,}|\b(?:phone|call|tel|mobile|cell|whatsapp|fax|ssn|social security|card|iban"
    r"|passport|licen[cs]e|national|insurance|tax|nino|dni|nie|cpf|aadhaa?r|medicare|nhs|pesel|bsn|sin|itin|curp"
    r"|personalausweis|steuer|codice|text me|text|reach|contact|hotline|number|line|ring|visa|mastercard|amex|pay"
    r"|wire|account|ni|nif|ni_number|rep)\b|\+\d{1,3}[ \d().-]{7,}|\b\d{3}-\d{2}-\d{4}\b|\b(?:\d{4}[ -]?){3}\d{1,4}\b",
    re.IGNORECASE,
)
_SECRET_HINT = re.compile(
    r"passw|secret|token|api[_ -]?key|apikey|akia|asia|ghp_|sk-|sk_|xox|bearer|private key|-----begin|jwt|eyj"
    r"|postgres|mysql|mongodb|redis|amqp|://[^ ]*:[^ ]*@|credential|pwd|passphrase|seed phrase|recovery phrase|twilio",
    re.IGNORECASE,
)


def fill(template: str, values: Values) -> str:
    def one(match: re.Match[str]) -> str:
        name, region, style = match.group(1), match.group(2), match.group(3)
        if name == "phone":
            return values.phone(region or "US", style or "national")
        if name == "totp_bare":
            return values.totp(grouped=False)
        if name.endswith("_spaced"):
            return values.spaced(getattr(values, name.removesuffix("_spaced"))())
        return str(getattr(values, name)())

    return _SLOT.sub(one, template)


def lines(name: str) -> list[str]:
    return [line for line in (CORPORA / name).read_text("utf-8").splitlines() if line.strip()]


def rows() -> list[dict[str, Any]]:
    values = Values(seed=14)
    out: list[dict[str, Any]] = []
    for line in lines("secrets_pii.txt"):
        personal = _PERSONAL.search(line) and not _SECRET_HINT.search(line)
        out.append({"text": line, "class": "pii" if personal else "secret", "kind": "legacy", "lang": "en"})
    out += [{"text": t, "class": "injection", "kind": "override", "lang": "en"} for t in lines("injections.txt")]
    out += [{"text": t, "class": "benign", "kind": "legacy", "lang": "en"} for t in lines("benign.txt")]
    for klass, table in (("secret", SECRET), ("pii", PII)):
        for lang, templates in table.items():
            for template in templates:
                kind = _SLOT.search(template)
                for _ in range(FILLS):
                    text = fill(template, values)
                    out.append({"text": text, "class": klass, "kind": kind.group(1) if kind else "prose", "lang": lang})
    for lang, pairs in INJECTION.items():
        out += [{"text": text, "class": "injection", "kind": kind, "lang": lang} for kind, text in pairs]
    for lang, texts in BENIGN.items():
        out += [{"text": text, "class": "benign", "kind": "hard", "lang": lang} for text in texts]
    seen: set[str] = set()
    unique = []
    for row in out:
        if row["text"] not in seen:
            seen.add(row["text"])
            unique.append(row)
    return unique


def held_out(text: str) -> bool:
    return hashlib.blake2b(text.encode(), digest_size=2).digest()[0] >= 192


def main() -> int:
    all_rows = rows()
    parts: dict[str, list[dict[str, Any]]] = {"tuning": [], "holdout": []}
    for row in all_rows:
        parts["holdout" if held_out(row["text"]) else "tuning"].append(row)
    for name, part in parts.items():
        with (HERE / f"{name}.jsonl").open("w", encoding="utf-8") as out:
            for row in part:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"{name}.jsonl: {len(part)} texts")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
