"""Phone numbers in any format, confirmed by Google's numbering plans (the `phonenumbers` library).

The built-in phone rules (`gate_rules`) catch the usual printed shapes; this rule catches the rest: numbers
without separators, with extensions, in Korean and Japanese formats, after a phone word in any of the six
languages. A candidate is a run of 7–15 digits with phone punctuation. It is refused when `phonenumbers` finds
it valid — as an international number if it starts with ``+`` or ``00``, else in the regions its script and
phone word suggest, then in a short list of common regions — and it either starts the way dialled numbers
start (``+``, ``0``, a parenthesised area code), carries an extension, or follows a phone word. A bare
number with none of these ("order 4155550123", a barcode, a timestamp) is left alone.
"""

from __future__ import annotations

import re

import phonenumbers

from .gate_rule import GateRule
from .id_detectors import product_number_before

__all__ = ["PHONE_RULES", "business_line", "organisation_line"]

_CANDIDATE = re.compile(
    r"(?<![A-Za-z0-9_+.,/-])(?:\+|00)?\(?\d[\d ().\-‐]{5,20}\d(?:\s*(?:ext\.?|x|extension|extensión"
    r"|durchwahl|poste|내선|内線)"
    r"\s*\d{1,5})?(?![\w.,/-]{0,20}\d)",
    re.IGNORECASE,
)
_EXTENSION = re.compile(r"(?:ext\.?|x|extension|extensión|durchwahl|poste|내선|内線)\s*\d{1,5}$", re.IGNORECASE)
# A bare "number" is any number (an invoice's, an account's): only words that mean a phone count.
# Latin words from the start of a word: "Hotel" is not "tel", "during" not "ring", "context" not "text".
_PHONE_WORDS = re.compile(
    r"\b(?:phone|tel\b|telephone|mobile|cell|call|ring|text|sms|whatsapp|signal|fax|landline|hotline|reach|dial"
    r"|teléfono|telefono|móvil|movil|celular|llám|llama|fijo|telefon|handy|festnetz|ruf|anruf"
    r"|téléphone|portable|appel|fixe|joindre"
    r"|cellulare|cell\.|chiam|numero di telefono|recapito|telefone|telemóvel|ligar|ligue|liga|contato|contacto|zap)"
    r"|\w's (?:number|no\.?)|전화|휴대폰|핸드폰|연락처|電話|携帯|連絡先|手机|手機|电话|號碼|号码|联系方式",
    re.IGNORECASE,
)
# A number named as another kind of number (a booking's, a company's registration, a device's serial) is not a
# phone number, whatever its digits would dial.
_OTHER_NUMBER = re.compile(
    r"\b(?:confirmation|booking|reservation|ticket|invoice|receipt|serial|serie\w*|seriennummer|lot|batch|udi|imei"
    r"|isbn|issn|ean|upc|gtin|barcode|vat|p\. ?iva|partita iva|ičo|ico|dič|regon|krs|kvk|siren|siret|cif|cnpj|abn"
    r"|acn|ein|ust-?id\w*|company (?:number|no\.?|registration)|registration (?:number|no\.?)|reservierung\w*"
    r"|buchung\w*|réservation|reserva|prenotazione|numéro de série|número de serie|numero di serie)\b"
    r"[^\n\d]{0,30}$",
    re.IGNORECASE,
)
_ARITHMETIC = re.compile(r"\s[-+]\s|\d\.\d{1,2}(?!\d)")
_AREA = re.compile(r"\(\d{1,5}\)")
_DATE_OR_IP = re.compile(r"^(?:\d{1,2}[./-]\d{1,2}[./-]\d{2,4}|\d{4}[./-]\d{1,2}[./-]\d{1,2}|\d{1,3}(?:\.\d{1,3}){3})$")
_REGIONS = (
    "US",
    "GB",
    "DE",
    "FR",
    "ES",
    "IT",
    "KR",
    "JP",
    "CA",
    "AU",
    "IN",
    "MX",
    "BR",
    "NL",
    "AT",
    "CH",
    "BE",
    "AR",
    "CO",
    "CL",
    "PT",
    "IE",
    "PL",
    "AO",
    "MZ",
    "CN",
    "RU",
    "ZA",
    "NG",
    "PH",
    "SG",
    "NZ",
    "SE",
    "NO",
    "DK",
    "FI",
    "TR",
    "AE",
    "IL",
    "PE",
    "VE",
    "UY",
    "EC",
    "GR",
    "CZ",
    "HU",
    "RO",
)
# Kana before Han: Japanese text is written with both.
_SCRIPT_REGIONS = (("\uac00", "\ud7a3", "KR"), ("\u3040", "\u30ff", "JP"), ("\u4e00", "\u9fff", "CN"))


