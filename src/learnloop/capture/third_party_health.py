"""Health data and criminal records about someone else: "Emily Carter from accounting was diagnosed with bipolar
disorder", "our tenant has a DUI conviction".

Health is a special category of personal data (GDPR art. 9): a memory that keeps a colleague's diagnosis and
serves it back is the harm, whatever the user meant. No library names it, so the rule needs two things in one
sentence: a condition or treatment word (in the gate's languages), and a third party named as such — a colleague,
neighbour, client or tenant, a full name, an honorific ("Frau Hoffmann", "鈴木さん"). What the user says about
themselves ("I have type 1 diabetes") or the people in their care ("my daughter has asthma") stays: an assistant
needs it to help, and the user chose to tell it. Allergies and common passing illnesses are not conditions here.
"""

from __future__ import annotations

import re

from .gate_rule import GateRule
from .needles import Folded, literal_needles

__all__ = ["THIRD_PARTY_HEALTH_RULES"]

# Conditions whose disclosure harms (mental health, chronic and serious illness, infections with stigma,
# addiction, reproductive health) and the words of treatment and sick leave for them.
_CONDITION = re.compile(
    r"diagnosed with|diagnosis of|\bhiv\b|\baids\b|hepatitis|cancer|tumou?r|leuka?emia|chemo\w*|radiotherapy"
    r"|dialysis|diabet\w*|epilep\w*|seizures|depressi(?:on|ve)|depressed|bipolar|schizophreni\w*|psychosis"
    r"|psychiatric|ptsd|\bocd\b|anxiety disorder|panic attacks|eating disorder|anorexi\w*|bulimi\w*|dementia"
    r"|alzheimer\w*|parkinson\b|parkinson's|multiple sclerosis|leuc[ée]mi\w*|leukämie|diagnosen"
    r"|autis(?:m|tic)|\badhd\b|addiction|alcoholi\w*|in rehab"
    r"|overdose|suicid\w*|self-harm|miscarriage|abortion|\bivf\b|infertil\w*|pregnan(?:t|cy)|terminally ill"
    r"|on (?:lithium|antidepressants|methadone|insulin|antipsychotics)|therapy for|in treatment for|treated for"
    # de, nl
    r"|krebs|depression|diabetes|epilepsie|demenz|alkoholiker\w*|psychiatrie|schwanger|hiv-positiv|kanker"
    r"|depressie|zwanger|verslaafd"
    # fr, es, it, pt
    r"|dépression|diabète|séropositi\w*|sous traitement|enceinte|cáncer|depresión|epilepsia|en tratamiento"
    r"|embarazada|tumore|in cura per|depressione|diabete|incinta|câncer|depressão|em tratamento|grávida"
    r"|diagnostica\w*|diagnostiqu\w*|diagnostiziert|alzh[eé]imer|párkinson|esclerosis múltiple|sclérose en plaques"
    r"|sclerosi multipla|esclerose múltipla|multiple sklerose|\bvih\b|\bsida\b"
    # pl, ru, sv, tr
    r"|choruje|chor[ya] na|zdiagnozowan\w*|stwardnienie rozsiane|depresj\w*|cukrzyc\w*|nowotw[oó]r\w*|padaczk\w*"
    r"|шизофрени\w*|биполярн\w*|деменци\w*|онкологи\w*|химиотерапи\w*|диализ\w*|cuci darah|gagal ginjal"
    r"|kemoterapi|skizofrenia|depresi|kanker|diabetes|dialisis|dialysis|kidney failure|rinichi|dializ\w*"
    r"|w ciąży|вич|спид|онколог\w*|диабет\w*|депресси\w*|эпилепси\w*|рассеянн\w* склероз\w*|беременн\w*"
    r"|диагноз\w*|\bрак\b|болеет|epilepsi|gravid|diagnostiserad\w*|kanser|diyabet|depresyon|hamile|teşhis\w*"
    r"|tanısı"
    # ja, zh, ko
    r"|うつ病|鬱病|通院|入院|癌|がん(?:と診断|で|の治療|を患)|糖尿病|認知症|精神科|妊娠|抑郁|住院|艾滋|精神病|怀孕"
    r"|化疗|우울증|암 투병|당뇨|치매|입원|정신과|임신|투병",
    re.IGNORECASE,
)
# Someone other than the user and the people in their care.
_THIRD_PARTY = re.compile(
    r"\b(?:co-?worker|colleague|neighbou?r|boss|manager|employee|staff member|client|customer|tenant|landlord"
    r"|classmate|teammate|roommate|flatmate|intern|contractor|supplier|patient|candidate|applicant|coach"
    r"|caretaker|janitor|nanny|babysitter|hausmeister)s?\b"
    r"|\bfrom (?:the )?(?:accounting|accounts|finance|sales|marketing|hr|legal|it|support|engineering|ops|operations"
    r"|procurement|payroll|reception|admin|\w+ (?:team|department|dept))\b"
    r"|\b(?:mr|mrs|ms|miss|mx)\.? [A-Z]|\b(?:frau|herr|mme|madame|monsieur|señora|señor|sra\.?|sr\.?|signora"
    r"|signor|dona|senhora|senhor|mevrouw|meneer)\s+[A-ZÀ-Ý]"
    r"|kolleg\w*|nachbar\w*|mitarbeiter\w*|collègue|voisin\w*|employé\w*|compañer\w*|vecin\w*"
    r"|emplead\w*|collega|vicin\w*|dipendente|colega|vizinh\w*|funcionári\w*|buurm\w*|buurvrouw"
    r"|\b(?:pan|pani)\s+[A-ZŁŚŻŹĆ]|kolega|koleżank\w*|sąsiad\w*|z działu|коллег\w*|сосед\w*|из отдела"
    r"|начальни\w*|kollega\w*|granne\w*|grannen|iş arkadaş\w*|komşu\w*|\w+ (?:bey|hanım)\b"
    r"|soused\w*|sousedk\w*|kolegyn\w*|coleg\w*|szomszéd\w*|naapuri\w*|työkaveri\w*|γείτον\w*"
    r"|συνάδελφ\w*|hàng xóm|đồng nghiệp|tetangga|rekan kerja|جار|زميل|שכן|עמית|पड़ोसी|सहकर्मी"
    r"|さん|氏|同僚|部長|課長|社員|隣人|同事|邻居|员工|老板|동료|이웃|직원|팀장|씨(?!앗)",
    re.IGNORECASE,
)
# A full name: two capitalised words, the second not a word that merely follows a capitalised one.
_FULL_NAME = re.compile(
    r"\b[A-ZÀ-ÝŁŚŻ][a-zà-ÿłśżźćńąę]{1,15}\s+(?:[A-Z]'|Mc|Mac|van |de |da )?[A-ZÀ-ÝŁŚŻ][a-zà-ÿłśżźćńąę]{1,20}\b"
    r"|[А-ЯЁ][а-яё]{1,15}\s+[А-ЯЁ][а-яё]{1,20}"
)
# The user and their household and care: what is said of them is theirs to tell.
_OWN = re.compile(
    r"\b(?:i|i'm|i've|my|me|the user|user's|we|our|mine)\b(?! (?:co-?worker|colleague|neighbou?r|boss|manager"
    r"|employee|client|customer|tenant|landlord|classmate|teammate|roommate|flatmate|intern)s?\b)",
    re.IGNORECASE,
)
_CARE = re.compile(
    r"\b(?:my|our|the user's|user's) (?:\w+ )?(?:son|daughter|kid|child|children|baby|toddler|mum|mom|mother"
    r"|dad|father|parent|grand\w+|wife|husband|partner|spouse|brother|sister|sibling|twin|aunt|uncle|dog|cat)s?\b"
    r"|\b(?:mein\w*|unser\w*) (?:sohn|tochter|kind|mutter|vater|frau|mann|bruder|schwester)"
    r"|\b(?:mon|ma|mes|notre) (?:fils|fille|enfant|mère|père|femme|mari|frère|sœur)"
    r"|\b(?:mi|mis|nuestr\w) (?:hij\w|madre|padre|espos\w|herman\w)"
    r"|\b(?:mio|mia|nostr\w) (?:figli\w|madre|padre|marito|moglie|fratello|sorella)"
    r"|\b(?:meu|minha) (?:filh\w|mãe|pai|marido|esposa|irmã\w*)"
    r"|息子|娘|母|父|妻|夫|儿子|女儿|妈妈|爸爸|妻子|丈夫|아들|딸|엄마|아빠|아내|남편",
    re.IGNORECASE,
)


