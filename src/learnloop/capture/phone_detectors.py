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
from .organisations import ORGANISATION

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
    r"|cellulare|cell\.|chiam|numero di telefono|recapito|telefone|telemóvel|ligar|ligue|liga|contato|contacto|zap"
    r"|komórk\w*|numer telefonu|mobilnummer|telefonnummer|mobiel\w*|telefoonnummer|\bgsm\b|cep telefonu"
    r"|telefon numarası|телефон\w*|мобильн\w*|nomor (?:hp|telepon|ponsel|wa|whatsapp)|\bponsel\b"
    r"|\bhp\b|số điện thoại|\bsđt\b|điện thoại|di động)"
    r"|\w's (?:number|no\.?)|전화|휴대폰|핸드폰|연락처|電話|携帯|連絡先|手机|手機|电话|號碼|号码|联系方式"
    r"|मोबाइल|फ़ोन|फोन|هاتف|جوال|موبايل|الهاتف",
    re.IGNORECASE,
)
# A number named as another kind of number (a booking's, a company's registration, a device's serial) is not a
# phone number, whatever its digits would dial.
_OTHER_NUMBER = re.compile(
    r"\b(?:confirmation|booking|reservation|ticket|invoice|receipt|serial|serie\w*|seriennummer|lot|batch|udi|imei"
    r"|isbn|issn|ean|upc|gtin|barcode|vat|p\. ?iva|partita iva|ičo|ico|dič|regon|krs|kvk|siren|siret|cif|cnpj|abn"
    r"|acn|ein|ust-?id\w*|company (?:number|no\.?|registration)|registration (?:number|no\.?)|reservierung\w*"
    r"|buchung\w*|réservation|reserva|prenotazione|numéro de série|número de serie|numero di serie"
    r"|tracking|tracciamento|spedizione|sendungs\w*|seguimiento|envío|suivi|colis|rastreio|rastreamento|przesyłk\w*"
    r"|zending|pakket|spårning\w*|kolli\w*|order|bestell\w*|pedido|commande|ordine|zamówieni\w*)\b"
    r"[^\n\d]{0,30}$",
    re.IGNORECASE,
)
# A company's tax or register number, however far its sentence runs on before the number ("La partita IVA della
# nostra società, pubblica sul sito e in fattura, è 04829170962").
_REGISTER_WORD = re.compile(
    r"\b(?:vat|p\. ?iva|partita iva|ičo|dič|nip|regon|krs|kvk|siren|siret|cif|cnpj|abn|acn|ein|инн|огрн|кпп"
    r"|ust-?id\w*|vergi (?:no|numarası)|npwp)\b",
    re.IGNORECASE,
)


def _company_register(text: str, start: int) -> bool:
    """(A person's tax number among these words is the identity rules' to judge: this is only the phone rule.)"""
    return _REGISTER_WORD.search(text, max(0, start - 90), start) is not None


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
    "VN",
    "ID",
    "SA",
    "EG",
    "MA",
    "PK",
    "TH",
    "MY",
)
# Kana before Han: Japanese text is written with both.
_SCRIPT_REGIONS = (
    ("\uac00", "\ud7a3", "KR"),
    ("\u3040", "\u30ff", "JP"),
    ("\u4e00", "\u9fff", "CN"),
    ("\u0900", "\u097f", "IN"),
    ("\u0600", "\u06ff", "SA"),
    ("\u0600", "\u06ff", "EG"),
    ("\u0600", "\u06ff", "AE"),
    ("\u0400", "\u04ff", "RU"),
    ("\u0400", "\u04ff", "UA"),
)


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
_SERVICE_PREFIX = re.compile(
    r"^(?:0(?:800|808|84\d|87\d|120|570)|1[38]00|1?8(?:00|33|44|55|66|77|88)\d{7}$|90[0-2]\d{6}$)"
)
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
        if _OTHER_NUMBER.search(text, max(0, m.start() - 50), m.start()) or _company_register(text, m.start()):
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
    r"switchboard|main (?:line|number|office|phone)|general (?:line|number)|algemeen nummer|hoofdnummer|front desk"
    r"|reception|customer (?:service|care|support)"
    r"|support (?:line|number|desk)|help ?line|help ?desk|service desk|hotline|public (?:number|line|phone)"
    r"|(?:order|orders|reservations?|info|information|enquiries|inquiries) (?:line|number)|toll[- ]free|freephone"
    r"|booking line|sales line|dispatch|대표 ?번호|대표 ?전화|고객 ?센터|代表番号|代表電話|客服|总机|總機|zentrale"
    r"|kundenservice|kundendienst|centralita|atención al cliente|standard téléphonique|service client|centralino"
    r"|servizio clienti|central de atendimento|atendimento ao cliente|klantenservice|receptie|obsługa klienta"
    r"|kundtjänst|växel|müşteri hizmetleri|santral|горячая линия|служба поддержки|справочная|le standard"
    r"|standard de l|accueil de l|call ?cent(?:er|re)|contact cent(?:er|re)|service cent(?:er|re)|callcenter"
    r"|servicecenter|centro de (?:atención|llamadas)|centre d'appels|central de (?:atendimento|relacionamento)"
    r"|çağrı merkezi|колл-центр|контакт-центр|お問い合わせ|問い合わせ|コールセンター|サポートセンター|콜센터|상담 ?센터"
    r"|呼叫中心|客服中心|服务热线|服務熱線|trung tâm (?:chăm sóc|hỗ trợ)|tổng đài|pusat panggilan|layanan pelanggan"
    r"|خدمة العملاء|مركز الاتصال|कस्टमर केयर|ग्राहक सेवा|hjälpcenter|infolinia|biuro obsługi",
    re.IGNORECASE,
)


