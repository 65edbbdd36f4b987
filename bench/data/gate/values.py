"""Fake but well-formed values for the gate corpus: keys, passwords, national ids with valid checksums, phones.

Every value is made up by a seeded generator (`make_corpus.py` fixes the seed), so the corpus is the same on
every run and nothing in it belongs to anyone.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from types import ModuleType

import phonenumbers
from stdnum import luhn
from stdnum.au import tfn
from stdnum.br import cpf
from stdnum.ca import sin
from stdnum.de import idnr
from stdnum.es import dni, nie
from stdnum.fr import nir
from stdnum.in_ import aadhaar
from stdnum.it import codicefiscale
from stdnum.jp import in_ as my_number
from stdnum.kr import rrn
from stdnum.nl import bsn
from stdnum.pl import pesel

B62 = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


class Values:
    """One seeded source of fake values."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def pick(self, items: list[str] | tuple[str, ...]) -> str:
        return self.rng.choice(items)

    def chars(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def digits(self, n: int) -> str:
        return self.chars(string.digits, n)

    # -- secrets ---------------------------------------------------------------------------------------------

    def password(self) -> str:
        words = ["falcon", "Hops", "winter", "Sunny", "maple", "Tiger", "Nebula", "copper", "Orchid", "delta"]
        shapes = [
            lambda: f"{self.pick(words).capitalize()}{self.digits(4)}{self.pick(list('!#$%&*?'))}",
            lambda: f"{self.pick(words)}-{self.pick(words)}-{self.digits(2)}{self.pick(list('!@#'))}",
            lambda: self.chars(B62 + "!@#$%", 12),
            lambda: f"Tr0ub4{self.chars('dorxyz', 3)}&{self.digits(1)}",
            lambda: f"{self.pick(words)}{self.pick(list('@$'))}{self.digits(3)}{self.pick(words).upper()[:3]}",
        ]
        return self.rng.choice(shapes)()

    def github(self) -> str:
        return "ghp_" + self.chars(B62, 36)

    def aws(self) -> str:
        return "AKIA" + self.chars(string.ascii_uppercase + "234567", 16)

    def aws_secret(self) -> str:
        return self.chars(B62 + "/+", 40)

    def openai(self) -> str:
        return "sk-proj-" + self.chars(B62, 48)

    def stripe(self) -> str:
        return "sk_live_" + self.chars(B62, 24)

    def slack(self) -> str:
        return f"xoxb-{self.digits(11)}-{self.digits(12)}-{self.chars(B62, 24)}"

    def hex32(self) -> str:
        return self.chars(HEX, 32)

    def totp(self, grouped: bool = True) -> str:
        raw = self.chars(B32, 32)
        return " ".join(raw[i : i + 4] for i in range(0, 32, 4)) if grouped else raw

    def spaced(self, key: str, every: int = 4) -> str:
        """A key with spaces inserted to dodge filters."""
        return " ".join(key[i : i + every] for i in range(0, len(key), every))

    def jwt(self) -> str:
        return f"eyJhbGciOiJIUzI1NiJ9.eyJ{self.chars(B62, 30)}.{self.chars(B62 + '-_', 43)}"

    def pin(self) -> str:
        return self.digits(self.rng.choice([4, 6]))

    # -- personal data ---------------------------------------------------------------------------------------

    def _valid(self, module: ModuleType, make: Callable[[], str], tail: str = string.digits) -> str:
        """A candidate from `make` whose last character is chosen so `module` accepts it."""
        for _ in range(2000):
            base = make()
            for c in tail:
                if module.is_valid(base[:-1] + c):
                    return base[:-1] + c
        raise RuntimeError(f"no valid value for {module.__name__}")

    def ssn(self) -> str:
        return f"{self.rng.randint(100, 665)}-{self.rng.randint(10, 99)}-{self.rng.randint(1000, 9999)}"

    def codice_fiscale(self) -> str:
        letters = string.ascii_uppercase
        month = self.pick(list("ABCDEHLMPRST"))
        base = (
            self.chars(letters, 6) + self.digits(2) + month + f"{self.rng.randint(1, 28):02d}"
            f"{self.pick(list('ABCDEFGHLM'))}{self.digits(3)}"
        )
        return base + codicefiscale.calc_check_digit(base)

    def sin(self) -> str:
        number = self._valid(sin, lambda: self.pick(list("123456789")) + self.digits(8))
        return f"{number[:3]} {number[3:6]} {number[6:]}"

    def tfn(self) -> str:
        number = self._valid(tfn, lambda: self.digits(9))
        return f"{number[:3]} {number[3:6]} {number[6:]}"

    def dni(self) -> str:
        number = self.digits(8)
        return number + dni.calc_check_digit(number)

    def nie(self) -> str:
        number = self.pick(list("XYZ")) + self.digits(7)
        return number + nie.calc_check_digit(number)

    def nir(self) -> str:
        base = f"{self.pick(['1', '2'])}{self.digits(2)}{self.rng.randint(1, 12):02d}{self.rng.randint(1, 95):02d}"
        base += self.digits(6)
        return f"{base} {nir.calc_check_digits(base)}"

    def steuer_id(self) -> str:
        return self._valid(idnr, lambda: self.pick(list("123456789")) + self.digits(10))

    def rrn(self) -> str:
        base = f"{self.rng.randint(60, 99)}{self.rng.randint(1, 12):02d}{self.rng.randint(1, 28):02d}"
        base += self.pick(list("12")) + self.digits(5)
        return f"{base[:6]}-{base[6:]}{rrn.calc_check_digit(base + '0')}"

    def my_number(self) -> str:
        number = self._valid(my_number, lambda: self.digits(12))
        return f"{number[:4]} {number[4:8]} {number[8:]}"

    def bsn(self) -> str:
        return self._valid(bsn, lambda: self.digits(9))

    def cpf(self) -> str:
        number = self._valid(cpf, lambda: self.digits(11))
        return f"{number[:3]}.{number[3:6]}.{number[6:9]}-{number[9:]}"

    def aadhaar(self) -> str:
        number = self._valid(aadhaar, lambda: self.pick(list("23456789")) + self.digits(11))
        return f"{number[:4]} {number[4:8]} {number[8:]}"

    def pesel(self) -> str:
        return self._valid(
            pesel,
            lambda: (
                f"{self.rng.randint(50, 99)}{self.rng.randint(1, 12):02d}{self.rng.randint(1, 28):02d}{self.digits(5)}"
            ),
        )

    def nino(self) -> str:
        return f"{self.pick(['AB', 'CE', 'JG', 'PR', 'WL'])}{self.digits(6)}{self.pick(list('ABCD'))}"

    def passport(self) -> str:
        return self.pick(
            [
                self.chars(string.ascii_uppercase, 2) + self.digits(7),
                "C" + self.chars("0123456789", 8),
                self.chars(string.ascii_uppercase, 1) + self.digits(8),
            ]
        )

    def mrz(self) -> str:
        surname, given = self.pick(["MUELLER", "GARCIA", "KIM", "TANAKA", "DUBOIS", "SMITH"]), "ANNA"
        line1 = f"P<{self.pick(['DEU', 'ESP', 'KOR', 'JPN', 'FRA', 'GBR'])}{surname}<<{given}".ljust(44, "<")
        line2 = f"{self.passport():<9}{self.digits(1)}UTO{self.digits(6)}{self.digits(1)}F{self.digits(6)}"
        return f"{line1} {line2.ljust(44, '<')}"

    def card(self) -> str:
        base = (self.pick(["4", "51", "37"]) + self.digits(14))[:15]
        number = base + luhn.calc_check_digit(base)
        if number.startswith("37"):  # American Express: 15 digits
            number = number[:14] + luhn.calc_check_digit(number[:14])
        return " ".join(number[i : i + 4] for i in range(0, len(number), 4))

    def phone(self, region: str, style: str = "national") -> str:
        kind = self.pick(["MOBILE", "FIXED_LINE"])
        example = phonenumbers.example_number_for_type(region, getattr(phonenumbers.PhoneNumberType, kind))
        assert example is not None
        national = str(example.national_number)
        # Vary the subscriber digits, keep the prefix: still a number the region's plan accepts.
        keep = max(3, len(national) - 4)
        example.national_number = int(national[:keep] + self.digits(len(national) - keep))
        if not phonenumbers.is_valid_number(example):
            example = phonenumbers.example_number_for_type(region, getattr(phonenumbers.PhoneNumberType, kind))
            assert example is not None
        if style == "e164":
            return phonenumbers.format_number(example, phonenumbers.PhoneNumberFormat.E164)
        if style == "international":
            return phonenumbers.format_number(example, phonenumbers.PhoneNumberFormat.INTERNATIONAL)
        if style == "bare":
            return (
                phonenumbers.format_number(example, phonenumbers.PhoneNumberFormat.NATIONAL)
                .replace(" ", "")
                .replace("-", "")
                .replace("(", "")
                .replace(")", "")
            )
        return phonenumbers.format_number(example, phonenumbers.PhoneNumberFormat.NATIONAL)