# Criminal records are as special (GDPR art. 10): convictions, arrests, sentences.
_RECORD = re.compile(
    r"\b(?:dui|dwi|convicted|conviction|felony|criminal record|arrested|on probation|on parole|served time|in jail"
    r"|prison sentence|sex offender|vorbestraft|verurteilt|casier judiciaire|condamné\w*|antecedentes penales"
    r"|condenad\w*|precedenti penali|condannat\w*|antecedentes criminais|strafblad|veroordeeld|karany\w*|dömd"
    r"|sabıka\w*|судимост\w*|осужд\w*|odsouzen\w*|odsúden\w*|trestní rejstřík|condamnat\w*|cazier judiciar"
    r"|elítélt\w*|büntetett\w*|tuomittu\w*|rikosrekisteri\w*|καταδικ\w*|ποινικό μητρώο|tiền án|vonis penjara"
    r"|narapidana|mantan napi)\b|犯罪记录|前科|전과|سجل جنائي|أدين|הורשע|עבר פלילי|आपराधिक रिकॉर्ड|दोषी ठहराया",
    re.IGNORECASE,
)
_CONDITION_WORDS, _RECORD_WORDS = Folded(_CONDITION), Folded(_RECORD)


def _third_party_health(text: str) -> tuple[int, int] | None:
    return _third_party(text, _CONDITION_WORDS, by_name=True)


