"""Numbers with their units, read from a learning's text, and compared as quantities.

Dedupe must tell "3.5 L/hr" and "0.92 US gal/hr" apart from "1.3 US gal/hr": the first pair is one value
in two units (skip), the second a change (new version). Units are resolved by `pint` (a maintained units
library) to a linear map onto SI base units, once per unit spelling; comparisons are then plain float
arithmetic. Each value carries the interval its spelling implies — "151 °F" is 150.5–151.5 °F, "~3.5" or
"about 3.5" is ±5 % — and two values are the same when their intervals meet in base units.

What pint does not know is still compared, by spelling: currencies ("€64.20" against "EUR 64.20", never
against dollars), counted nouns ("2 kids" against "3 kids") and bare numbers.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ..terms import stem
from .clock_times import clock_time, spoken_times
from .fractions import fractions
from .lexicon import MONTHS, is_german
from .units import COUNTED, UNIT_ALIASES, UnitMap, resolve

__all__ = ["Quantity", "counts_after", "quantities"]

# Words that turn into numbers in the languages learnloop reads (the small ones people write out).
_NUMBER_WORDS = {
    **dict.fromkeys(("zero", "null", "cero", "zéro", "nulla"), 0),
    **dict.fromkeys(("one", "uno", "una", "eins", "ein", "eine", "un", "une", "um", "uma", "één"), 1),
    **dict.fromkeys(("two", "dos", "zwei", "deux", "due", "dois", "duas", "twee"), 2),
    **dict.fromkeys(("three", "tres", "drei", "trois", "tre", "três", "drie"), 3),
    **dict.fromkeys(("four", "cuatro", "vier", "quatre", "quattro", "quatro"), 4),
    **dict.fromkeys(("five", "cinco", "fünf", "cinq", "cinque", "vijf"), 5),
    **dict.fromkeys(("six", "seis", "sechs", "sei", "zes"), 6),
    **dict.fromkeys(("seven", "siete", "sieben", "sept", "sette", "sete", "zeven"), 7),
    **dict.fromkeys(("eight", "ocho", "acht", "huit", "otto", "oito"), 8),
    **dict.fromkeys(("nine", "nueve", "neun", "neuf", "nove", "negen"), 9),
    **dict.fromkeys(("ten", "diez", "zehn", "dix", "dieci", "dez", "tien"), 10),
    **dict.fromkeys(("eleven", "once", "elf", "onze", "undici"), 11),
    **dict.fromkeys(("twelve", "doce", "zwölf", "douze", "dodici", "twaalf", "dozen"), 12),
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "half": 0.5,
    "twice": 2,
    "once": 1,
    "thrice": 3,
    "single": 1,
    "double": 2,
    "triple": 3,
}
# "once" is also Spanish for eleven; as an English adverb ("once a week") it is the one people mean.
_NUMBER_WORDS["once"] = 1

_APPROX = re.compile(
    r"(?:~|≈|\babout|\baround|\broughly|\bapprox(?:imately|\.)?|\bnearly|\balmost|\bca\.|\bcirca|\betwa|\bungefähr"
    r"|\benviron|\baproximadamente|\bcerca de|\bcirca|\bvers|\bzo'n|\bongeveer|\bpresque)\s*$",
    re.IGNORECASE,
)
_CURRENCY_SYMBOLS = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₩": "KRW", "₹": "INR", "₽": "RUB", "CHF": "CHF"}
_CURRENCY_CODES = frozenset(
    "USD EUR GBP JPY KRW INR CHF CAD AUD NZD SEK NOK DKK PLN CZK HUF BRL MXN CNY RMB HKD SGD ZAR TRY RUB".split()
)
_CURRENCY_WORDS = {
    "dollar": "USD",
    "dollars": "USD",
    "euro": "EUR",
    "euros": "EUR",
    "pound": "GBP?",  # money or mass: left to context, see `_unit_token`
    "pounds": "GBP?",
    "yen": "JPY",
    "won": "KRW",
    "rupees": "INR",
    "francs": "CHF",
}
# A hundredth of whatever currency the reader has in mind: "30 cents" is "$0.30" or "€0.30".
_CENTS = frozenset(("cent", "cents", "¢", "céntimos", "céntimo", "centavos", "centavo", "centimes", "centesimi"))
UNNAMED_CURRENCY = "currency:?"
# One number: digits with thousands separators and a decimal part (either convention), or a number word.
_NUMBER = re.compile(
    r"(?P<cur>[$€£¥₩₹₽])?\s?"
    r"(?<![0-9A-Za-z_.,\u00c0-\u024f])(?P<num>[-−]?\d{1,3}(?:[,.' ]\d{3})+(?:[.,]\d+)?|[-−]?\d+(?:[.,]\d+)?)(?![\d])"
    r"|(?<![\w-])(?P<word>(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)-(?:one|two|three|four|five|six|"
    r"seven|eight|nine)|[^\W\d_]+)(?=[\s-])",
    re.UNICODE,
)
_UNIT = re.compile(
    r"\s?-?\s?(?:(?i:US|U\.S\.|imp\.?|imperial)\s)?(?P<unit>%|‰|°\s?[CFcf]\b|º\s?[CFcf]\b|(?:[^\W\d_]|[µ°²³])+(?:\s?(?:/|per\s)\s?(?:[^\W\d_]|[²³])+)?)",
    re.UNICODE,
)
# Words that follow a number without being its unit ("3 of them", "5 and 6").
_NOT_UNITS = frozenset(
    """
    a an and or of to the in on at by for with from than as is are was were be has had have per via vs versus but if
    so auf bis
    naar tot para zu se si ne lo
    not no y o e et und oder de del la le les el los las der die das den dem des im am au aux du à en und
    i me my we our you your he she it they them this that these those which who
    """.split()
)
_PER = re.compile(r"\s?(?:/|per\s|a\s|an\s|each\s|every\s|pro\s|por\s|par\s)\s?([^\W\d_]+)", re.UNICODE)
_TIME_UNITS = frozenset(("second", "minute", "hour", "day", "week", "month", "year", "night", "session", "batch"))

# A number right after a capitalised word, "#", "No." or a word that numbers things names an instance.
_LABEL_NOUNS = frozenset(
    """
    batch version tier level step phase room floor line site store warehouse building zone lane gate station
    shelf aisle bay dock unit kettle oven tank fermenter fermentor bed plot row team squad group class grade
    season episode chapter lesson module sprint release build ticket case order invoice account server node
    cluster region channel track route bus apartment flat suite lot locker table seat pump machine camera
    printer truck van vehicle lab ward clinic office branch shop plant line cohort wave round week
    sala salle saal zimmer raum habitación habitacion chambre camera quarto stanza kamer apartamento appartement
    appartamento wohnung piso planta étage etage stock andar piano verdieping cocina cuisine küche cucina cozinha
    grupo groupe gruppe gruppo groep aula clase classe klasse classe turma mesa tisch tavolo línea linea ligne
    linie lijn puerta porte tür porta deur edificio bâtiment batiment gebäude edifício prédio gebouw almacén
    almacen entrepôt lager magazzino armazém armazem lote partida tanque cuve tanque serbatoio horno four ofen forno
    oven bomba pompe pumpe pompa máquina maquina maschine macchina caja caisse kasse cassa oficina bureau büro buro
    ufficio escritório escritorio kantoor sucursal filiale filial loja negozio tienda magasin laden winkel fase
    paso étape etape schritt passo stap nivel niveau livello versión version versione versão versao equipo équipe
    equipe squadra servidor serveur nodo noeud knoten región region région regione zona zone bahía quai muelle
    puesto poste posto kanal canal canale carril voie spur corsia camión camion lkw furgoneta lote parcela
    parcelle parzelle lotto box cabina cabine kabine
    """.split()
)
_NOT_LABELS = frozenset(
    """
    about around roughly approx approximately nearly almost only just over under exactly at least most
    is was are were be has had have its it we i he she they our my their his her the a an to of in on by for
    with from than and or but every each per after before since until within up down some all any between
    below above beyond past toward towards into onto via
    """.split()
)
# "sala de reuniones 4", "salle de réunion 2": the noun that numbers things comes before its complement.
_LABEL_OF = re.compile(
    r"\b(?:" + "|".join(sorted(_LABEL_NOUNS, key=len, reverse=True)) + r")\s+(?:de|di|da|do|du|del|des|della|van|von)"
    r"\s+[^\W\d_]+\s$",
    re.IGNORECASE,
)
_WORD_BEFORE = re.compile(r"(#|\bN[or]\.|\b[nN]\.|\bn[º°]|\b[vV]\.?|[^\W\d_][\w'-]*)[\s/-]?$")

_NUMBER_TEXT = re.compile(r"[\d.,]+|[^\W\d_]+|")

# What follows a number: a CJK myriad ("5万円", "50만 원") and a currency written after the amount, as most of
# Europe and East Asia write it ("62 €", "71 € monatlich", "120 zł", "5万円", "100元", "3 500 Kč").
_CJK_MULTIPLIERS = {"万": 1e4, "萬": 1e4, "億": 1e8, "亿": 1e8, "千": 1e3, "만": 1e4, "억": 1e8, "천": 1e3}
_CURRENCY_AFTER = {
    **{symbol: code for symbol, code in _CURRENCY_SYMBOLS.items() if len(symbol) == 1},
    "₺": "TRY",
    "₫": "VND",
    "円": "JPY",
    "日元": "JPY",
    "元": "CNY",
    "원": "KRW",
    "zł": "PLN",
    "Kč": "CZK",
    "Ft": "HUF",
    "TL": "TRY",
    "kr": "kr",  # Swedish, Norwegian or Danish crowns: the text does not say which
}
_WRITTEN_AFTER = re.compile(
    r"(?P<mult>[万萬億亿千](?![\u3400-\u9fff])|[万萬億亿]|千(?=[円元])|[만억천](?=\s?원|\s|$))?"
    r"(?:\s?(?P<cur>日元|[€$£¥₩₹₽₺₫円元원]|(?:zł|Kč|Ft|TL|kr)(?![^\W\d_])))?"
)


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W\d_]+", text.casefold())


def _german_um(text: str, end: int) -> bool:
    """Is "um" the German preposition ("um 7 Uhr"), not Portuguese "one": before a number, or in German text?"""
    return re.match(r"\s+\d", text[end:]) is not None or is_german(_words(text))


_MULTIPLIERS = {"k": 1e3, "mn": 1e6, "mio": 1e6, "bn": 1e9, "mrd": 1e9, "million": 1e6, "billion": 1e9, "thousand": 1e3}
# Thousands and millions written as words in other languages ("9 tys. PLN", "20 bin lira", "5 juta rupiah"). Some
# are also other words ("bin", "mil"), so these scale a number only when money follows them.
_MONEY_MULTIPLIERS = {
    **dict.fromkeys(
        "tys tysięcy tysiące bin тыс тысяч тысячи ribu rb nghìn ngàn mil mila mille tausend tsd".split(), 1e3
    ),
    **dict.fromkeys("duizend tusen".split(), 1e3),
    **dict.fromkeys("mln млн juta triệu millones milioni millions miljoen miljon milyon".split(), 1e6),
    "lakh": 1e5,
    "crore": 1e7,
}
# A currency named by a word after the amount, by the start of the word (Turkish and Slavic endings change:
# "liraya", "złotych", "рублей").
_MONEY_WORD_STARTS = (
    ("lira", "TRY"), ("złot", "PLN"), ("zlot", "PLN"), ("рубл", "RUB"), ("rupiah", "IDR"), ("đồng", "VND"),
    ("dólar", "USD"), ("dollar", "USD"), ("euro", "EUR"), ("rupee", "INR"), ("rupia", "INR"), ("yuan", "CNY"),
    ("kronor", "kr"), ("kroner", "kr"), ("kronen", "kr"), ("franc", "CHF"),
)  # fmt: skip
# Short currency words, taken only whole ("5 kr", "3 reais"; not "3 krill", "a real bargain").
_MONEY_WORDS = {"kr": "kr", "reais": "BRL", "руб": "RUB", "zł": "PLN", "tl": "TRY"}
_ALL_MULTIPLIERS = {**_MULTIPLIERS, **_MONEY_MULTIPLIERS}


def _money_word(word: str) -> str | None:
    """The currency a word after an amount names ("USD", "liraya", "złotych"), if any."""
    if word.upper() in _CURRENCY_CODES:
        return word.upper()
    folded = word.casefold()
    named = _MONEY_WORDS.get(folded) or _CURRENCY_WORDS.get(folded, "?")
    if not named.endswith("?"):  # "pounds" may weigh: not money by the word alone
        return named
    return next((code for start, code in _MONEY_WORD_STARTS if folded.startswith(start)), None)


# Year words: after a year-shaped number they name the year ("2025 года"), not a duration.
_YEAR_WORDS = dict.fromkeys(("года", "год", "году", "năm", "yıl", "yılı", "yılında", "tahun", "roku", "rok", "年"), 1)


def _money_follows(text: str, end: int) -> bool:
    """Is the number followed by a multiplier word and money ("Aidat 4 bin lira": after a capitalised word, still
    an amount, not a label)? A unit alone does not say so: "L'objectif 85 mm" names a lens."""
    unit, stop = _unit_token(text, end)
    return unit.casefold() in _ALL_MULTIPLIERS and _scaled_money(text, stop)[0] is not None


def _scaled_money(text: str, stop: int) -> tuple[str | None, int]:
    """After a multiplier word: the currency that follows it and where it ends, or (None, stop)."""
    stop += 1 if text[stop : stop + 1] == "." else 0
    written = _WRITTEN_AFTER.match(text, stop)
    if written is not None and written.group("cur"):
        return _CURRENCY_AFTER[written.group("cur")], written.end()
    word = re.match(r"\s?([^\W\d_]+|[$€£¥₩₹₽₺₫])", text[stop:])
    code = _money_word(word.group(1)) if word else None
    return (code, stop + word.end()) if code and word else (None, stop)


@dataclass(frozen=True, slots=True)
class Quantity:
    """One number in a text: its value, unit and dimension, and where it stands.

    `dimension` is pint's SI dimension for physical units, ``currency:EUR`` for money, ``count:<stem>`` for
    a counted noun ("3 kids"), ``unit:<spelling>`` for a unit pint does not know, "" for a bare number.
    `rounding` is half the last written digit ("151" → 0.5, "3.5" → 0.05); `approx` is set by "~", "about".
    """

    value: float
    unit: str
    dimension: str
    rounding: float
    approx: bool
    start: int
    end: int
    retracted: bool = False

    def interval(self, *, spelled_alike: bool) -> tuple[float, float]:
        """The values (in base units) this number stands for. Written in the same unit as the number it is
        compared with, a number means itself ("4 L/hr" is not "3.5 L/hr"); converted, it means what its
        last digit allows ("151 °F" is 66.1 ± 0.3 °C) up to 5 %, and an approximate one ±5 %."""
        # A last digit's rounding, but never more than 5 %: "1 hour" is not "30 minutes".
        half = 0.0 if spelled_alike else min(self.rounding, abs(self.value) * 0.05)
        if self.approx:
            half = max(half, abs(self.value) * 0.05)
        low, high = self.value - half, self.value + half
        mapping = resolve(self.unit) if self.unit and self.dimension and ":" not in self.dimension else None
        if mapping is not None:
            low, high = low * mapping.scale + mapping.offset, high * mapping.scale + mapping.offset
        return (low, high) if low <= high else (high, low)

    def meets(self, other: Quantity) -> bool:
        if self.dimension != other.dimension and not _one_money(self.dimension, other.dimension):
            return False
        alike = self.unit.casefold() == other.unit.casefold()
        a_low, a_high = self.interval(spelled_alike=alike)
        b_low, b_high = other.interval(spelled_alike=alike)
        tolerance = 1e-9 * max(abs(a_low), abs(a_high), abs(b_low), abs(b_high), 1e-12)
        return a_low <= b_high + tolerance and b_low <= a_high + tolerance


def _one_money(first: str, second: str) -> bool:
    """Money in a currency the text does not name meets money in any currency."""
    money = first.startswith("currency:") and second.startswith("currency:")
    return money and UNNAMED_CURRENCY in (first, second)


def _parse_number(raw: str) -> tuple[float, float] | None:
    """The value and its rounding half-width: "1,250" → (1250, 0.5), "3,5" → (3.5, 0.05)."""
    text = raw.replace("−", "-").replace("'", ",").replace(" ", ",")
    if re.fullmatch(r"-?\d{1,3}(?:[,.]\d{3})+", text):  # thousands only: 1,250 or 1.250
        text = re.sub(r"[,.]", "", text)
    elif re.fullmatch(r"-?\d{1,3}(?:,\d{3})+\.\d+", text):
        text = text.replace(",", "")
    elif re.fullmatch(r"-?\d{1,3}(?:\.\d{3})+,\d+", text):
        text = text.replace(".", "").replace(",", ".")
    else:
        text = text.replace(",", ".")
    try:
        value = float(text)
    except ValueError:
        return None
    decimals = len(text.partition(".")[2])
    return value, 0.5 * 10.0**-decimals


def _within(start: int, spans: list[tuple[int, int, float, str, bool]]) -> bool:
    return any(begin <= start < stop for begin, stop, *_ in spans)


def _is_label(text: str, start: int) -> bool:
    match = _WORD_BEFORE.search(text[max(0, start - 24) : start])
    if match is None:
        return False
    if match.group(0).endswith("/") and match.group(1)[0].isalpha():
        return True  # "release/2.3", "hotfix/4.2": a branch or path, not a value
    word = match.group(1)
    if word in _CURRENCY_CODES:
        return False  # "EUR 64.20": money
    if (word[0] in "#Nnv V" and len(word) <= 3 and not word.isalpha()) or word in ("v", "V"):
        return True
    folded = word.casefold()
    if folded in _LABEL_NOUNS or _LABEL_OF.search(text[max(0, start - 40) : start]):
        return True
    if not word[0].isupper() or folded in _NOT_LABELS or folded in _NUMBER_WORDS:
        return False
    if is_german(_words(text)):
        # German capitalises every noun: "Anlage 5 wird gereinigt" numbers a plant, "jeden Morgen 5 km" measures.
        number = _NUMBER_TEXT.match(text, start)
        unit = _UNIT.match(text, number.end() if number else start)
        return unit is None or resolve(unit.group("unit")) is None
    starts_sentence = re.search(r"(?:^|[.!?:;]\s)\s*$", text[: start - len(match.group(0))])
    # "Use 4-5 L/hr": an ordinary word that starts a sentence is not a name.
    return not starts_sentence or _after_noun(text.casefold(), start)


# Base-form verbs a count often follows ("need 2 hours", "take 3 tablets"): what comes before a number decides
# whether it counts something (after a verb or preposition) or numbers it (after a noun: "light 1").
_VERBS_BEFORE_COUNTS = frozenset(
    """
    need take use run get make give cost pay spend buy own add set keep want do eat drink sleep walk cook bake
    brew hold fit serve seat feed water feeds allow allows limit cap average hit reach score lift bench squat
    deadlift ride swim read write play practise practice train study sell ship order book rent hire employ
    about around roughly approx approximately nearly almost only just over under exactly least most every each
    per than within after before since until up down some all any last first next top another ran had got made
    took gave ate drank bought sold paid spent kept held rode swam wrote slept drove flew grew won lost left sent
    built hit put cut did saw met went came became began
    """.split()
)


_COUNTING_STEMS = frozenset(stem(word) for word in _VERBS_BEFORE_COUNTS)


def counts_after(word: str) -> bool:
    """Is `word` one a count often follows ("drinks 2 coffees", "need 3 days"), whatever its ending?"""
    return word in _VERBS_BEFORE_COUNTS or stem(word) in _COUNTING_STEMS


_ENGLISH = frozenset("the is are of and to in on for with has have was at by it this that an user user's".split())
_NOT_ENGLISH = frozenset("el la los las der die das le les il de und et y è una um uma een het".split())


def _english(text: str) -> bool:
    words = set(re.findall(r"[a-z']+", text.casefold()))
    return bool(words & _ENGLISH) and not words & _NOT_ENGLISH


def _in_code(text: str, start: int, end: int) -> bool:
    """Is the number part of an identifier joined by hyphens ("SKU 44-1087", "A-12", "B2-4")? A range of
    values ("4-5 L/hr", "100-120 ppm") is not: it has short parts, or a unit after it."""
    left = re.search(r"[\w-]*$", text[:start])
    right = re.match(r"[\w-]*", text[end:])
    run = (left.group(0) if left else "") + text[start:end] + (right.group(0) if right else "")
    if "-" not in run.strip("-"):
        return False
    parts = [p for p in run.split("-") if p]
    if len(parts) == 2 and parts[0] == text[start:end] and resolve(parts[1]) is not None:
        # "a 30-second increment", "a 5.5-cup capacity" measure; "the 75-gallon tank" names which tank.
        return bool(
            re.search(r"\b(?:the|my|our|your|his|her|their|this|that|these|those)\s+$|'s\s+$", text[:start], re.I)
        )
    if any(re.search(r"[^\W\d_]", p) for p in parts):
        return True
    if not any(len(p) >= 3 for p in parts):
        return False
    after, _ = _unit_token(text, end + (len(right.group(0)) if right else 0))
    return not after or resolve(after) is None


def _after_noun(text: str, start: int) -> bool:
    """Is the number right after a singular noun-like word ("light 1", "variant 2")?"""
    match = re.search(r"([^\W\d_][\w'-]*)\s$", text[max(0, start - 24) : start])
    if match is None:
        return False
    word = match.group(1).casefold()
    return not (
        word in _NOT_LABELS
        or word in _VERBS_BEFORE_COUNTS
        or word in _NUMBER_WORDS
        or word.endswith(("s", "ed", "ly", "'"))
        or len(word) < 3
    )


# Korean and Japanese write the unit, then particles and the rest of the clause, with no space: "45분이다",
# "30分に始まる". The unit is a known unit word at the start of the run, else its first character (a counter).
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7a3]")


# "the 15th", "APA 7th edition": a rank or a day of the month, whatever word comes before it.
_ORDINAL = re.compile(r"(?:st|nd|rd|th)(?![^\W\d_])", re.IGNORECASE)


def _one_span(text: str, start: int, end: int) -> bool:
    """Is "a"/"an" at `start` one unit of time ("a week before", "an hour") — not the "a" of a rate ("twice a
    week", "3 times a day") or of "half a minute"?"""
    unit = re.match(r"\s+([^\W\d_]+)", text[end:])
    if unit is None or not _resolve_time(unit.group(1)):
        return False
    before = re.search(r"([\w.,]+)\s+$", text[:start])
    word = before.group(1).casefold() if before else ""
    return not (word in _NUMBER_WORDS or word in ("times", "time", "per") or word[:1].isdigit())


def _ordinal_date(text: str, end: int) -> bool:
    """Is the number a day written as an ordinal before its month ("am 3. Mai", "den 10. juni")?"""
    match = re.match(r"\.\s?([^\W\d_]+)", text[end:])
    return match is not None and match.group(1).casefold() in MONTHS


def _cjk_unit(run: str) -> str:
    if not _CJK.match(run):
        # "230kPaだ", "2.3barです": a Latin unit with the clause glued after it, as Japanese writes it.
        glued = _CJK.search(run)
        return run[: glued.start()] if glued else run
    return next((run[:size] for size in (6, 5, 4, 3, 2) if run[:size] in UNIT_ALIASES), run[0])


def _unit_token(text: str, end: int) -> tuple[str, int]:
    """The unit spelled right after a number (and its end), or ("", end)."""
    match = _UNIT.match(text, end)
    if match is None:
        return "", end
    unit = _cjk_unit(match.group("unit"))
    first = unit.split("/")[0].split()[0].casefold()
    if first in _NOT_UNITS:
        return "", end
    stop = match.end()
    if first in ("square", "sq", "cubic", "cu"):  # "120,000 square metres", "850 sq. ft"
        measured = re.match(r"\.?\s?([^\W\d_]+)", text[stop:])
        if measured is not None and resolve(f"{first} {measured.group(1)}") is not None:
            unit, stop = f"{first} {measured.group(1)}", stop + measured.end()
    elif first in _DEGREES:  # "180 degrees Celsius", "20 Grad Celsius", "350 grados Fahrenheit"
        scale = re.match(r"\s([^\W\d_]+)", text[stop:])
        if scale is not None and scale.group(1).casefold() in ("celsius", "fahrenheit", "centigrade", "c", "f"):
            unit, stop = scale.group(1), stop + scale.end()
    head = re.split(r"\s*(?:/|\bper\b)\s*", unit, maxsplit=1)[0]
    if head != unit and resolve(unit) is None and (resolve(head) is not None or head.casefold() in _CENTS):
        return head, stop  # "30 seconds per move", "30 cents per transaction": the unit is what is counted per
    per = _PER.match(text, stop)
    if "/" not in unit and per is not None and _resolve_time(per.group(1)):
        unit, stop = f"{unit}/{per.group(1)}", per.end()
    return unit, stop


# Words after a number that make it a name: Turkish "numaralı" / "nolu", CJK "号", "番", "호" (not "번", also
# "times").
_NUMBERED = re.compile(r"\s?(?:numaral[ıi]|nolu|no['’]lu|[号號番호])", re.IGNORECASE)
_DEGREES = frozenset("degree degrees deg grad grados grado degrés degré gradi graus graden".split())


def _resolve_time(word: str) -> bool:
    name = UNIT_ALIASES.get(word.casefold(), word.casefold().rstrip("s"))
    return name in _TIME_UNITS


def _dimension(unit: str, currency: str | None) -> tuple[str, UnitMap | None]:
    if currency:
        return f"currency:{currency}", None
    if unit.casefold() in _CENTS:
        return UNNAMED_CURRENCY, None
    if _ORDINAL.fullmatch(unit):
        return "ordinal", None
    if not unit:
        return "", None
    if unit.upper() in _CURRENCY_CODES:
        return f"currency:{unit.upper()}", None
    money = _CURRENCY_WORDS.get(unit.split("/")[0].strip().casefold())  # "dollars a month": money
    if money is not None and not money.endswith("?"):
        return f"currency:{money}", None
    resolved = resolve(unit)
    if resolved is not None:
        return resolved.dimension, resolved
    word = unit.split("/")[0].split()[0].casefold()
    if word in COUNTED:
        return f"unit:{unit.casefold().replace(' ', '')}", None
    return f"count:{stem(word)}", None


@functools.lru_cache(maxsize=512)
def quantities(text: str) -> tuple[Quantity, ...]:
    """Every number in `text` with its unit, in order. Ranges ("4-5 L/hr") give both ends the unit."""
    found: list[tuple[float, float, str, str | None, int, int, int, bool]] = []
    times: list[int] = []
    # Values said in words, read before the numbers: (start, stop, value, unit, is a time of day).
    spoken = [(begin, stop_at, minutes, "", True) for minutes, begin, stop_at in spoken_times(text)]
    worded = sorted(
        spoken + [(f.start, f.stop, f.value, f.unit, False) for f in fractions(text) if not _within(f.start, spoken)]
    )

    def take_worded(before: int) -> None:
        while worded and worded[0][0] < before:
            begin, stop_at, value, unit, clock = worded.pop(0)
            if clock:
                times.append(len(found))
            found.append((value, 0.0, unit, None, begin, stop_at, stop_at, False))

    for match in _NUMBER.finditer(text):
        take_worded(match.end())
        currency: str | None = None
        if match.group("word"):
            word = match.group("word").casefold()
            if "-" in word:
                tens, _, ones = word.partition("-")
                number = float(_NUMBER_WORDS[tens] + _NUMBER_WORDS[ones])
            elif word in _NUMBER_WORDS and not (
                (word == "um" and _german_um(text, match.end())) or (word == "due" and _english(text))
            ):
                number = float(_NUMBER_WORDS[word])
            elif word in ("a", "an") and _one_span(text, match.start("word"), match.end("word")):
                number = 1.0  # "a week before", "an hour"
            else:
                continue
            value, half, start, end = number, 0.0, match.start("word"), match.end("word")
        else:
            parsed = _parse_number(match.group("num"))
            if parsed is None:
                continue
            value, half = parsed
            start, end = match.start("num"), match.end("num")
            if match.group("cur"):
                currency, start = _CURRENCY_SYMBOLS[match.group("cur")], match.start("cur")
        if found and start < found[-1][5]:
            continue  # inside the quantity just read: the minutes of "9時30分"
        paid_after = False
        if not match.group("word"):
            written = _WRITTEN_AFTER.match(text, end)
            if written is not None and (written.group("mult") or written.group("cur")):
                scale = _CJK_MULTIPLIERS.get(written.group("mult") or "", 1.0)
                value, half = value * scale, half * scale
                end = written.end("mult") if written.group("mult") else end
                if written.group("cur") and not currency:
                    currency, end, paid_after = _CURRENCY_AFTER[written.group("cur")], written.end(), True
        ordinal = _ORDINAL.match(text, end) is not None
        if _NUMBERED.match(text, end):
            continue  # "1 numaralı sera", "3号楼": the number names which one
        if not currency and not ordinal and _is_label(text, start) and not _money_follows(text, end):
            continue  # "Gen 1", "Batch 12", "#7", "version 14": part of a name, not a value
        if match.group("word") and match.group("word").casefold() == "half":
            article = re.match(r"\s+an?(?=\s)", text[end:])
            end += article.end() if article else 0  # "half a minute": half of one minute
        unit, stop = ("", end) if paid_after else _unit_token(text, end)
        if unit.casefold() in MONTHS or _ordinal_date(text, end):
            continue  # "3 May", "3. Mai": a date, read by `evidence`
        if re.search(r"\d:$", text[max(0, start - 3) : start]):
            continue  # the minutes of a time of day, read with its hour
        clock = clock_time(text, start, end, value)
        if clock is not None:
            minutes, stop = clock
            found.append((minutes, 0.0, "", None, start, stop, stop, False))
            times.append(len(found) - 1)
            continue
        number_text = match.group("num") or ""
        physical = bool(unit) and resolve(unit) is not None
        calendar = not physical or _YEAR_WORDS.get(unit.casefold()) is not None  # "с 2022 года", "năm 2025"
        if not match.group("word") and not currency and calendar and re.fullmatch(r"(?:19|20)\d\d", number_text):
            continue  # a year ("in 2022", "the 2019 Barolo", "2024 peak season")
        if not currency and _in_code(text, start, end):
            continue  # part of a code: "SKU 44-1087", "A-12"
        multiplier = _ALL_MULTIPLIERS.get(unit.casefold())
        # The currency after a multiplier, read once: "worth 85k EUR" is money, not a numbered thing.
        paid, after = _scaled_money(text, stop) if multiplier and not currency else (None, stop)
        money = (
            not _CURRENCY_WORDS.get(unit.casefold(), "?").endswith("?")
            or unit.upper() in _CURRENCY_CODES
            or paid is not None
        )
        if not currency and not physical and not money and "." not in number_text and "," not in number_text:
            capitalised = unit[:1].isupper() and not unit[1:2].isupper()  # "3 Series", not "8 GPUs"
            if capitalised or (_english(text) and _after_noun(text, start)):
                continue  # "variant 1 uses…", "3 Series": numbering something, not measuring it
        if multiplier:
            if unit.casefold() in _MULTIPLIERS or currency or paid:
                value, half, unit = value * multiplier, half * multiplier, ""
                if paid:
                    currency, stop = paid, after
                else:
                    unit, stop = _unit_token(text, stop) if not currency else ("", stop)
        elif unit and end < len(text) and text[end].isalpha() and resolve(unit) is None and not ordinal:
            continue  # "1RM", "4K", "3D", "2ºA", "1일차": a name, not a number of something
        if not currency and unit and unit.split("/")[0].upper() in _CURRENCY_CODES:
            currency, unit = unit.split("/")[0].upper(), ""  # "120,000 USD a year": money, not a count of dollars
        if not currency and not unit:
            code = re.match(r"\s?([A-Z]{3})\b", text[end:])
            before = re.search(r"\b([A-Z]{3})\s?$", text[:start])
            if code and code.group(1) in _CURRENCY_CODES:
                currency, stop = code.group(1), end + code.end()
            elif before and before.group(1) in _CURRENCY_CODES:
                currency = before.group(1)
        if not currency and unit.casefold() in _CENTS:
            value, half = value / 100, half / 100
        approx = bool(_APPROX.search(text[max(0, start - 16) : start]))
        found.append((value, half, unit, currency, start, stop, end, approx))
    take_worded(len(text) + 1)
    found, times = _compound(text, found, times)
    times = _hours_of_ranges(text, found, times)
    # A range's first end borrows the unit of the second: "4-5 L/hr", "between 60 and 65 °C".
    out: list[Quantity] = []
    for index, (value, half, unit, currency, start, stop, end, approx) in enumerate(found):
        if not unit and not currency and index + 1 < len(found):
            nxt = found[index + 1]
            gap = text[end : nxt[4]]
            if re.fullmatch(r"\s*(?:-|–|to|and|or|bis|a|à|y|e|tot|auf|naar)\s*", gap) and (nxt[2] or nxt[3]):
                unit, currency = nxt[2], nxt[3]
        dimension, _ = _dimension(unit, currency)
        if index in times:
            dimension = "time_of_day"
        spelled = "" if not dimension else (currency or unit)
        out.append(Quantity(value, spelled, dimension, half, approx, start, stop, _retracted(text, start)))
    return tuple(out)


_Found = tuple[float, float, str, "str | None", int, int, int, bool]
_RANGE_GAP = re.compile(r"\s*(?:-|–|to|until|till|and|or|bis|a|à|y|e|tot|auf|naar)\s*")


def _hours_of_ranges(text: str, found: list[_Found], times: list[int]) -> list[int]:
    """The bare first hour of a clock range takes the second's half of the day: "from 1 to 3 pm" is 13:00–15:00."""
    times = list(times)
    for index in range(len(found) - 1):
        value, half, unit, currency, start, stop, end, approx = found[index]
        nxt = found[index + 1]
        if index in times or index + 1 not in times or unit or currency or value != int(value) or not 1 <= value <= 12:
            continue
        if not _RANGE_GAP.fullmatch(text[stop : nxt[4]]):
            continue
        afternoon = nxt[0] >= 12 * 60 and value < 12 and value * 60 + 12 * 60 <= nxt[0]
        found[index] = (float((value + (12 if afternoon else 0)) * 60), half, unit, currency, start, stop, end, approx)
        times.append(index)
    return sorted(times)


def _compound(text: str, found: list[_Found], times: list[int]) -> tuple[list[_Found], list[int]]:
    """One value written in two units, the larger first ("1 h 30 min", "2 hours 15 minutes", "1 lb 4 oz"), read
    as one quantity in the smaller unit."""
    out: list[_Found] = []
    kept_times: list[int] = []
    index = 0
    while index < len(found):
        item = found[index]
        if index in times:
            kept_times.append(len(out))
        elif index + 1 < len(found) and index + 1 not in times:
            nxt = found[index + 1]
            big, small = resolve(item[2]) if item[2] else None, resolve(nxt[2]) if nxt[2] else None
            joined = re.fullmatch(r"\s*(?:and|,|und|y|et|e|en)?\s*", text[item[5] : nxt[4]])
            if (
                big is not None
                and small is not None
                and joined
                and not (item[3] or nxt[3])
                and big.dimension == small.dimension
                and big.offset == small.offset == 0
                and big.scale > small.scale
            ):
                value = item[0] * big.scale / small.scale + nxt[0]
                out.append((value, nxt[1], nxt[2], None, item[4], nxt[5], nxt[6], item[7]))
                index += 2
                continue
        out.append(item)
        index += 1
    return out, kept_times


_RETRACTION = re.compile(
    r"(?:\bnot|\bno longer|\binstead of|\brather than|\bfrom|\bwas|\bused to(?: be)?|\bformerly|\bpreviously"
    r"|\bno|\bnicht|\bstatt|\banstatt|\bvon|\bno es|\ben lugar de|\ben vez de|\bde|\bpas|\bau lieu de|\binvece di"
    r"|\bda|\bem vez de|\bniet|\bin plaats van|\bvan)\s+(?:(?:the|a|an|about|around|~|≈)\s+)?[$€£]?\s?$",
    re.IGNORECASE,
)
# "from X to Y" is a change ("went from 2 to 3") or a range ("open from 10:00 to 18:00"): the words before it
# tell which. German "auf" and Dutch "naar" name a change on their own ("von 10 auf 12").
_CHANGE_WORDS = re.compile(
    r"\b(?:chang\w*|mov\w*|went|go(?:es|ne)?|increas\w*|decreas\w*|rais\w*|lower\w*|dropp?\w*|cut|reduc\w*|"
    r"bump\w*|upped|switch\w*|shift\w*|rose|risen|fell|fallen|grew|grown|jump\w*|updat\w*|adjust\w*|push\w*|"
    r"extend\w*|shorten\w*|upgrad\w*|downgrad\w*|up|down|climb\w*|slash\w*|doubl\w*|halv\w*|revis\w*|"
    r"convert\w*|migrat\w*|pas[oóaé]\w*|cambi\w*|sub\w*|baj\w*|aument\w*|redu[cjz]\w*|mud\w*|baix\w*|"
    r"chang[ée]\w*|augment\w*|baiss\w*|relev\w*|sces\w*|sali\w*|ridott\w*|geändert|erhöht|gesenkt|"
    r"gestiegen|gesunken|verschoben|veranderd|verhoogd|verlaagd)\b",
    re.IGNORECASE,
)


def _retracted(text: str, start: int) -> bool:
    """Is the number at `start` a value the sentence takes back ("184, not 190", "from 2 to 3", "instead of
    5")? Only words that clearly retract count; "from" only when a "to" follows."""
    window = max(0, start - 24)
    match = _RETRACTION.search(text[window:start])
    if match is None:
        return False
    word = match.group(0).split()[0].casefold()
    if word in ("from", "von", "de", "da", "van"):
        target = re.match(r"[\d.,\s]*\S*\s+(to|auf|zu|a|à|para|naar|in)\b", text[start:], re.IGNORECASE)
        if target is None:
            return False
        if target.group(1).casefold() in ("auf", "naar"):
            return True
        said_at = window + match.start()
        return bool(_CHANGE_WORDS.search(text[max(0, said_at - 40) : said_at]))
    if word in ("was", "no"):
        return bool(re.search(r"\b(?:not|no longer|anymore|now)\b", text, re.IGNORECASE))
    return True
