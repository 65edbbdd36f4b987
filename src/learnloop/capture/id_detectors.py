"""National identifiers found by python-stdnum (validators with the official check digits), and passports.

A short checksum alone proves little: a random 9-digit number passes a Luhn or mod-11 check one time in ten.
So identifiers come in two strengths:

* **strong formats** — their shape and check together are specific enough to refuse on sight: Italian
  codice fiscale, Spanish DNI/NIE, French NIR, Korean resident registration number (``YYMMDD-NNNNNNN``),
  Brazilian CPF printed as ``000.000.000-00``, Polish PESEL, Mexican CURP, passport machine-readable zones;
* **weak formats** — 9 to 12 plain digits (Canadian SIN, Australian TFN, Dutch BSN, German Steuer-ID, Indian
  Aadhaar, Japanese My Number): refused when the check digits are right *and* either the number is printed
  in its official grouping (SIN/TFN ``123 456 789``, Aadhaar/My Number ``1234 5678 9012``) or an identity
  word in any of the six languages stands before it ("SIN", "Steuer-ID", "マイナンバー", "주민등록번호" …).

Passport numbers have no check digit: a passport word before a 6–9 character number is refused.
A number printed as a part, catalog, SKU, model or order number is not an identifier, whatever its shape.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import ModuleType

from stdnum.au import tfn
from stdnum.br import cpf
from stdnum.ca import sin
from stdnum.ch import ssn as ahv
from stdnum.cn import ric
from stdnum.de import idnr
from stdnum.es import dni, nie
from stdnum.fr import nir
from stdnum.gb import nhs
from stdnum.id import nik
from stdnum.in_ import aadhaar
from stdnum.it import codicefiscale
from stdnum.jp import in_ as my_number
from stdnum.kr import rrn
from stdnum.mx import curp, rfc
from stdnum.nl import bsn
from stdnum.pl import pesel
from stdnum.se import personnummer

from .gate_rule import GateRule
from .needles import literal_needles
from .organisations import COMPANY

__all__ = ["ID_RULES", "ID_WORDS", "labelled_before", "product_number_before"]

#: Identity words in English, Spanish, German, French, Korean and Japanese (searched in lowercased text).
ID_WORDS = re.compile(
    r"\b(?:ssn|sin|tfn|tin|bsn|nir|nif|nie|dni|cpf|curp|pesel|aadhaa?r|pan|itin|nino|ni number|social security"
    r"|social insurance|tax file|tax id|tax number|taxpayer|national id|national insurance|identity|id number|nhs"
    r"|id card|id no|personal number|resident registration|my number|medicare|health card|insurance number"
    r"|member id|patient id|patient number|medical record|mrn|health insurance|insurance id|policy number"
    r"|card number|nric|seguridad social|identificación|identidad|documento|cédula|número fiscal|historia clínica"
    r"|número de paciente|n[úu]mero de afiliaci[óo]n|sécurité sociale|numéro fiscal|assurance sociale"
    r"|carte d'identité|identifiant fiscal|numéro de patient|numéro d'assuré|codice fiscale|fiscale"
    r"|tessera sanitaria|carta d'identità|partita iva|previdenza|documento d'identità|numero di tessera"
    r"|rg|identidade|cartão de cidadão|contribuinte|niss|segurança social|cartão (?:do )?sus|bilhete de identidade"
    r"|carteira de identidade|número de utente|cartão de saúde|plano de saúde|carteirinha)\b"
    r"|steuer-?id|steuer\w*nummer|steueridentifikationsnummer|identifikationsnummer|personalausweis\w*"
    r"|reisepass\w*|sozialversicherungs\w*|versicherten\w*|versicherungsnummer|patientennummer|krankenversicherung\w*"
    r"|주민등록|주민번호|외국인등록|사회보장|납세자|세금 ?번호|신분증|환자 ?번호|보험 ?번호"
    r"|マイナンバー|個人番号|住民登録|社会保障|社会保険|納税者|保険証|身分証|患者番号|被保険者番号|診察券"
    r"|personnummer|personbevis|burgerservicenummer|driver'?s? licen[cs]e|driving licen[cs]e|\bdl (?:no\.?|#|number)?"
    r"|resident id|residence permit|\bahv\b|\bavs\b|ahv-nummer|numéro avs|aufenthaltstitel|titre de séjour"
    r"|führerschein\w*|permis de conduire|carnet de conducir|licencia de conducir|patente di guida"
    r"|carteira de motorista|運転免許|운전면허|驾驶证|驾照|身份证|护照"
    r"|\b(?:nin|ppsn?|pps number|bvn|nip|id-kort|personnr|tc kimlik\w*|kimlik\w*)\b|dowód osobist\w*|dowodu"
    r"|паспорт\w*|снилс|\bинн\b|удостоверени\w* личности|\ba-number|alien (?:registration )?number|uscis"
    r"|\brfc\b(?!\s*\d{1,5}\b)|personnumret|\b(?:nik|ktp|npwp|cccd|cmnd)\b|căn cước|rodné číslo|\bamka\b"
    r"|\bafm\b|αφμ|αμκα|\bsss (?:number|no\.?|id)\b|philhealth|\bumid\b|\btin (?:number|no\.?)\b"
    r"|henkilötunnu\w*|\bhetu\b|\bsotu\b|\bcnp\b|cod numeric personal|\bcpr\b|cpr-nummer|fødselsnummer"
    r"|numéro de sécu|\bsécu\b|személyi szám|taj[- ]szám|\bemšo\b|\boib\b|\begn\b|\bjmbg\b"
    r"|\bird (?:number|no)\b|رقم الهوية|الهوية الوطنية|هويتي|بطاقة الهوية|رقم هوية"
    r"|جواز السفر|رقم الجواز|תעודת זהות|מספר זהות|आधार|पैन|पासपोर्ट"
    r"|рнокпп|\bіпн\b|ідентифікаційн\w* (?:код|номер)|податков\w* номер|ταυτότητ\w*|\bαδτ\b|บัตรประชาชน"
    r"|เลขประจำตัวประชาชน|občansk\w* průkaz|személyi igazolvány|buletin\w*|carte de identitate|henkilökortt\w*"
)
_PASSPORT_WORDS = re.compile(
    r"passport|pasaporte|reisepass|passnummer|passeport|여권|パスポート|旅券|passaporto|passaporte|paspoort|paszport"
    r"|pasaport|pașaport|paspor\b|hộ chiếu|útlevél|cestovní pas|passinumero|διαβατ[ηή]ρ[ιί]|דרכון|หนังสือเดินทาง"
    r"|закордонн\w* паспорт|загранпаспорт|护照|護照",
    re.IGNORECASE,
)
_PASSPORT_VALUE = re.compile(r"(?<![A-Za-z0-9])(?=[A-Z0-9]*\d{5})[A-Z]{0,2}[0-9][A-Z0-9]{5,8}(?![A-Za-z0-9])")
_PRODUCT = re.compile(
    r"(?:\bpart\b|catalog(?:ue)?|\bitem|sku|model|article|\bart\b\.?|order|serial|ref(?:erence)?|product|pieza|referencia"
    r"|número de serie|numéro de série|numero di serie|seriennummer|serienummer|ersatzteil|articolo|artigo"
    r"|artículo|teil|artikel|bestell|pièce|référence|filtre|filter|부품|품번|모델|部品|品番|型番|商品"
    r"|tracking|\bresi\b|awb|waybill|sendungsnummer|numéro de suivi|número de seguimiento|rastreio|운송장|송장"
    r"|快递单号|运单号|追跡番号|お問い合わせ番号|číslo dílu|objednací číslo|katalogové číslo|numer części"
    r"|numer katalogowy|cikkszám|alkatrész|номер детали|артикул|каталожн\w* номер|номер запчаст\w*|parça no"
    r"|parça numarası|ürün kodu|codice articolo|código de pieza|número de pieza|\bsn\b|s/n)[^\n]{0,60}$",
    re.IGNORECASE,
)
_MRZ = re.compile(
    r"[PIAC][<A-Z][A-Z<]{3}[A-Z0-9<]{10,60}<<|(?<![A-Z0-9<])[A-Z0-9<]{9}[0-9][A-Z]{3}[0-9]{6}[0-9][MF<][0-9]{6}[0-9<]"
)
_CF = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{6}\d{2}[A-Za-z]\d{2}[A-Za-z]\d{3}[A-Za-z](?![A-Za-z0-9])")
_DNI = re.compile(r"(?<![A-Za-z0-9])(?:\d{8}|[XYZxyz]-?\d{7})-?[A-Za-z](?![A-Za-z0-9])")
_NIR = re.compile(r"(?<![\d])[12] ?\d{2} ?\d{2} ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2}(?!\d)")
_RRN = re.compile(r"(?<!\d)\d{6}-?[1-8]\d{6}(?!\d)")
_CPF = re.compile(r"(?<![\d.])\d{3}\.\d{3}\.\d{3}-\d{2}(?!\d)")
_PESEL = re.compile(r"(?<!\d)\d{11}(?!\d)")
_AHV = re.compile(r"(?<![\d.])756\.?\d{4}\.?\d{4}\.?\d{2}(?![\d.]\d)")
_RIC = re.compile(r"(?<![\dXx])\d{17}[\dXx](?![\dXx])")
_RFC = re.compile(r"(?<![A-Za-z0-9])[A-ZÑ&]{4}\d{6}[A-Z0-9]{3}(?![A-Za-z0-9])")
_PERSONNUMMER = re.compile(r"(?<![\d-])(?:\d{2})?\d{6}[-+]\d{4}(?![\d-])")
_NIK = re.compile(r"(?<!\d)\d{16}(?!\d)")
_CURP = re.compile(r"(?<![A-Za-z0-9])[A-Z]{4}\d{6}[HM][A-Z]{5}[A-Z0-9]\d(?![A-Za-z0-9])")
_DIGIT_GROUPS = re.compile(r"(?<![\d.,/-])(?<!\d )(?<!\d-)\d[\d -]{7,16}\d(?![\d.,/-]|[ -]\d)")


def product_number_before(text: str, start: int) -> bool:
    """Is the number at `start` introduced as a part / catalog / SKU / model / order number?"""
    return bool(_PRODUCT.search(text[max(0, start - 80) : start]))


def labelled_before(text: str, start: int, words: re.Pattern[str] = ID_WORDS, reach: int = 48) -> bool:
    return bool(words.search(text[max(0, start - reach) : start].lower()))


def _strong(pattern: re.Pattern[str], module: ModuleType) -> Callable[[str], tuple[int, int] | None]:
    def find(text: str) -> tuple[int, int] | None:
        for m in pattern.finditer(text):
            if module.is_valid(m.group(0)) and not product_number_before(text, m.start()):
                return m.span()
        return None

    return find


# Weak formats: (module, official grouping of the printed number)
_WEAK: tuple[tuple[ModuleType, re.Pattern[str]], ...] = (
    (sin, re.compile(r"\d{3}[ -]\d{3}[ -]\d{3}")),
    (tfn, re.compile(r"\d{3} \d{3} \d{3}")),
    (bsn, re.compile(r"\d{4}\.\d{2}\.\d{3}")),
    (idnr, re.compile(r"\d{2} \d{3} \d{3} \d{3}")),
    (aadhaar, re.compile(r"\d{4} \d{4} \d{4}")),
    (my_number, re.compile(r"\d{4} \d{4} \d{4}")),
    (nhs, re.compile(r"\d{3} \d{3} \d{4}")),
)


def _weak(text: str) -> tuple[int, int] | None:
    for m in _DIGIT_GROUPS.finditer(text):
        value = m.group(0).strip()
        digits = value.replace(" ", "").replace("-", "")
        if not 9 <= len(digits) <= 12 or len(set(digits)) == 1 or product_number_before(text, m.start()):
            continue
        labelled = labelled_before(text, m.start())
        for module, grouping in _WEAK:
            if module.is_valid(digits) and (labelled or grouping.fullmatch(value)):
                return m.start(), m.start() + len(value)
    return None


_SSN = re.compile(r"(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])")


def _us_ssn(text: str) -> tuple[int, int] | None:
    """A US social security number as printed (123-45-6789), unless it is introduced as a part or catalog number."""
    for m in _SSN.finditer(text):
        if not product_number_before(text, m.start()):
            return m.span()
    return None


_LABELLED_ID = re.compile(r"(?<![A-Za-z0-9])[A-Z0-9][A-Z0-9.\- ]{4,20}[A-Z0-9](?![a-z])")


_IP_ADDRESS = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}(?:/\d{1,2})?")


def _labelled_id(text: str) -> tuple[int, int] | None:
    """An identity word of any of the languages, then within 60 characters a number with 5+ digits (or a mixed
    code: "carta d'identità n. CA48291KL")."""
    lowered = text.lower()
    for word in ID_WORDS.finditer(lowered):
        for m in _LABELLED_ID.finditer(text, word.end(), min(len(text), word.end() + 60)):
            value = m.group(0).strip()
            digits = sum(c.isdigit() for c in value)
            mixed = digits >= 2 and len(value.replace(" ", "").replace("-", "")) >= 6
            dummy = len({c for c in value if c.isdigit()}) == 1  # "000-00-0000": a placeholder, nobody's number
            company = COMPANY.search(text, max(0, word.start() - 40), m.start())  # its tax or registration number
            address = _IP_ADDRESS.fullmatch(value) is not None  # a host's, in the same sentence as the id word
            if (
                (digits >= 5 or mixed)
                and not (dummy or company or address)
                and not product_number_before(text, m.start())
            ):
                return m.start(), m.start() + len(value)
    return None


_NRIC = re.compile(r"(?<![A-Za-z0-9])[STFG]\d{7}[A-Z](?![A-Za-z0-9])")


def _nric(text: str) -> tuple[int, int] | None:
    """A Singapore NRIC/FIN: prefix, seven digits, the check letter of its weighted sum."""
    for m in _NRIC.finditer(text):
        value = m.group(0)
        total = sum(int(d) * w for d, w in zip(value[1:8], (2, 7, 6, 5, 4, 3, 2), strict=True))
        total += 4 if value[0] in "TG" else 0
        letters = "JZIHGFEDCBA" if value[0] in "ST" else "XWUTRQPNMLK"
        if letters[total % 11] == value[8]:
            return m.span()
    return None


def _passport(text: str) -> tuple[int, int] | None:
    word = _PASSPORT_WORDS.search(text)
    if word is None:
        return None
    m = _PASSPORT_VALUE.search(text, word.end(), word.end() + 60)
    return None if m is None else m.span()


def _mrz(text: str) -> tuple[int, int] | None:
    m = _MRZ.search(text)
    return None if m is None else m.span()


def _rule(
    suffix: str,
    reason: str,
    finder: Callable[[str], tuple[int, int] | None],
    library: str,
    digits: int,
    needles: tuple[str, ...] = (),
) -> GateRule:
    return GateRule(
        f"personal_data.government_id.{suffix}",
        "personal_data",
        reason,
        "",
        finder=finder,
        detector=library,
        min_digits=digits,
        needles=needles,
    )


_STDNUM = "python-stdnum"
_PASSPORT_NEEDLES = (
    "passport",
    "pasaporte",
    "reisepass",
    "passnummer",
    "passeport",
    "여권",
    "パスポート",
    "旅券",
    "passaport",
    "paspoort",
    "paszport",
    "pasaport",
    "pașaport",
    "paspor",
    "hộ chiếu",
    "útlevél",
    "cestovní pas",
    "διαβατ",
    "דרכון",
    "หนังสือเดินทาง",
    "паспорт",
    "护照",
    "護照",
)
_NATIONAL = "contains a national identity or tax number (SIN, TFN, BSN, Steuer-ID, Aadhaar, My Number)"

ID_RULES: tuple[GateRule, ...] = (
    _rule("us_ssn", "contains a US social security number", _us_ssn, "learnloop", 9),
    _rule(
        "it_codice_fiscale",
        "contains an Italian codice fiscale",
        _strong(_CF, codicefiscale),
        f"{_STDNUM}:it.codicefiscale",
        7,
    ),
    _rule("es_dni_nie", "contains a Spanish DNI number", _strong(_DNI, dni), f"{_STDNUM}:es.dni", 7),
    _rule("es_nie", "contains a Spanish NIE number", _strong(_DNI, nie), f"{_STDNUM}:es.nie", 7),
    _rule("fr_nir", "contains a French social security number (NIR)", _strong(_NIR, nir), f"{_STDNUM}:fr.nir", 13),
    _rule("kr_rrn", "contains a Korean resident registration number", _strong(_RRN, rrn), f"{_STDNUM}:kr.rrn", 13),
    _rule("br_cpf_printed", "contains a Brazilian CPF number", _strong(_CPF, cpf), f"{_STDNUM}:br.cpf", 11),
    _rule("pl_pesel", "contains a Polish PESEL number", _strong(_PESEL, pesel), f"{_STDNUM}:pl.pesel", 11),
    _rule("mx_curp", "contains a Mexican CURP", _strong(_CURP, curp), f"{_STDNUM}:mx.curp", 7),
    _rule(
        "se_personnummer",
        "contains a Swedish personal identity number",
        _strong(_PERSONNUMMER, personnummer),
        f"{_STDNUM}:se.personnummer",
        10,
    ),
    _rule("id_nik", "contains an Indonesian NIK", _strong(_NIK, nik), f"{_STDNUM}:id.nik", 16),
    _rule("mx_rfc", "contains a Mexican RFC (a person's tax id)", _strong(_RFC, rfc), f"{_STDNUM}:mx.rfc", 6),
    _rule("cn_ric", "contains a Chinese resident identity number", _strong(_RIC, ric), f"{_STDNUM}:cn.ric", 17),
    _rule("ch_ahv", "contains a Swiss social security number (AHV/AVS)", _strong(_AHV, ahv), f"{_STDNUM}:ch.ssn", 13),
    _rule("national_number", _NATIONAL, _weak, _STDNUM, 9),
    _rule("sg_nric", "contains a Singapore NRIC/FIN", _nric, "learnloop", 7),
    _rule("passport", "contains a passport number", _passport, "learnloop", 5, _PASSPORT_NEEDLES),
    _rule(
        "labelled",
        "contains an identity, tax or insurance number",
        _labelled_id,
        "learnloop",
        2,
        literal_needles(ID_WORDS),
    ),
    _rule("passport_mrz", "contains a passport machine-readable zone", _mrz, "learnloop", 0, ("<",)),
)