_NUMBER_WORD = re.compile(
    r"\b(?:number|no\.?|line|phone|telephone|tel|fax|contact|nummer|telefon\w*|numéro|número|numero|téléphone"
    r"|teléfono|telefone|numer\w*|номер|телефон\w*|hattı|numarası)\b|电话|電話|号码|號碼|전화|번호|연락처",
    re.IGNORECASE,
)
# A line with opening hours is staffed: nobody gives their own phone's hours ("… during business hours").
_OPENING_HOURS = re.compile(
    r"\b(?:business|opening|office|working) hours|\bweekdays?\b|\bmon(?:day)?\s?[-–]\s?fri(?:day)?\b"
    r"|\b(?:open|delivers?|delivery) (?:until|till|daily|every day|24/7|from)\b|\b(?:opens|closes) at\b"
    r"|\bgeöffnet (?:bis|ab|von)\b"
    r"|\bouvert (?:jusqu|de|du|tous)|\babierto (?:hasta|de|todos)\b|\baperto (?:fino|dalle|tutti)\b"
    r"|öffnungszeiten|geschäftszeiten|werktags|horario de (?:atención|oficina)|días laborables|heures d'ouverture"
    r"|jours ouvrables|orari(?:o)? di (?:apertura|ufficio)|giorni feriali|horário comercial|dias úteis"
    r"|openingstijden|werkdagen|godzinach pracy|dni robocze|öppettider|vardagar|çalışma saatleri|hafta içi"
    r"|часы работы|по будням|工作日|营业时间|營業時間|工作時間|工作时间|営業時間|平日|受付時間|영업시간|평일|업무시간",
    re.IGNORECASE,
)
# "088 130 96 70 (algemeen nummer)": the number, then what line it is.
_BUSINESS_AFTER = re.compile(
    r"[\d +().-]{7,22}\((?:general|main|algemeen|hoofd|central|zentrale|centralita|standard)", re.IGNORECASE
)
_EXTENSION_AFTER = re.compile(
    r"[+\d(][\d ().\-‐]{5,20}\s*,?\s*(?:ext\.?|x|extension|extensión|durchwahl|poste|내선|内線)\s*\d", re.IGNORECASE
)
# Someone's number by who is named before it ("my mum's number", "Anna's mobile").
_SOMEONES = re.compile(
    r"\b(?:my|his|her|their|mum|mom|dad|wife|husband|partner|friend|sister|brother|son|daughter|aunt|uncle"
    r"|neighbou?r|landlord|nanny|babysitter|mi|mis|su|sus|mein\w*|sein\w*|ihr\w*|mon|ma|mes|son|sa|ses|mio|mia"
    r"|suo|sua|meu|minha|seu|mijn|zijn|haar|mój|moja|jego|jej|min|mitt|hans|hennes|benim|onun|мой|моя|его|её)\b"
    r"|\w's (?:number|mobile|cell|phone)|我的|我妈|我爸|他的|她的|私の|彼の|彼女の|내 |우리 |그의|그녀의",
    re.IGNORECASE,
)
# What makes a number someone's own even at their workplace ("the clinic, her mobile is …").
_PERSONAL_LINE = re.compile(
    r"\b(?:mobile|cell|cellphone|private|personal|home|direct|his|her|handy|privat\w*|móvil|portable|cellulare"
    r"|celular|persönlich\w*|personnel|personale|prywatn\w*|komórk\w*|cep)\b|手机|手機|携帯|휴대폰|핸드폰|개인",
    re.IGNORECASE,
)


_WHERE = re.compile(r"\s*(?:à|a|au|aux|en|in|im|at|de|del|di|do|da|bei|beim|em|na|w|v|op|i)\b", re.IGNORECASE)


def organisation_line(text: str, start: int) -> bool:
    """Is the number at `start` an organisation's line by what introduces it? (Numbers set aside for fiction,
    555-01xx and Ofcom's drama ranges, are not exempt: people write them for real ones in examples and tests.)"""
    if _BUSINESS_WORDS.search(text, max(0, start - 80), start) or _BUSINESS_AFTER.match(text, start):
        return True
    before = text[max(0, start - 60) : start]
    if _OPENING_HOURS.search(text, start, start + 60) and not _SOMEONES.search(before):
        return True
    if _EXTENSION_AFTER.match(text, start):
        return False  # an extension rings one person's desk ("会社の電話 03-1234-6993 内線 204")
    for organisation in ORGANISATION.finditer(before):
        rest = before[organisation.end() :]
        # "Boston Public Library renewals: (617) …": the organisation's service, then its number
        labelled = (
            len(rest) <= 24
            and rest.rstrip().endswith(":")
            and len(re.sub(r"[\W\d_]", "", rest)) >= 3  # a service named: "renewals:", not a bare "office:"
            and not _SOMEONES.search(rest)
            and not _WHERE.match(rest)  # "du bureau à Bruxelles :" says where, not which service
        )
        if len(rest) <= 40 and (labelled or _NUMBER_WORD.search(rest)) and not _PERSONAL_LINE.search(before):
            return True
        # "teléfono de la farmacia 91 …", "the phone of the clinic: …": the number word names the organisation's.
        said = before[max(0, organisation.start() - 24) : organisation.start()]
        if (
            len(rest.strip(" :")) <= 24
            and _NUMBER_WORD.search(said)
            and not _SOMEONES.search(rest)
            and not _WHERE.match(rest)  # "Téléphone du bureau à Bruxelles :": which office, not which service
            and not _PERSONAL_LINE.search(before)
        ):
            return True
    return False


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