def _third_party_record(text: str) -> tuple[int, int] | None:
    # A famous name alone is not enough here: trials of public figures are public record ("Ted Bundy was convicted").
    return _third_party(text, _RECORD_WORDS, by_name=False)


def _third_party(text: str, words: Folded, *, by_name: bool) -> tuple[int, int] | None:
    condition = words.search(text)
    if condition is None:
        return None
    named = _THIRD_PARTY.search(text) or (_FULL_NAME.search(text) if by_name else None)
    if named is None:
        return None
    if _CARE.search(text) and not _THIRD_PARTY.search(text):
        return None  # "my daughter Juno Park has asthma"
    if _OWN.search(text[: condition.start()]) and not (_THIRD_PARTY.search(text) or _name_subject(text, condition)):
        return None  # "I was diagnosed with ADHD; Dr Anna Weber treats me"
    return min(named.start(), condition.start()), max(named.end(), condition.end())


def _name_subject(text: str, condition: re.Match[str]) -> bool:
    """A full name right before the condition words, as their subject ("… Emily Carter was diagnosed …")."""
    names = list(_FULL_NAME.finditer(text, 0, condition.start()))
    return bool(names) and condition.start() - names[-1].end() <= 40


THIRD_PARTY_HEALTH_RULES: tuple[GateRule, ...] = (
    GateRule(
        "personal_data.health.third_party",
        "personal_data",
        "contains health information about another person",
        "",
        finder=_third_party_health,
        needles=literal_needles(_CONDITION),
    ),
    GateRule(
        "personal_data.criminal_record.third_party",
        "personal_data",
        "contains criminal-record information about another person",
        "",
        finder=_third_party_record,
        needles=literal_needles(_RECORD),
    ),
)
