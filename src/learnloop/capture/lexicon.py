"""Words that mark subjects, records and corrections, in the languages learnloop reads.

Dedupe (`evidence`) and the quantity reader (`quantities`) share these lists: a relation ("partner"), an
environment or platform ("staging", "iOS"), a date word ("May", "Monday", "yesterday") or a correction
("no longer", "switched to") changes what a sentence is about, whatever the embedding says. Lists cover
English, Spanish, German, French, Italian, Portuguese and Dutch, with the commonest Japanese and Korean forms.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "COMMON_STARTS",
    "CONTRAST",
    "CORRECTION",
    "COUNTERPARTS",
    "DATE_TOKEN",
    "ENVIRONMENTS",
    "HEDGES",
    "LIGHT_VERBS",
    "MONTHS",
    "NEGATION",
    "OPPOSITES",
    "PERIODS",
    "POSITIONS",
    "RELATIONS",
    "RELATIVE_DAYS",
    "RELATIVE_FORMS",
    "RETRACTED_SUBJECT",
    "RETRACTION",
    "WEAK_CORRECTION",
    "WEEKDAYS",
]

RELATIONS = frozenset(
    """
    partner partners wife wives husband husbands spouse girlfriend boyfriend fiance fiancee fiancé fiancée son sons
    daughter daughters kid kids child children baby toddler mother mom mum mother-in-law father dad father-in-law
    parent parents brother brothers sister sisters sibling siblings grandmother grandma granny grandfather grandpa
    grandparents aunt uncle cousin niece nephew friend friends colleague colleagues coworker coworkers co-worker
    boss manager roommate flatmate neighbor neighbour neighbors neighbours dog dogs cat cats pet pets puppy kitten
    horse teammate assistant intern mentor coach trainer doctor therapist landlord tenant client clients
    pareja esposa esposo marido mujer hijo hija hijos madre mamá padre papá hermano hermana amigo amiga perro gato
    jefe compañero compañera
    partnerin frau mann ehemann ehefrau sohn tochter kinder mutter vater bruder schwester freund freundin kollege
    kollegin chef hund katze
    conjoint conjointe femme mari fils fille enfants mère père frère sœur soeur ami amie collègue chien chat patron
    moglie marito figlio figlia madre padre fratello sorella amico amica collega cane gatto
    esposa marido filho filha mãe pai irmão irmã amigo amiga colega cachorro cão gato
    vrouw man zoon dochter moeder vader broer zus vriend vriendin collega hond kat
    妻 夫 息子 娘 母 父 兄 弟 姉 妹 友人 同僚 上司 犬 猫 家族 彼女 彼氏
    아내 남편 아들 딸 엄마 어머니 아빠 아버지 형 오빠 누나 언니 동생 친구 동료 상사 강아지 고양이
    padres abuelo abuela abuelos tío tía sobrino sobrina suegro suegra cuñado cuñada novio novia nieto nieta eltern
    oma opa großmutter großvater onkel tante cousine neffe nichte schwiegermutter schwiegervater enkelin grand-mère
    grand-père oncle cousin neveu nièce belle-mère beau-père belle-sœur beau-frère petit-fils petite-fille genitori
    nonno nonna zio zia cugino cugina nipote suocera suocero cognato cognata avó avô tio tia sobrinho sobrinha sogra
    sogro cunhado cunhada ouders oom neef schoonmoeder schoonvader mama tata mąż żona córka brat siostra
    rodzice babcia dziadek wujek ciocia kuzyn kuzynka teściowa teść kot mamma pappa maka fru sambo dotter bror
    syster föräldrar mormor farmor morfar farfar moster morbror farbror kusin svärmor svärfar hund katt
    annesi baba babası eş eşi kocası karısı oğlu kızı abi abla kardeş kardeşi anneanne babaanne dede teyze hala amca
    dayı kuzen kayınvalide köpek kedi мама папа мать матери отец отца муж мужа жена жены сын сына дочь дочери брат
    брата сестра сестры родители родителей бабушка бабушки дедушка дедушки дядя дяди тётя тёти тетя тети двоюродный
    двоюродного двоюродная двоюродной собака кошка ibu ayah suami istri anak kakak adik nenek kakek paman bibi
    sepupu mertua anjing kucing
    """.split()
)
# Chinese and Japanese write a relative in several characters with no space ("用户的女儿", "岳父"): read by the
# longest match in the text, not by token.
CJK_RELATIONS = re.compile(
    "|".join(
        sorted(
            """
            女儿 儿子 妻子 丈夫 老公 老婆 母亲 妈妈 父亲 爸爸 岳父 岳母 公公 婆婆 哥哥 姐姐 弟弟 妹妹 同事 老板 朋友
            邻居 孩子 爷爷 奶奶 外公 外婆 宝宝 男朋友 女朋友 室友 房东 伴侣 闺蜜 儿媳 女婿 侄子 侄女 表哥 表姐
            息子 娘 妻 夫 母 父 兄 姉 弟 妹 友人 同僚 上司 祖母 祖父 彼女 彼氏 子供 義父 義母 隣人 大家 部下 主人 奥さん
            """.split(),
            key=len,
            reverse=True,
        )
    )
)
ENVIRONMENTS = frozenset(
    """
    staging production prod sandbox uat preprod pre-prod canary qa
    ios android macos linux ipados watchos
    eu us apac emea latam
    """.split()
)
MONTHS = frozenset(
    """
    january february march april may june july august september october november december jan feb mar apr jun
    jul aug sep sept oct nov dec enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre
    diciembre januar februar märz april mai juni juli august september oktober november dezember janvier
    février mars avril mai juin juillet août septembre octobre novembre décembre gennaio febbraio marzo aprile
    maggio giugno luglio agosto settembre ottobre novembre dicembre janeiro fevereiro março abril maio junho
    julho agosto setembro outubro novembro dezembro januari februari maart april mei juni juli augustus
    september oktober november december
    """.split()
)
WEEKDAYS = frozenset(
    """
    monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays fridays
    saturdays sundays lunes martes miércoles jueves viernes sábado domingo montag dienstag mittwoch donnerstag
    freitag samstag sonntag lundi mardi mercredi jeudi vendredi samedi dimanche lunedì martedì mercoledì giovedì
    venerdì sabato domenica segunda terça quarta quinta sexta maandag dinsdag woensdag donderdag vrijdag
    zaterdag zondag
    segundas terças quartas quintas sextas sábados domingos montags dienstags mittwochs donnerstags freitags
    samstags sonntags måndag tisdag onsdag torsdag fredag lördag söndag måndagar tisdagar onsdagar torsdagar
    fredagar lördagar söndagar poniedziałek wtorek środa czwartek piątek sobota niedziela pondělí úterý středa
    čtvrtek pátek neděle senin selasa rabu kamis jumat sabtu pazartesi salı çarşamba perşembe cumartesi
    """.split()
)
# Words that tell two instances of one thing apart ("the *front* door camera" / "the *back* garden camera").
POSITIONS = frozenset(
    """
    front back rear left right north south east west northern southern eastern western upstairs downstairs
    upper lower inner outer primary secondary backup spare guest master indoor outdoor ground basement attic
    delantero trasero izquierdo derecho norte sur este oeste vorne hinten links rechts nord süd ost
    avant arrière gauche droite anteriore posteriore sinistra destra nord sud
    """.split()
)

# Periods a recurring record can belong to ("weekday coverage" / "weekend coverage").
PERIODS = frozenset(
    """
    weekday weekdays weekend weekends morning mornings evening evenings overnight summer winter spring autumn
    """.split()
)
RELATIVE_DAYS = frozenset(
    """
    yesterday today tomorrow tonight ayer hoy mañana gestern heute morgen hier aujourd'hui demain ieri oggi domani
    ontem hoje amanhã gisteren vandaag morgen 昨日 今日 明日 어제 오늘 내일
    """.split()
)
DATE_TOKEN = re.compile(
    r"^(?:\d{1,2}:\d\d|(?:19|20)\d\d|(?:19|20)\d\d-\d\d(?:-\d\d)?|\d{1,2}[./-]\d{1,2}[./-]\d{2,4}|q[1-4]|h[12]|fy\d\d(?:\d\d)?"
    r"|\d{1,2}(?:st|nd|rd|th)|w\d{1,2}|kw\d{1,2}|\d+年|\d+月|\d+日|\d+월|\d+일|\d+년)$"
)
# Sentence-initial words that are not names even when capitalised.
_GERMAN = frozenset(
    "der die das den dem des und ist sind wird werden mit im bei ein eine einen nicht für auf vom zum jeden jede "
    "jeder jedes hat haben sich auch noch nach wir ich uns unser unsere".split()
)


def is_german(words: Iterable[str]) -> bool:
    """Does a text with these (case-folded) words read as German, where every noun is capitalised, so that a
    capital letter says nothing about a name?"""
    seen = set(words)
    umlaut = any(ch in word for word in seen for ch in "äöüß")
    return len(_GERMAN & seen) >= (1 if umlaut else 2)


COMMON_STARTS = frozenset(
    """
    keep use always never prefer prefers please make note remember avoid don't do try when if for on at in by
    our their his her its this that these those there here user users team customer customers client every each
    all most some no yes after before during since until once mash boil add set run check ask send start stop
    el la los las un una unos unas lo der die das den dem des ein eine einen le les un une des il lo gli i
    het een de o os as um uma elke jeder jede jedes cada chaque ogni todo toda todos tous toutes alle
    """.split()
)

# Verbs that carry little meaning of their own: swapping one for another rewords a sentence ("the class *meets*
# on Saturdays" / "the class *is* on Saturdays", "*prefers*" / "*likes*") without changing what it is about.
LIGHT_VERBS = frozenset(
    """
    is are was were be been being has have had get gets got go goes went happen happens happened meet meets met
    live lives lived sit sits sat stay stays stayed take takes took make makes made do does did keep keeps kept
    use uses used run runs ran hold holds held come comes came stored kept located based found held done
    prefer prefers preferred like likes liked love loves loved enjoy enjoys enjoyed want wants wanted favour
    favours favor favors wish wishes need needs needed require requires required
    """.split()
)

# Words before which a sentence sets one thing against another ("prefers X *over* Y", "X *rather than* Y"):
# a text that already contrasts Y does not learn of Y's retraction from another that does the same.
CONTRAST = re.compile(
    r"\b(?:over|rather than|instead of|not|never|vs\.?|versus|than|in place of|en lugar de|en vez de|statt|"
    r"anstatt|au lieu de|plutôt que|invece di|piuttosto che|em vez de|in plaats van)\s+(?P<object>[^,.;:!?()]{1,60})",
    re.IGNORECASE,
)
CORRECTION = re.compile(
    r"\b(?:actually|in fact|turns out|correction|no longer|not any ?more|anymore|any more|nowadays|these days|"
    r"now(?! and then)|switched|switching|switch(?:ed)? to|moved (?:from|to)|changed|changes? to|"
    r"updated|upgraded|downgraded|replaced|instead(?! of)|quit|quitting|stopped|gave up|given up|used to|"
    r"previously|formerly|no more|not \w+ but|has become|have become|became|is now|are now|was wrong|"
    r"wrong|from now on|going forward|(?:started|began|resumed)\b[^.;]*\bagain|took up|"
    r"ya no|ahora|en realidad|dejó de|dejé de|cambió|cambiamos|"
    r"en lugar de|en vez de|nicht mehr|kein(?:e|en)? mehr|jetzt|inzwischen|mittlerweile|eigentlich|stattdessen|"
    r"gewechselt|aufgehört|umgestiegen|statt|ne \w+ plus|n'\w+ plus|plus de|maintenant|désormais|en fait|"
    r"au lieu de|a arrêté|arrêté|est passée?s? à|sommes passés|non più|adesso|in realtà|invece di|ha smesso|"
    r"passat[oi] a|não \w+ mais|agora|na verdade|em vez de|parou de|deixou de|mudou|niet meer|geen \w+ meer|"
    r"nu|eigenlijk|in plaats van|gestopt|overgestapt|"
    # verbs of change: the value a sentence gives replaces an earlier one
    r"raised|lowered|cut|increased|decreased|reduced|went up|went down|dropped to|rose|fell|pushed(?: back)?|"
    r"postponed|delayed|rescheduled|slipped|tightened|loosened|extended|shortened|bumped|revised|adjusted|"
    r"moved|migrated|took over|taken over|has ended|no longer|remortgaged|"
    r"chose \w+ over|over the|erhöht|gesenkt|verschoben|verlegt|gestiegen|gesunken|umgezogen|aumentó|aumentado|"
    r"bajó|bajado|subió|subido|reducido|cambiado|pasó a|se mudó|augmenté|augmentée?|baissé|baissée?|réduit|"
    r"déplacée?|reporté|reportée|aumentato|ridotto|spostat[oa]|rinviat[oa]|aumentou|reduziu|adiad[oa]|"
    r"mudou-se|verhoogd|verlaagd|verplaatst|uitgesteld|"
    # moving a thing to another holder or place: "relocated to room 2.210", "migrou para o Zendesk"
    r"relocated|transferred|reassigned|migrou|migramos|migraram|transferiu|transferimos|trocou|trocamos|"
    r"passaram para|passamos para|transférée?s?|migrée?|remplacée?s?|avons changé|a changé|migró|migramos|"
    r"migraron|transfirió|reemplazó|reemplazamos|sustituyó|trasladó|trasladamos|migrat[oa]|trasferit[oa]|"
    r"sostituit[oa]|migriert|ersetzt|gemigreerd|vervangen|overgezet|passe à|passent à|portat[oa] a|"
    r"aplazó|aplazad[oa]|pospuso|pospuest[oa]|adelantó|adiou|adiantou|przełożon[oa]|przesunięt[oa]|"
    r"přesunut[oa]|přeložen[oa]|diundur|dimajukan|ertelendi|"
    # Italian, Portuguese, Swedish, Polish, Czech, Turkish, Indonesian and Vietnamese
    r"(?<!['’])ora|ha cambiato|hanno cambiato|cambiato|subiu|caiu|passou para|"
    r"numera|inte längre|bytte|bytt|ändrat|ändrades|höjts|höjdes|sänkts|sänktes|flyttat|flyttade|"
    r"teraz|już nie|zmieniliśmy|zmienił[aoy]?|podniesion[oa]|obniżon[oa]|przeniesion[oa]|"
    r"nyní|teď|už ne|převedli|změnili|změnil[ao]?|zvýšil[aiy]?|snížil[aiy]?|"
    r"artık|şimdi|değiştirdik|değişti|yükseldi|düştü|taşındı|"
    r"sekarang|tidak lagi|diganti|pindah|dinaikkan|diturunkan|diubah|"
    r"bây giờ|hiện nay|không còn|đã tăng|đã giảm|đã chuyển|đã đổi|tăng lên|giảm xuống|"
    # from a time on: the value that follows starts then ("ab sofort", "vanaf volgende week", "as of March")
    r"ab sofort|as of|effective(?= (?:from|immediately|today|\w+day))|"
    r"starting(?= (?:today|tomorrow|next|this|on|from|\w+day))|"
    r"from next|vanaf|ab (?:nächste|kommende|heute|morgen)\w*|seit|depuis|desde|à partir d(?:e|u|')|a partir de|"
    r"a partire da|sedan|från och med|od (?:teraz|przyszłego|następnego|dziś)|od příštího|mulai|itibaren)\b"
    r"|もう|今は|現在は|実は|やめた|やめました|代わりに|ではなく|じゃなく|変更|切り替え|移し|上がった|下がった|延期|"
    r"減らした|増やした|値上げ|値下げ|に変わった|引っ越し|"
    r"现在|不再|改到|改成|换成|涨到|降到|搬到|调整为|提高到|降低到|"
    r"이제|더 이상|사실은|대신|끊었|그만|바꿨|바뀌었|줄었|늘었|단축|연기|올랐|내렸|변경|경신",
    re.IGNORECASE,
)
NEGATION = re.compile(
    r"\b(?:not|no|never|n't|none|neither|nor|without|don't|doesn't|isn't|aren't|won't|can't|didn't|"
    # verbs that carry their own negation: "dislikes X" says what "doesn't like X" says
    r"dislikes?|disliked|avoids?|avoided|excludes?|excluded|refuses?|refused|hates?|hated|lacks?|"
    r"cannot|unable|free of|sin|ohne|sans|senza|sem|zonder|"
    r"nicht|kein|keine|keinen|nie|niemals|ne|pas|jamais|non|não|nunca|niet|geen|nooit|no es)\b|n't\b"
    r"|ない|ません|しない|없|않|못|(?<![\uac00-\ud7af])안 |不|没|沒|别|別",
    re.IGNORECASE,
)

# Words after which a sentence names what is no longer true: "switched from X", "not X", "quit X",
# "X has been replaced", "instead of X". The words that follow (up to a stop) are the retracted object.
# The same, with the object first: "*Paper intake forms* were retired", "*Mrs. Ellison* has retired".
RETRACTED_SUBJECT = re.compile(
    r"(?P<object>[^,.;:!?()]{1,50}?)\s+(?:has|have|had|was|were|is|are|got|has been|have been)\s+(?:been\s+)?"
    r"(?:retired|removed|replaced|dropped|discontinued|cancel(?:l)?ed|closed|sold|shut down|deprecated|"
    r"decommissioned|phased out|scrapped|abandoned|ended|stopped)(?![-\w])"
    # "The coolant is replaced every 500 hours": a routine, not the end of the coolant.
    r"(?!\s+(?:every|each|once|twice|daily|weekly|monthly|yearly|annually|after|when|if|at)\b)",
    re.IGNORECASE,
)

RETRACTION = re.compile(
    r"\b(?:(?:switched|moved|migrated|changed|went|converted|upgraded|downgraded|transferred|ported)(?:\s+\w+){0,3}?"
    r"\s+(?:from|off|away from|out of)|moved off|not|no longer(?:\s+\w+)?|never|instead of|rather than|"
    r"quit|quitting|stopped(?:\s+using|\s+taking|\s+drinking|\s+eating|\s+doing)?|gave up|dropped|ditched|"
    r"sold(?:\s+all)?(?:\s+(?:his|her|their|my|our|the))?|shut down|cancel(?:l)?ed|replaced|replacing|retired|"
    r"in place of|used to(?:\s+\w+)?|formerly|previously|let|"
    r"ya no(?:\s+\w+)?|dejó de(?:\s+\w+)?|dejé de(?:\s+\w+)?|en lugar de|en vez de|"
    r"nicht mehr(?:\s+\w+)?|statt|anstatt|anstelle von|aufgehört mit|"
    r"au lieu de|à la place de|a arrêté(?:\s+de)?(?:\s+\w+)?|plus de|"
    r"invece di|al posto di|ha smesso di(?:\s+\w+)?|non più|"
    r"em vez de|parou de(?:\s+\w+)?|deixou de(?:\s+\w+)?|"
    r"in plaats van|gestopt met|niet meer)\s+(?P<object>[^,.;:!?()]{1,60})",
    re.IGNORECASE,
)

# Correction words that alone say little ("now I'm ready to…", "we moved the couch"): they count only beside a
# changed value or in a sentence that is otherwise the old one.
WEAK_CORRECTION = frozenset(
    """
    now nowadays these days moved ended pushed has ended extended shortened cut rose fell new newly left ahora jetzt
    inzwischen mittlerweile maintenant désormais adesso agora nu 이제 今は 現在は もう eigentlich
    in fact revised adjusted bumped ora numera teraz nyní teď artık şimdi sekarang 现在
    vanaf seit depuis desde sedan mulai itibaren effective starting
    """.split()
) | frozenset(
    # Phrases of more than one word, "from a time on" among them: the value beside them says what changed.
    (
        "these days",
        "has ended",
        "in fact",
        "bây giờ",
        "hiện nay",
        "as of",
        "from next",
        "à partir de",
        "à partir du",
        "à partir d'",
        "a partir de",
        "a partire da",
        "från och med",
    )
)

# Words that say a value is rounded: "about", "unos", "etwa", "environ", "ongeveer", "примерно" …
HEDGES = frozenset(
    """about around roughly approximately approx circa ca nearly almost ~ unos unas aproximadamente alrededor
    cerca etwa ungefähr rund environ quasi ongeveer około okolo примерно около приблизно yaklaşık sekitar kira-kira
    khoảng ungefär cirka přibližně περίπου""".split()
)

# Familiar forms of a relative's name, read as the relative.
RELATIVE_FORMS = {"mom": "mother", "mum": "mother", "dad": "father", "grandma": "grandmother", "granny": "grandmother",
                   "grandpa": "grandfather", "mamá": "madre", "papá": "padre"}  # fmt: skip

# Words that set a condition's side: "transfers *under* $500" and "*over* $500" are two rules, both true.
OPPOSITES = {
    frozenset(pair.split("/"))
    for pair in """
    under/over below/above before/after less/more fewer/more min/max minimum/maximum inbound/outbound
    weekday/weekend weekdays/weekends morning/evening mornings/evenings day/night domestic/international
    antes/después debajo/encima menos/más vor/nach unter/über weniger/mehr avant/après moins/plus dessous/dessus
    prima/dopo sotto/sopra meno/più antes/depois abaixo/acima voor/na onder/boven minder/meer
    """.split()
}

# Two attributes of one thing, each the other's counterpart: "check-*in* is from 15:00" / "check-*out* is by 11:00".
COUNTERPARTS = {
    frozenset(pair.split("/"))
    for pair in """
    check-in/check-out checkin/checkout pick-up/drop-off pickup/dropoff opening/closing opens/closes open/close
    arrival/departure arrives/departs upload/download start/end starts/ends begins/ends sunrise/sunset
    entrada/salida llegada/salida apertura/cierre abre/cierra ouverture/fermeture ouvre/ferme arrivée/départ
    anreise/abreise ankunft/abfahrt öffnet/schließt apertura/chiusura arrivo/partenza abertura/fechamento
    chegada/partida aankomst/vertrek opent/sluit
    """.split()
}
