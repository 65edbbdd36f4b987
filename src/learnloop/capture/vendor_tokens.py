"""API tokens of vendors no detector names, recognised by their shape: a short lowercase prefix, an underscore
or dash, then a long random tail ("sq0atp-…", "shpss_…", "pat-na1-…", "key_live_…").

detect-secrets and `gate_rules` know the big vendors by their exact prefixes; new vendors keep inventing
prefixes, so this rule reads the shape instead: the tail must look machine-made (`random_token`: mixed
upper, lower and digits with frequent switches) or be ≥ 32 characters of mixed letters and digits with high
entropy. Digests are not tokens: a hash prefix (sha256-, md5:), a hexadecimal tail or a fingerprint word
lets the text pass, and so do package-lock integrity strings and identifiers in snake_case.
"""

from __future__ import annotations

import re

from .gate_rule import GateRule, entropy, random_token

__all__ = ["VENDOR_TOKEN_RULES"]

_TOKEN = re.compile(
    r"(?<![\w./+-])(?P<prefix>[a-z][a-z0-9]{1,11}(?:[_-][a-z0-9]{1,8}){0,2})[_-](?P<tail>[A-Za-z0-9]{24,200})(?![\w/+=-])"
)
_DIGEST_PREFIX = re.compile(r"^(?:sha\d*|md5|blake\w*|crc\d*|xxh\w*|sri|etag|commit|rev|build|v\d+)$", re.IGNORECASE)
_HEX = re.compile(r"^[0-9a-fA-F]+$")


def _vendor_token(text: str) -> tuple[int, int] | None:
    for m in _TOKEN.finditer(text):
        tail = m.group("tail")
        if _DIGEST_PREFIX.match(m.group("prefix")) or _HEX.match(tail):
            continue
        has_digit = any(c.isdigit() for c in tail)
        has_alpha = any(c.isalpha() for c in tail)
        if random_token(tail) or (len(tail) >= 32 and has_digit and has_alpha and entropy(tail) >= 4.2):
            return m.span()
    return None


VENDOR_TOKEN_RULES: tuple[GateRule, ...] = (
    GateRule(
        "secret.token_shape",
        "secret",
        "looks like a vendor API token (prefix and a long random tail)",
        "",
        finder=_vendor_token,
        min_digits=2,
        needles=("_", "-"),
        hint=True,
    ),
)
