"""Personal details no library validates: home addresses, dates of birth, bank account numbers, vehicle plates.

None of these has a checksum or a shape of its own ("42 Elm Street" is also a bar's address, "1985-03-14" a
release date), so each needs its word: someone *lives at* the address, was *born on* the date, the number is an
*account number* — in English, Spanish, German, French, Korean or Japanese — with the value right after it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .gate_rule import GateRule
from .organisations import ORGANISATION, PUBLIC_PLACE

__all__ = ["PERSONAL_DETAIL_RULES"]

Finder = Callable[[str], tuple[int, int] | None]

_ADDRESS_WORDS = re.compile(
    r"home address|(?:my|his|her|their|the user's|user's) (?:home |mailing |postal |shipping )?address|address is"
    r"|lives at|living at|lives on|lives (?:upstairs|downstairs|next door|nearby|now) at|adresse de|woont (?:op|aan|in)"
    r"|住在|住址|地址|domicilio|dirección (?:es|de casa|particular)|vive en|wohnt (?:in der"
    r"|in|an der|am|im)"
    r"|wohnadresse|anschrift|privatadresse|habite (?:au|à|rue|le)|domicilié|adresse (?:est|personnelle|postale)"
    r"|주소는|집 주소|住所は|自宅の住所|自宅は|주소\s*[:：]|住所\s*[:：]|〒|배송지|配送先|お届け先"
    r"|(?:delivery|shipping|mailing|postal|home|billing) address|adresse de livraison|lieferadresse"
    r"|dirección de (?:envío"
    r"|entrega)|(?:our|my|his|her|their|parents'?|mum's|mom's|dad's) (?:place|flat|apartment|house|home)"
    r"|(?:flat|apartment|house|home) is (?:at|on)|ship (?:it|them|presents|the \w+|everything) to"
    r"|deliver (?:it|them) to"
    r"|send (?:it|them|presents|the \w+) to|wir wohnen|ich wohne|wohne in|vivo en|vivimos en|habitamos|j'habite"
    r"|nous habitons|sa maison est|leur maison est"
    r"|abit[oaie] (?:in|a|al|alla)|abitiamo|vive a|residente (?:in|a)|indirizzo (?:di casa|è|:)|domicilio (?:è|in)"
    r"|spedisci(?:lo|la)? a|consegna a|mor[oa] (?:na|no|em)|moramos|morada|endereço (?:é|de casa|residencial|:)"
    r"|reside em|envi[ae] para|entrega em|casa (?:dele|dela|do|da|di|de)"
    r"|\b(?:jag|vi|han|hon|de) bor (?:på|i)\b|\bbor på\b"
    r"|hemadress|min adress|alamat (?:rumah|saya|kami|kos)|tinggal di\b"
    r"|nhà (?:mình|tôi|em|anh|chị) ở|địa chỉ (?:nhà )?(?:mình|tôi|em|của tôi|của mình)"
    r"|\bở số|mieszka\w* (?:na|przy|w)\b|(?:mój|mój domowy) adres"
    r"|adres (?:zamieszkania|domowy)|ev adresi|adresim|oturuyor\w*|живу|живёт|живет|живут|мой адрес|домашний адрес"
    r"|мой дом|घर का पता|का पता|रहते हैं|रहती है|रहता है|عنواني|عنوان منزل|يسكن في|تسكن في|أسكن في"
    r"|\badresa\b|locuie(?:ște|ste|sc) (?:în|pe|la)|domiciliat\w*|моя адреса|домашня адреса|адреса\s*[:：]"
    r"|адреса (?:батьків|мами|тата|бабусі|дідуся|сестри|брата)|адрес (?:родителей|мамы|папы|бабушки|дедушки)"
    r"|мешка\w* (?:на|в|у)\b|прожива\w* (?:на|в|у|за)\b|כתובת|\bגר(?:ה|ים|ות)? ב|מתגורר\w* ב|διεύθυνσ\w*"
    r"|μένω στ|μένει στ|bydl(?:í|ím|íme) (?:v|na)\b|lakcím\w*|lakik|ที่อยู่",
    re.IGNORECASE,
)
_ADDRESS_VALUE = re.compile(
    r"(?<![\w.-])\d{1,5}[A-Za-z]?,?\s+[A-Za-zÀ-ÿ][\w.'-]*(?:\s+[\w.'-]+){0,4}|[A-Za-zÀ-ÿ][\w.'-]*(?:straße|strasse|str\.|weg|gasse"
    r"|platz|allee|ring|damm)\s+\d{1,4}|(?:calle|avenida|av\.|rue|avenue|boulevard|bd|chemin|place"
    r"|via|viale|piazza|corso|largo|vicolo|rua|travessa|praça|alameda|estrada|rodovia)\s+[\w .'-]{2,40}?"
    r"\d{1,5}|\d{1,4}(?:[-−/]\d{1,4}){1,3}|\d+\s*(?:丁目|番地|番|번지|호|号|號)|[가-힣]+(?:로|길)\s*\d+"
    r"|[A-Za-zÀ-ÿ]*(?:gatan|vägen|gata|väg|gade|vej|veien|gaten|straat|laan|plein|gracht)\s+\d{1,4}"
    r"|(?:jl\.?|jalan|ul\.|ulica|al\.|aleja|ул\.|улица|пр\.|проспект|ngõ|phố|đường|sokak|sok\.|cad\.|caddesi"
    r"|mahallesi|mah\.|شارع|str\.|strada|bulevardul|calea|aleea|вул\.|вулиця|רחוב|רח'|οδός|οδ\.|ulice|utca"
    r"|ถนน|ซอย)\s+[^\d\n]{0,30}?\d{1,5}|số\s+\d{1,5}",
    re.IGNORECASE,
)
# Korean and Japanese put the word after the date: "1985年9月14日生まれ".
_DATE_THEN_BIRTH = re.compile(
    r"(?:\d{4}\s*년\s*\d{1,2}\s*월\s*\d{1,2}\s*일|\d{4}年\d{1,2}月\d{1,2}日|\d{4}[./-]\d{1,2}[./-]\d{1,2})\s*"
    r"(?:생|출생|태어|生まれ|生|誕生)"
)
_BIRTH_WORDS = re.compile(
    r"born (?:on )?|date of birth|\bdob\b|birthday|birth date|fecha de nacimiento|naci(?:ó|o|da|do) el|cumpleaños"
    r"|geburtsdatum|geboren am|geburtstag|date de naissance|née? le|anniversaire"
    r"|생년월일|생일|태어난 날|生年月日|誕生日|生まれ|nat[oa] il|data di nascita|compleanno|nascid[oa] em|nasceu em"
    r"|data de nascimento|aniversário",
    re.IGNORECASE,
)
_MONTHS = (
    r"jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|june|july|august|september"
    r"|october|november|december|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre"
    r"|diciembre|januar|februar|märz|mai|juni|juli|oktober|dezember|janvier|février|mars|avril|juin|juillet|août"
    r"|septembre|octobre|novembre|décembre|gennaio|febbraio|aprile|maggio|giugno|luglio|settembre|ottobre|dicembre"
    r"|janeiro|fevereiro|março|junho|julho|setembro|outubro|novembro|dezembro"
)
_DATE = re.compile(
    rf"\d{{1,2}}[./-]\d{{1,2}}[./-]\d{{2,4}}|\d{{4}}[./-]\d{{1,2}}[./-]\d{{1,2}}|\d{{1,2}}(?:st|nd|rd|th|er)?\.?\s+(?:de\s+)?"
    rf"(?:{_MONTHS})\.?\s+(?:de\s+)?\d{{4}}|(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}"
    r"|\d{4}\s*년\s*\d{1,2}\s*월\s*\d{1,2}\s*일|\d{4}年\d{1,2}月\d{1,2}日",
    re.IGNORECASE,
)
_ACCOUNT_WORDS = re.compile(
    r"account (?:number|no\.?|#)|acct\.? ?(?:no\.?|#)?|bank account|sort code|routing (?:number|no\.?)"
    r"|routing(?=\s*[:#]?\s*\d)|\baba\b"
    r"|direct deposit"
    r"|número de cuenta|cuenta bancaria|n\.º de cuenta|kontonummer|bankverbindung|\bblz\b|numéro de compte"
    r"|compte bancaire|\brib\b|계좌 ?번호|계좌|口座番号|口座|普通預金|普通|当座|支店|numero di conto|conto corrente"
    r"|número da conta|conta corrente|conta bancária|agência",
    re.IGNORECASE,
)
_ACCOUNT_VALUE = re.compile(r"(?<![\w-])\d[\d -]{4,22}\d(?![\w-])")


_NETWORK_VALUE = re.compile(
    r"\d{1,3}(?:\.\d{1,3}){3}|[0-9a-f]{2}(?::[0-9a-f]{2}){5}|[\w.+-]+@|https?://|www\.|localhost", re.IGNORECASE
)
_NETWORK = re.compile(
    r"(?:ip|ipv[46]|lan|wan|mac|e-?mail|web|server|network|memory|hardware|bluetooth|gateway)\W*$", re.IGNORECASE
)


def _after(words: re.Pattern[str], value: re.Pattern[str], reach: int, public: bool = False) -> Finder:
    """The first `value` within `reach` characters after one of `words`; with `public`, not where the word is a
    place's or an organisation's address ("the museum's address is", "上海办公室地址")."""

    def find(text: str) -> tuple[int, int] | None:
        for word in words.finditer(text):
            if _NETWORK.search(text, max(0, word.start() - 12), word.start()) or _NETWORK_VALUE.match(
                text, word.end() + len(text[word.end() :]) - len(text[word.end() :].lstrip())
            ):
                continue
            if public and _public_address(text, word):
                continue
            m = value.search(text, word.end(), min(len(text), word.end() + reach))
            if m is None or _MEASURE.match(m.group(0)):
                continue
            # With `public` (the home-address rule) a day of the month is a date ("renews on 1 October", "Oct 31").
            if public and (
                _DAY_OF_MONTH.match(m.group(0)) or _MONTH_BEFORE.search(text, max(0, m.start() - 12), m.start())
            ):
                continue
            return m.span()
        return None

    return find


# A number with a unit after it is a measure, not a house number ("their flat's internet is 250/40 Mbit/s").
# "renews on 1 October": a date, not a house number and a street.
_DAY_OF_MONTH = re.compile(
    rf"\d{{1,2}}(?:st|nd|rd|th|er)?\.?\s+(?:de\s+)?(?:{_MONTHS})\b|(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b",
    re.IGNORECASE,
)
_MONTH_BEFORE = re.compile(rf"\b(?:{_MONTHS})\.?\s+$", re.IGNORECASE)
_MEASURE = re.compile(
    r"\d+\s*(?:[kmgt]?bits?|[kmgt]i?b|[kmg]bps|mbit/s|[kmgt]?hz|km|kg|mm|cm|ml|mg|kwh|kw|mah|sq|m2|m²|%"
    r"|nights?|days?|weeks?|months?|years?|hours?|minutes?|nätter|dagar|veckor|månader|noches|días|semanas|meses"
    r"|nuits|jours|semaines|mois|nächte|tage|wochen|monate|notti|giorni|settimane|mesi|noites|dias|nachten|dagen"
    r"|weken|nocy|dni|tygodni|gece|gün|hafta|ночи|ночей|дней|дня|недел\w*|malam|hari|minggu|đêm|ngày|tuần)\b",
    re.IGNORECASE,
)


# Words that say someone lives there: never a place's address, whatever building is named before them.
_RESIDENCE = re.compile(
    r"home|live|living|wohn|habit|vive|vivo|moro|mora|resid|domicil|privat|住在|自宅|집|家|place|flat|apartment|house",
    re.IGNORECASE,
)


def _public_address(text: str, word: re.Match[str]) -> bool:
    if _RESIDENCE.search(word.group(0)) and "white house" not in text[max(0, word.start() - 12) : word.end()].lower():
        return False
    before = text[max(0, word.start() - 40) : word.end()]
    return bool(PUBLIC_PLACE.search(before) or ORGANISATION.search(before))


def _birth(text: str) -> tuple[int, int] | None:
    m = _DATE_THEN_BIRTH.search(text)
    return m.span() if m is not None else _after(_BIRTH_WORDS, _DATE, 30)(text)


def _birth_or_name(text: str) -> tuple[int, int] | None:
    return _birth(text) or _name_and_date(text)


# A person's name and a full date right after it: "Maria Rossi, 12/03/1985", "John Smith (b. 3 May 1979)".
_NAME_THEN_DATE = re.compile(
    r"\b[A-ZÀ-Ý][a-zà-ÿ]+(?: [A-ZÀ-Ý][a-zà-ÿ]+){1,2}\s*(?:,|\(|-|–)\s*"
    r"(?:b\.|born|née?|nat[oa]|nacid[oa]|geb\.|nascid[oa])?\s*"
)
_YEAR_OF_BIRTH = re.compile(r"(?:19[2-9]\d|200\d|201[0-5])\b")


def _name_and_date(text: str) -> tuple[int, int] | None:
    for m in _NAME_THEN_DATE.finditer(text):
        date = _DATE.match(text, m.end())
        if date is not None and _YEAR_OF_BIRTH.search(date.group(0)):
            return m.start(), date.end()
    return None


def _account(text: str) -> tuple[int, int] | None:
    for word in _ACCOUNT_WORDS.finditer(text):
        m = _ACCOUNT_VALUE.search(text, word.end(), min(len(text), word.end() + 30))
        if m is not None and sum(c.isdigit() for c in m.group(0)) >= 6:
            return m.span()
    return None


# A vehicle's registration names its keeper: the plate word, a connector at most, then a plate-shaped value
# (letters and digits, or a Chinese or Korean plate), so "plate chiller model PC-30" is not one.
_PLATE = re.compile(
    r"(?:licen[cs]e plate|number plate|\bplates?\b|\breg(?:istration)?(?: number| no\.?| plate)|kennzeichen"
    r"|nummernschild|immatriculation|plaque|matrícula|matricula|\bplaca\b|\btarga\b|kenteken|ナンバー"
    r"|车牌(?:号)?|車牌(?:號)?|번호판)"
    r"(?:\s*(?:number|no\.?|nr\.?|is|was|reads|=|:|#|：|是|は|는|은|号码|de|do|da))*"
    r"(?:(?:\s+[^\s.;]+){1,4}?\s+(?:is|was|ist|lautet|est|es|é|è|:))?\s*"
    r"(?P<value>(?-i:[A-ZÄÖÜ0-9]{1,4}(?:[ ·-]?[A-ZÄÖÜ0-9]{1,4}){1,3})(?![\w-])"
    r"|(?-i:[\u4e00-\u9fff][A-Z][ ·]?[A-Z0-9]{5})"
    r"|\d{2,3}\s?[가-힣]\s?\d{4})",
    re.IGNORECASE,
)


def _plate(text: str) -> tuple[int, int] | None:
    for m in _PLATE.finditer(text):
        value = m.group("value")
        digits = sum(c.isdigit() for c in value)
        letters = sum(c.isalpha() for c in value)
        if digits >= 2 and letters:
            return m.span("value")
    return None


def _rule(category: str, reason: str, finder: Finder, digits: int, needles: str) -> GateRule:
    words = tuple(n for n in needles.split("|") if n)  # one of these is in every text the rule refuses
    return GateRule(
        f"personal_data.{category}", "personal_data", reason, "", finder=finder, min_digits=digits, needles=words
    )


_ADDRESS_NEEDLES = (
    "address|lives|living|domicil|dirección|direccion|vive|wohn|anschrift|adresse|habite|주소|住所|自宅|〒|배송지"
    "|配送先|お届け先|place|flat|apartment|house|home|ship|deliver|send|vivo|vivimos|habitamos|habitons|maison"
    "|abit|resident|indirizzo|spedisc|consegna|mor|endereço|reside|envi|entrega|casa|woont|住在|住址|地址"
    "|bor|adress|alamat|tinggal|nhà|địa chỉ|ở số|mieszka|adres|oturuyor|живу|живёт|живет|живут|дом|पता|रहत|عنوان"
    "|يسكن|تسكن|أسكن|adresa|locuie|domiciliat|адреса|мешка|прожива|כתובת|גר|מתגורר|διεύθυνσ|μένω|μένει|bydl"
    "|lakcím|lakik|ที่อยู่"
)
_BIRTH_NEEDLES = (
    "born|birth|dob|naci|cumpleaños|geburt|geboren|naissance|né|anniversaire|생년월일|생일|태어|生年月日|誕生日|生まれ"
    "|생|출생|生|誕生|nat|nascit|compleanno|nascid|nasceu|aniversário"
)
_ACCOUNT_NEEDLES = (
    "account|acct|sort code|routing|aba|direct deposit"
    "|cuenta|kontonummer|bankverbindung|blz|compte|rib|계좌|口座|普通|当座|支店"
    "|conto|conta|agência"
)

_PLATE_NEEDLES = (
    "plate|reg|kennzeichen|nummernschild|immatriculation|plaque|matr|placa|targa|kenteken|ナンバー|车牌|車牌|번호판"
)

PERSONAL_DETAIL_RULES: tuple[GateRule, ...] = (
    _rule("address", "contains a home address", _after(_ADDRESS_WORDS, _ADDRESS_VALUE, 40, True), 1, _ADDRESS_NEEDLES),
    _rule("birth_date", "contains a date of birth", _birth, 4, _BIRTH_NEEDLES),
    _rule("birth_date.name_and_date", "contains a person's name with a date of birth", _name_and_date, 5, ""),
    _rule("bank_account", "contains a bank account number", _account, 6, _ACCOUNT_NEEDLES),
    _rule("vehicle_plate", "contains a vehicle registration plate", _plate, 2, _PLATE_NEEDLES),
)