def _regions(text: str) -> list[str]:
    first = [region for low, high, region in _SCRIPT_REGIONS if any(low <= c <= high for c in text)]
    return first + [r for r in _REGIONS if r not in first]


def _valid(candidate: str, regions: list[str]) -> bool:
    number_part = _EXTENSION.sub("", candidate).strip()
    international = number_part.startswith(("+", "00"))
    tries = [None] if international else regions
    for region in tries:
        try:
            parsed = phonenumbers.parse("+" + number_part[2:] if number_part.startswith("00") else number_part, region)
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_valid_number(parsed):
            return not business_line(candidate)
    return False


def business_line(candidate: str) -> bool:
    """Is the number a toll-free, shared-cost or premium line in one of the common regions: a business's line,
    not a person's ("KPN: 0800-0402", "Nubank: 0800 591 2117")?"""
    number_part = _EXTENSION.sub("", candidate).strip()
    if not _SERVICE_PREFIX.match(re.sub(r"\D", "", number_part)):
        return False  # a mobile or a home line in one region can read as a premium line in another
    for region in (*_REGIONS, "NL", "BR", "PT", "BE", "CH", "AT"):
        try:
            parsed = phonenumbers.parse(number_part, region)
        except phonenumbers.NumberParseException:
            return False
        if phonenumbers.is_valid_number(parsed) and phonenumbers.number_type(parsed) in _BUSINESS_LINES:
            return True
    return False


# How toll-free and shared-cost numbers start across regions: 0800/0808/084x/087x, 0120/0570, 1800/1300,
# and North America's 8XX.
_SERVICE_PREFIX = re.compile(r"^(?:0(?:800|808|84\d|87\d|120|570)|1[38]00|1?8(?:00|33|44|55|66|77|88)\d{7}$)")
_BUSINESS_LINES = frozenset(
    (
        phonenumbers.PhoneNumberType.TOLL_FREE,
        phonenumbers.PhoneNumberType.PREMIUM_RATE,
        phonenumbers.PhoneNumberType.SHARED_COST,
        phonenumbers.PhoneNumberType.UAN,
    )
)


def _phone(text: str) -> tuple[int, int] | None:
    regions: list[str] | None = None
    for m in _CANDIDATE.finditer(text):
        candidate = m.group(0).strip()
        digits = sum(c.isdigit() for c in candidate)
        if not 7 <= digits <= 17 or _DATE_OR_IP.match(candidate) or product_number_before(text, m.start()):
            continue
        if _OTHER_NUMBER.search(text, max(0, m.start() - 50), m.start()):
            continue
        if _ARITHMETIC.search(candidate):
            continue
        dialled = candidate.startswith(("+", "0")) or bool(_AREA.match(candidate) or _EXTENSION.search(candidate))
        if not dialled and not _PHONE_WORDS.search(text, max(0, m.start() - 40), m.start()):
            continue
        if organisation_line(text, m.start()):
            continue
        regions = regions or _regions(text)
        if _valid(candidate, regions):
            return m.start(), m.start() + len(candidate)
    return None


# How an organisation's line is introduced: its switchboard, front desk, customer service — nobody's own phone.
_BUSINESS_WORDS = re.compile(
    r"switchboard|main (?:line|number|office|phone)|front desk|reception|customer (?:service|care|support)"
    r"|support (?:line|number|desk)|helpline|help ?desk|service desk|hotline"
    r"|booking line|sales line|dispatch|대표 ?번호|대표 ?전화|고객 ?센터|代表番号|代表電話|客服|总机|總機|zentrale"
    r"|kundenservice|kundendienst|centralita|atención al cliente|standard téléphonique|service client|centralino"
    r"|servizio clienti|central de atendimento|atendimento ao cliente|klantenservice|receptie|obsługa klienta"
    r"|kundtjänst|växel|müşteri hizmetleri|santral|горячая линия|служба поддержки|справочная|le standard"
    r"|standard de l|accueil de l",
    re.IGNORECASE,
)


def organisation_line(text: str, start: int) -> bool:
    """Is the number at `start` an organisation's line by what introduces it? (Numbers set aside for fiction,
    555-01xx and Ofcom's drama ranges, are not exempt: people write them for real ones in examples and tests.)"""
    return bool(_BUSINESS_WORDS.search(text, max(0, start - 50), start))


PHONE_RULES: tuple[GateRule, ...] = (
    GateRule(
        "personal_data.phone.any_format",
        "personal_data",
        "contains a phone number",
        "",
        min_digits=7,
        finder=_phone,
        detector="phonenumbers",
    ),
)
