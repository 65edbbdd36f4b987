"""Words that name an organisation or a public place, in the languages the gate reads.

A phone number or an address that belongs to a school, a clinic, a company's front desk or a museum is printed on
its website and identifies no one ("the school office number is …", "故宫博物院的地址是 …"). The personal-data
rules use these words to tell such a number or address from a person's own.
"""

from __future__ import annotations

import re

__all__ = ["COMPANY", "ORGANISATION", "PUBLIC_PLACE"]

ORGANISATION = re.compile(
    r"\b(?:office|clinic|surgery|practice|hospital|pharmacy|school|college|university|library|museum|company"
    r"|firm|store|shop|restaurant|hotel|salon|garage|bank|embassy|consulate|council|city hall|town hall|agency"
    r"|branch|headquarters|hq|support|helpdesk|team|department|dept|airline|airport|station|centre|center"
    r"|praxis|klinik|krankenhaus|apotheke|schule|büro|firma|rathaus|botschaft|behörde|clínica|farmacia"
    r"|escuela|colegio|oficina|empresa|tienda|ayuntamiento|embajada|clinique|hôpital|pharmacie|école|bureau"
    r"|entreprise|magasin|mairie|ambassade|cabinet|ospedale|scuola|ufficio|azienda|negozio|comune|ambasciata"
    r"|escola|escritório|loja|prefeitura|embaixada|kantoor|bedrijf|winkel|gemeente|ziekenhuis|apotheek"
    r"|przychodni\w*|szpital\w*|szkoł\w*|biur\w*|firm\w*|urzęd\w*|kontor\w*|företag\w*|sjukhus\w*|skola"
    r"|okul\w*|hastane\w*|ofis\w*|şirket\w*|офис\w*|компани\w*|клиник\w*|больниц\w*|школ\w*"
    r"|mağaza\w*|dükkan\w*|banka\w*|otel\w*|restoran\w*|sklep\w*|bank\w*|restauracj\w*|butik\w*|hotell\w*"
    r"|restaurang\w*|магазин\w*|банк\w*|гостиниц\w*|отел\w*|ресторан\w*|toko|kantor|rumah sakit|sekolah"
    r"|restoran|universitas|cửa hàng|quán|công ty|văn phòng|bệnh viện|trường|ngân hàng|khách sạn|nhà hàng)\b"
    r"|前台|公司|办公室|辦公室|医院|醫院|诊所|診所|学校|學校|酒店|餐厅|餐廳|银行|銀行|受付|会社|事務所|病院|クリニック"
    r"|ホテル|窓口|회사|사무실|병원|의원|학교|호텔|은행|접수처|민원실"
    r"|متجر|مكتب|شركة|مستشفى|مدرسة|بنك|فندق|مطعم|दुकान|कार्यालय|दफ़्तर|दफ्तर|कंपनी|अस्पताल|स्कूल|बैंक|होटल",
    re.IGNORECASE,
)

# Places everyone may visit or write to: a landmark's or an institution's address is public.
PUBLIC_PLACE = re.compile(
    r"\b(?:museum|gallery|tower|palace|castle|cathedral|church|temple|mosque|synagogue|stadium|arena|zoo"
    r"|theat(?:re|er)|opera|white house|parliament|capitol|embassy|consulate|city hall|town hall|library"
    r"|university|airport|station|monument|memorial|park|museo|musée|museu|palacio|palais|palazzo|torre|tour"
    r"|kathedrale|kirche|schloss|rathaus|bibliothek|biblioteca|bibliothèque|ayuntamiento|mairie|municipio"
    r"|müze\w*|cami\w*|muzeum\w*|kości\w*|kyrka\w*|музе\w*|театр\w*|собор\w*|masjid|bảo tàng|chùa|đền)\b"
    r"|博物馆|博物院|博物館|美术馆|美術館|图书馆|圖書館|図書館|故宫|寺|神社|大学|大學|机场|機場|空港|车站|車站|駅"
    r"|박물관|미술관|도서관|고궁|성당|대학교|공항|기차역|지하철역|타워|市役所|区役所|役場|시청|구청"
    r"|متحف|مسجد|संग्रहालय|मंदिर",
    re.IGNORECASE,
)

# A company's legal form or a word for a business: a tax or registration number next to one is the company's,
# printed on its invoices and in public registers ("NIP naszej spółki", "ИНН ООО «…»", "la partita IVA della
# nostra società").
COMPANY = re.compile(
    r"\b(?:company|company's|companies|firm|firm's|firma|firmy|firmie|firmę|business|corporation|ltd|llc|llp|inc"
    r"|plc|gmbh|s\.r\.l|srl|s\.p\.a|s\.a\.s|sarl|sàrl|eurl|b\.v|n\.v|oyj|sp\. z o\.o|spół\w*|società|azienda"
    r"|impresa|empresa|sociedad|société|entreprise|unternehmen\w*|bedrijf|företag\w*|şirket\w*|perusahaan|tbk"
    r"|ооо|оао|зао|пао|компани\w*|организаци\w*|společnost\w*|s\.r\.o|registro (?:delle imprese|mercantil)"
    r"|handelsregister|obchodní\w* rejstřík\w*|krs|companies house|registre du commerce|kvk)(?![\w'])"
    r"|公司|会社|株式会社|有限会社|회사|주식회사|\(주\)|㈜",
    re.IGNORECASE,
)
