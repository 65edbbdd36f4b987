"""Values published as examples: documented test cards, the standards' sample IBANs, jwt.io's sample token.

They are printed in payment providers' and standards' documentation so that developers can write them into
tests, tutorials and notes; they open no account and identify nobody. People also write them as stand-ins for
real ones ("Pay rent to Hannah Vogel, IBAN DE89 3704 …"), so one is let through only where its own sentence
says it is an example, before or after it ("4242 4242 4242 4242 is Stripe's test card", "the sample IBAN"),
and only exactly: a digit more or less is an ordinary number again.
"""

from __future__ import annotations

import base64
import binascii
import json
import re

__all__ = ["blank_samples", "called_example", "documented_sample"]

# Test card numbers from the payment providers' documentation (Stripe, Adyen, Braintree, PayPal sandbox).
_CARDS = frozenset(
    """
    4242424242424242 4000056655665556 5555555555554444 2223003122003222 5200828282828210 5105105105105100
    378282246310005 371449635398431 6011111111111117 6011000990139424 3056930009020004 36227206271667
    3566002020360505 6200000000000005 4000002500003155 4000000000009995 4000000000000002 4000000000003220
    4111111111111111 4012888888881881 4222222222222 5431111111111111 5500000000000004 378734493671000
    6011000000000004 4917610000000000 4988438843884305 5454545454545454 2222400070000005
    """.split()
)
# Sample IBANs of the IBAN standard's registry and of the banks' and EPC's documentation.
_IBANS = frozenset(
    """
    DE89370400440532013000 GB82WEST12345698765432 GB29NWBK60161331926819 FR1420041010050500013M02606
    NL91ABNA0417164300 ES9121000418450200051332 IT60X0542811101000000123456
    CH9300762011623852957 AT611904300234573201 PL61109010140000071219812874 SE4550000000058398257466
    PT50000201231234567890154 IE29AIBK93115212345678 DK5000400440116243 FI2112345600000785
    NO9386011117947 LU280019400644750000 CZ6508000000192000145399 BE71096123456769
    """.split()
)
# jwt.io's sample token: its header (a constant of the standard) and its claims.
_JWT_HEADER = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
_JWT_CLAIMS = {"sub": "1234567890", "name": "John Doe", "iat": 1516239022, "admin": True}
_JWT_SIGNATURE = "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
_SEPARATORS = re.compile(r"[\s.-]")
# Where an example value can be: a JWT, an IBAN, a card number (13-19 digits in groups).
_SHAPES = re.compile(r"eyJ[\w-]+(?:\.[\w-]*){0,2}|[A-Z]{2}\d{2}(?:[ -]?[A-Z0-9]){11,30}|\d(?:[ -]?\d){12,18}")


# What calls a value an example, in the languages the gate reads ("for example" introduces a case, not a sample).
_EXAMPLE_WORDS = re.compile(
    r"\b(?:test(?:ing)?|sample|(?<!for )example|demo|dummy|placeholder|sandbox|documented|documentation|tutorials?"
    r"|jwt\.io|prueba|ejemplo|muestra|beispiel|testkarte|exemple|essai|esempio|prova|teste|exemplo|voorbeeld"
    r"|przykład|testow\w*|пример|тестов\w*|örnek|test kartı|テスト|サンプル|테스트|샘플|测试|示例|樣本|样本)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.!?。！？](?:\s|$)|\n")


def blank_samples(text: str) -> str:
    """The text with every published example value its sentence calls an example replaced by spaces (same
    length: spans still point into the text), so that no rule reads it or any part of it as a number, a key
    or an account."""
    if "eyJ" not in text and sum(map(text.count, "0123456789")) < 13:
        return text
    for m in list(_SHAPES.finditer(text)):
        if documented_sample(m.group(0)) and called_example(text, *m.span()):
            start, end = m.span()
            text = text[:start] + " " * (end - start) + text[end:]
    return text


def called_example(text: str, start: int, end: int) -> bool:
    """Does the sentence holding `text[start:end]` call something in it an example, a test or a placeholder?"""
    return bool(_EXAMPLE_WORDS.search(_sentence_around(text, start, end)))


def _sentence_around(text: str, start: int, end: int) -> str:
    before = [m.end() for m in _SENTENCE_END.finditer(text, 0, start)]
    after = _SENTENCE_END.search(text, end)
    return text[before[-1] if before else 0 : after.start() if after else len(text)]


def documented_sample(value: str) -> bool:
    """Is `value` (what a gate rule found) one of the published example values, exactly?"""
    value = value.strip().strip(".,;:()[]\"'")
    if value.startswith("eyJ"):
        return _sample_jwt(value)
    compact = _SEPARATORS.sub("", value).upper()
    return compact in _CARDS or compact in _IBANS


def _sample_jwt(value: str) -> bool:
    """jwt.io's sample, whole or cut short: its header, then claims all of which are the sample's, then its
    signature (a token signed by anyone else is a credential)."""
    parts = value.rstrip(".").split(".")
    if parts[0] != _JWT_HEADER or len(parts) > 3:
        return False
    if len(parts) >= 2 and parts[1]:
        try:
            claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
        except (ValueError, binascii.Error, UnicodeDecodeError):
            return False
        if not isinstance(claims, dict) or any(_JWT_CLAIMS.get(k, object()) != v for k, v in claims.items()):
            return False
    return len(parts) < 3 or parts[2] in ("", _JWT_SIGNATURE)
