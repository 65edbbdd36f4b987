"""Secrets said in prose, in six languages: what no maintained detector covers.

detect-secrets reads code and config (``password = "…"``); people write "the password they reuse everywhere is
Tr0ub4dor&3", "router admin login: admin / hunter22", "La contraseña del wifi es …", "パスワードは … です".
These rules find a credential word of any of the languages, then a value after it in the same clause that
looks like a credential (`gate_rules.credential_like`: mixed letters and digits, symbols, long random
letters — not a word, a placeholder or a reference). Also: PINs next to their word, Redis ``requirepass``,
TOTP / 2FA setup keys (base32, often grouped), keys with spaces inserted to dodge filters, and bare 32–64 hex
keys named by a key word ("the Mailgun API key is 3f…") that are not presented as a digest.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable

from .gate_rule import GateRule, random_token
from .gate_rules import credential_like
from .needles import Folded, literal_needles

__all__ = ["PROSE_SECRET_RULES"]

Finder = Callable[[str], tuple[int, int] | None]

# Credential words: English, Spanish, German, French, Korean, Japanese, Italian, Portuguese, Dutch, Polish,
# Swedish, Turkish, Russian, Chinese, Vietnamese, Indonesian, Finnish, Czech, Greek, Hebrew, Arabic, Hindi, Thai,
# Danish, Norwegian, Hungarian, Ukrainian, Bulgarian (lowercased text).
_WORDS = (
    r"passwords?|passwd|passcode|passphrase|pass phrase|pwd|pw|login|log-in|credentials?|creds|sign-in|logon"
    r"|contraseña|contrasena|clave|frase de paso|acceso|credenciales"
    r"|passwort|kennwort|passphrase|zugangsdaten|anmeldedaten|anmeldung|login-daten|zugang"
    r"|mot de passe|mdp|phrase secrète|identifiants|code d'accès"
    r"|비밀번호|비번|암호|패스워드|로그인|접속 정보|로그인 정보|암호 문구"
    r"|パスワード|暗証番号|パスフレーズ|ログイン|認証情報|ログイン情報|合言葉"
    r"|parola d'ordine|credenziali|codice di accesso|chiave di accesso|accesso"
    r"|senha|palavra-passe|palavra passe|credenciais|código de acesso|chave de acesso"
    # Turkish marks whose password with a suffix ("modemin şifresi", "şifrem"): the word with it is the word
    r"|wachtwoord|inloggegevens|hasło|haslo|dane logowania|lösenordet|lösenord|inloggning|şifre(?:si|m|miz)?"
    r"|sifre(?:si|m)?|parola(?:sı|m)?"
    r"|пароль|логин"
    r"|密码|密碼|口令|登录信息"
    r"|mật khẩu|kata sandi|salasana|heslo|κωδικός|κωδικό|συνθηματικό|סיסמה|סיסמא|كلمة المرور|كلمة السر"
    r"|كلمة مرور|كلمة سر|رمز المرور|पासवर्ड"
    r"|รหัสผ่าน|adgangskode|passord|jelszó|парол"
)
# The rest of the clause after the word: a value never crosses a sentence end (". " / "。") or a line.
_KEY_PHRASES = (
    r"community string|snmp community|wi-?fi key|wpa2? key|network key|wlan-schlüssel|clé wi-?fi|clave (?:del )?wi-?fi"
    r"|clé wpa|clave wpa|wpa-schlüssel|pre-?shared key|\bpsk\b|shared secret|vpn key|the key is|le mot de passe"
    r"|access ?key secret|secret access key|client secret|app secret|api secret|secret key|auth token"
    r"|access code|security code|código de acceso|zugangscode|code d'accès|와이파이 키|wi-?fiのキー"
    r"|chiave (?:del )?wi-?fi|password (?:del )?wi-?fi|senha (?:do )?wi-?fi|chave (?:do )?wi-?fi|codice di sicurezza"
    r"|código de segurança"
)
_KEYWORD = Folded(re.compile(rf"(?<![A-Za-z0-9à-ÿ])(?:{_WORDS}|{_KEY_PHRASES})(?![A-Za-z0-9à-ÿ])", re.IGNORECASE))
# After these the next word is the value, whatever it looks like ("the password is sunshine").
_STRAIGHT = re.compile(
    r"(?<![A-Za-z0-9])(?:password|passwort|kennwort|passcode|passphrase|contraseña|clave|mot de passe|pin|wi-?fi key"
    r"|wpa2? key|network key|wlan-schlüssel|clé wi-?fi|clave (?:del )?wi-?fi|access code|clé wpa|clave wpa|senha"
    r"|palavra-passe|parola d'ordine|chiave|chave|wachtwoord|hasło|haslo|lösenord(?:et)?|şifre(?:si|m)?|пароль)"
    r"(?: (?:is|was|ist|lautet|war|es|era|est|était|é|è|sono|são|resta|fica|är|var|to|jest|был|это)"
    r"| ?[:=：])\s*[\"'“«]?(?P<value>[!-~]{4,64})|(?:비밀번호|비번|암호|패스워드)(?:는|은|가"
    r"|:)\s*(?P<ko>[!-~]{4,64})"
    r"|(?:パスワード|暗証番号|パスフレーズ)(?:は|:|：)\s*(?P<ja>[!-~]{4,64})",
    re.IGNORECASE,
)
_NOT_A_VALUE = frozenset(
    "same different secret unknown empty blank long short strong weak correct wrong incorrect not never also still "
    "now there here required needed optional managed rotated stored saved kept changed reset expired shared "
    "hidden masked encrypted hashed visible printed written listed known unique complex simple default "
    "policy manager protected case sensitive too very more less only just nicht kein keine nie nunca jamais pas "
    "non não niet inte değil никогда не jest tajne geheim secreto segreto hemligt hemlig gizli секрет "
    "two three four five six seven eight ten twelve random generated".split()
)
_CLAUSE = re.compile(r"(?:[^\n。！？;]|[.!?](?=\S))*")
# A value is a run of printable ASCII: in Korean and Japanese it is glued to particles ("パスワードはHops2024!です").
# ASCII, or in any script a word with digits or "_" in it ("Ромашка_1962"): a value is not always ASCII.
_TOKEN = re.compile(r"(?<![!-~])[!-~]{4,64}|(?<!\S)(?=\S*[\d_])(?=\S*[^\W\d_])\S{6,64}")
_PIN_WORDS = (
    r"(?:\bpin\b|\bpin code|code pin|pin-code|geheimzahl|暗証番号|비밀번호|핀 ?번호|código pin|número pin|alarm code"
    r"|door code|código de la puerta|türcode|code de la porte|도어락 비밀번호|code d'accès|código de acceso|zugangscode"
    r"|access code|gate code|alarm pin|garage code|disarm code|duress code|digicode|combination|combo|code de la carte"
    r"|code (?:de )?(?:la )?carte bleue|code für die alarmanlage|alarmanlage|tresor|safe (?:code|combination|opens)"
    r"|locker|opens with|unlocks with|cadenas|candado|código de la alarma|alarma|금고|자물쇠|暗証|金庫|ロッカー"
    r"|codice pin|pin del bancomat|codice del portone|codice dell'allarme|allarme|cassaforte|lucchetto|citofono"
    r"|código da porta|código do alarme|alarme|senha do cartão|cofre|cadeado|portão|keypad|keycode|key code"
    r"|entry code|código del portal|código del garaje|código del portón|código de la verja|codice del cancello"
    r"|codice del garage|codice del box|code du portail|code de l'immeuble|code du garage|torcode|garagencode"
    r"|bike lock|padlock|lock combo|zahlencode|haustür\w*|alarmcode|toegangscode|deurcode|pincode|cijfercode"
    r"|(?:room|hotel|wall|home|office|floor|gun) safe|safe is set to|safe code"
    r"|(?:guest|cleaner|nanny|lock|smart lock|unlock|arming) code"
    r"|panel code|unlock (?:pin|code)|kod do|kod pin|kod alarmu|domofon\w*|sejf\w*|koden|portkod|larmkod"
    r"|nyckelskåp\w*|kassaskåp\w*|kapı kodu|alarm kodu|şifresi|kilid\w* kod\w*|kilit kod\w*|код от|код домофона"
    r"|пин-код|пин|пін-код|пін|код замка|код дверей|сейф\w*|도어락\w*|현관 ?비밀번호|host key|hostschlüssel"
    r"|密码|密碼|门禁|門禁|保险柜|保險櫃|one[- ]time (?:pass)?code|verification code|confirmation code|sms code"
    r"|\botp\b|einmalcode|bestätigungscode|código de verificación|code de vérification|codice di verifica"
    r"|código de verificação|認証コード|인증번호|验证码|код подтверждения|upi pin|पिन|συναγερμ\w*|κωδικός πανικού"
    r"|χρηματοκιβώτιο|כספת|אזעקה|קוד הכניסה|خزنة|رمز الإنذار|két sắt|mã báo động|brankas|\bpuk\b|puk code"
    r"|kód (?:k|od|pro|na) \w+|kód alarmu|alarmu|الرقم السري|الرمز السري|رمز الدخول|رقم التعريف الشخصي"
    r"|(?:garage|gate|door) opener code|opener code|رمز قفل|رمز الباب"
    r"|key ?(?:box|safe)|lock ?box|sleutelkluis|sleutelkastje|schlüsseltresor|schlüsselkasten|boîte à clés"
    r"|caja de llaves|cassetta (?:delle chiavi|portachiavi)|cofre de chaves|nyckelbox|sejf na klucze)"
)
_CVV_WORDS = (
    r"(?:cvv2?|cvc2?|\bcid\b|card security code|código de seguridad|kartenprüfnummer|prüfnummer|cryptogramme"
    r"|보안 ?코드|セキュリティコード)"
)
_PIN = re.compile(
    _PIN_WORDS + r"(?:[^\d\n]|(?<!\d)\d{1,2}(?![\d:.,/-])){0,60}"
    r"(?<![A-Za-z0-9+/=_])(?P<value>\d{4,8}(?!\d)|\d(?:-\d){3,7}|\d(?: \d){3,7}(?! ?\d)"
    r"|\d{1,2}-\d{1,2}-\d{1,2}(?:-\d{1,2}){0,3}|\d{3} \d{3}|[A-Z]\d{3,6}"
    r"|(?=[0-9A-Z]*\d[0-9A-Z]*\d[0-9A-Z]*\d)[0-9A-Z]{4,8})(?![\dA-Za-z_-])"
    + r"|"
    + _CVV_WORDS
    + r"[^\d\n]{0,20}(?P<cvv>\d{3,4})\b",
    re.IGNORECASE,
)
# Every match opens with one of these: the search starts at the first (found in the lowered text, fast).
_PIN_LABEL = Folded(re.compile(f"{_PIN_WORDS}|{_CVV_WORDS}", re.IGNORECASE))
_REDIS = re.compile(r"\b(?:requirepass|masterauth|masterpass)\s+(?P<value>\S{4,})", re.IGNORECASE)
# TOTP / 2FA setup keys: base32 of 16+ characters, usually in groups of four.
_OTP_WORDS = Folded(
    re.compile(
        r"2fa|two[- ]factor|totp|otp|mfa|authenticator|setup key|set-up key|recovery code|backup code|2단계|이중 인증"
        r"|二段階"
        r"|二要素|認証アプリ|セットアップキー|zwei-faktor|2-faktor|einrichtungsschlüssel|doble factor|dos factores"
        r"|double authentification|deux facteurs|clé de configuration|código 2fa|código de respaldo"
        r"|due fattori|verifica in due passaggi|chiave di configurazione|dois fatores|duas etapas"
        r"|chave de configuração",
        re.IGNORECASE,
    )
)
# A base32 key has letters: groups of digits 2-7 alone ("4242 4242 4242 4242") are a test card or a number.
_BASE32_GROUPS = re.compile(r"(?<![A-Za-z0-9])(?:[A-Z2-7]{4}[ -]){3,}[A-Z2-7]{4}(?![A-Za-z0-9])")
_BASE32_UPPER_START = re.compile(r"[A-Z2-7]{4}")
_BASE32_LOWER_START = re.compile(r"[2-7][a-z2-7]{0,3} [a-z2-7]{4} |[a-z2-7]{0,3}[2-7] [a-z2-7]{4} ")
_BASE32_LOWER = re.compile(r"(?<![A-Za-z0-9])(?:[a-z2-7]{4}[ -]){3,}[a-z2-7]{4}(?![A-Za-z0-9])")
_BASE32_RUN = re.compile(r"(?<![A-Za-z0-9])[A-Z2-7]{16,64}(?![A-Za-z0-9])")
# Keys with spaces (or dashes) inserted: short chunks that join into a known key shape.
_CHUNKS = re.compile(r"(?<![\w-])(?:[A-Za-z0-9_\-]{2,8} ){3,}[A-Za-z0-9_\-]{2,8}(?![\w-])")
_JOINED_KEY = re.compile(
    r"^(?:sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{30,}|AKIA[A-Z0-9]{16}"
    r"|xox[abposr]-[\w-]{10,}|[rs]k_(?:live|test)_\w{16,}|AIza[\w-]{30,}|glpat-[\w-]{20,}|npm_\w{30,}|hf_\w{30,}"
    r"|key-[0-9a-f]{32})$"
)
_HEX_KEY = re.compile(r"(?<![0-9a-fA-F])(?:[0-9a-f]{32}|[0-9A-F]{32}|[0-9a-f]{40}|[0-9a-f]{64})(?![0-9a-fA-F])")
_KEY_WORDS = Folded(
    re.compile(
        r"api[ _-]?key|\bkey\b|token|secret|clave|schlüssel|clé|jeton|chiave|chave|키|토큰|キー|トークン|シークレット"
        r"|ключ|токен|klucz|sleutel|nyckel|anahtar|密钥|令牌|私钥|秘密鍵|개인 ?키|cheia|cheie|kulcs|avain|nøgle|nøkkel"
        r"|κλειδί|מפתח|مفتاح|कुंजी|kunci|wallet|portofel|monedero|cartera|portefeuille|portafoglio|carteira"
        r"|\b(?:mailgun"
        r"|datadog"
        r"|sendgrid|algolia|pagerduty|new ?relic|heroku|mailchimp|postmark|mapbox|pusher|segment|sentry|cloudflare"
        r"|digitalocean|linode|vultr|twilio|nexmo|vonage|bitly|trello|asana|airtable|notion|openweather|weatherapi)",
        re.IGNORECASE,
    )
)
_DIGEST_WORDS = re.compile(
    r"sha|md5|hash|checksum|digest|commit|etag|fingerprint|uuid|integrity|ハッシュ|해시|커밋|コミット|prüfsumme|empreinte",
    re.IGNORECASE,
)


def _credential(text: str) -> tuple[int, int] | None:
    """A credential word, then within the next ~80 characters of its clause a token that looks like one; or,
    right after "password is" / "Passwort:" / "パスワードは", any word that is not a description of it."""
    phrase = _PASSPHRASE.search(text)
    if phrase is not None and not {w.casefold() for w in re.split(r"[ -]", phrase.group("value"))} & _PROSE_WORDS:
        return phrase.span("value")  # "the passphrase is correct horse battery staple": words, not a description
    for m in _STRAIGHT.finditer(text):
        group = next(g for g in ("value", "ko", "ja") if m.group(g))
        value = m.group(group).strip("\"'”»").rstrip(".,;:!?)")
        word = value.lower()
        if (
            len(value) >= 4
            and word not in _NOT_A_VALUE
            and not word.endswith(("ed", "ing", "ly"))
            and not (_REFERENCE_VALUE.match(value))
        ):
            start = m.start(group) + m.group(group).find(value)
            return start, start + len(value)
    for word in _KEYWORD.finditer(text):
        if _MANAGER_WORDS.match(text, word.end()):
            continue
        clause = _CLAUSE.match(text, word.end())
        end = min(word.end() + 80, clause.end() if clause else word.end())
        blocks = _DIGIT_BLOCKS.search(text, word.end(), end)  # a numeric key read out in groups
        if blocks is not None:
            return blocks.span()
        for m in _TOKEN.finditer(text, word.end(), end):
            if _AFTER_PREPOSITION.search(text, max(0, m.start() - 8), m.start()):
                continue  # "managed by 1Password", "stored in KeePass2": a place, not the value
            value = m.group(0).strip("\"'`,;()[]").rstrip(".:!?")
            assigned = _ASSIGNED.match(value)
            if assigned:  # NAME=value, m=64: the value after the name is what could be secret
                value = assigned.group(1)
            if _PUBLIC_VALUE.search(value):
                continue
            if len(value) >= 6 and (credential_like(value) or random_token(value)) and not _MANAGER.match(value):
                start = m.start() + m.group(0).find(value)
                return start, start + len(value)
    return None


_PASSPHRASE = re.compile(
    r"(?:passphrase|pass phrase|frase de paso|phrase secrète|passwortsatz|パスフレーズ|암호 문구)"
    r"(?:\s+(?:for|of|to|de|du|für|von|del|di|do|da)\s+(?:\S+\s+){0,3}?\S+)?\s*"
    r"(?:is|was|ist|es|est|è|é|:|=)\s*[\"'“«]?(?P<value>(?:[^\W_]+[ -]){3,}[^\W_]+)",
    re.IGNORECASE,
)
# Words a description of a passphrase has and a passphrase of random words does not.
_PROSE_WORDS = frozenset(
    "the a an and or in on at of to is are was with for from by it this that not very too really quite my our your"
    " their its be been stored kept saved written long short strong weak same different in der die das und ist le"
    " la et est el y es".split()
)
_MANAGER_WORDS = re.compile(r"s?[ -]?(?:manager|managers|verwaltung|-manager|관리자|マネージャー|管理)", re.IGNORECASE)
_DIGIT_BLOCKS = re.compile(r"(?<![\d.,])\d{3,5}(?:[ -]\d{3,5}){2,}(?![\d.,])")
_ASSIGNED = re.compile(r"^[A-Za-z_][\w.-]*[=:](.*)$")
# Password managers, named where their password word is ("the password manager is 1Password").
_MANAGER = re.compile(r"^(?:1password|keepass\w*|lastpass|bitwarden|dashlane|keeper|nordpass)$", re.IGNORECASE)


_AFTER_PREPOSITION = re.compile(
    r"\b(?:by|in|with|via|from|using|through|on|at|of|into|en|con|mit|im|avec|dans|par)\s+$"
    r"|\b(?:nist(?: sp)?|iso|iec|rfc|ieee|owasp|cwe|cve|din|en)[ -]?$",  # "per NIST 800-63B": a standard
    re.IGNORECASE,
)
# Identifiers published by design: an OAuth client id of a web app, a Stripe publishable key.
_PUBLIC_VALUE = re.compile(
    r"\.apps\.googleuserc|^pk_(?:live|test)_"
    # "ssh -v user@host" in a how-to: a placeholder login target, not a credential
    r"|^(?:user|username|root|admin|you|me|name|ubuntu|pi|ec2-user|deploy|git)@(?:host|hostname|server|your-server|"
    r"ip|localhost|example\.com|[\d.]+|[a-z-]+\.(?:local|lan|example))$",
    re.IGNORECASE,
)
# Placeholders and references are not values: "${DB_PASSWORD}", "<your password>", "os.environ[...]".
_REFERENCE_VALUE = re.compile(r"^(?:[$%<{\[(/~*]|x{3,}|\.{2,}|…)|^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")


def _slashed_login(text: str) -> tuple[int, int] | None:
    """ "admin / hunter22", "brewer:Falcon2024!" after a login word: the part after the separator."""
    for word in _LOGIN_WORD.finditer(text):
        end = min(len(text), word.end() + 80)
        # From the word itself: "root / Tr0ub4dor&3x" names the login by the word that says it is one.
        for start in _NAME_START.finditer(text, word.start(), end):
            m = _PAIR.match(text, start.start(), end)
            if m is None:
                continue
            value = m.group("value").rstrip(".!?")
            assigned = _ASSIGNED.match(value)
            value = assigned.group(1) if assigned else value
            if (
                len(value) >= 4
                and value.isascii()
                and credential_like(value.lstrip("$") if value[:2] != "${" else value)
            ):
                return m.start("value"), m.start("value") + len(value)
    return None


_LOGIN_WORD = Folded(
    re.compile(
        rf"(?<![A-Za-z0-9à-ÿ])(?:{_WORDS}|accès|access|admin|root|user ?name|usuario|benutzer|utilisateur|account"
        # a mail or file server names the login that follows ("the FTP …: user lumenweb, pass …"); "ssh" and "vpn"
        # would read public keys and 2FA seeds as logins
        r"|cuenta|konto|compte|conta|utente|s?ftp|smtp|imap)(?![A-Za-z0-9à-ÿ])"
        r"|아이디|계정|ユーザー名?|アカウント|账号|帐号|帳號|用户名",
        re.IGNORECASE,
    )
)
_NAME_START = re.compile(r"(?<![\w.@-])[\w.@-]")
_PAIR = re.compile(
    r"(?<![\w.@-])[\w.@-]{2,32}\s*(?:/|:|,\s*(?:pw|pwd|pass|password|contraseña|kennwort|passwort|mot de passe|비번"
    r"|비밀번호|パスワード)\s*:?)\s*(?P<value>[^\s,;/]{4,64})",
    re.IGNORECASE,
)


_RUN = re.compile(r"[^\s\"'`‘’“”()\[\]{},;]+")
# What every password-shaped token's whitespace-delimited run holds (one pass in C instead of a loop per token).
_SYMBOL_UPPER_DIGIT = re.compile(r"(?<!\S)(?=\S*[!@#$%^&*+=?~<>|])(?=\S*[A-Z])(?=\S*\d)\S{8,}")
_EMAIL_LIKE = re.compile(r"^[\w.+-]+@[\w-]+\.[\w.-]+$")


def _password_shaped(text: str) -> tuple[int, int] | None:
    """A token built the way passwords are and words, names and identifiers are not: 8+ characters mixing
    lower case, upper case, digits and a symbol ("CorgiPancake#88", "Xb7!rT2qLw") — wherever it is said."""
    if _SYMBOL_UPPER_DIGIT.search(text) is None:
        return None  # no run of 8+ characters holds a symbol, a capital and a digit: the cheap way out
    for m in _RUN.finditer(text):
        token = m.group(0).rstrip(".:!?")
        if not 8 <= len(token) <= 64 or not token.isascii() or "://" in token or token.count("/") > 1:
            continue
        symbol = any(c in "!@#$%^&*+=?~<>|" for c in token)
        if symbol and _has_all_classes(token) and not _EMAIL_LIKE.match(token) and not _encoded_text(token):
            return m.start(), m.start() + len(token)
    return None


def _encoded_text(token: str) -> bool:
    """Base64 of plain words ("aGVsbG8gd29ybGQ=" is "hello world"): an encoding, not a password."""
    if len(token) % 4 or not re.fullmatch(r"[A-Za-z0-9+/]+={0,2}", token):
        return False
    try:
        decoded = base64.b64decode(token, validate=True).decode("ascii")
    except (ValueError, UnicodeDecodeError):
        return False
    return bool(decoded) and sum(c.isalpha() or c == " " for c in decoded) >= 0.8 * len(decoded)


def _has_all_classes(token: str) -> bool:
    return any(c.islower() for c in token) and any(c.isupper() for c in token) and any(c.isdigit() for c in token)


def _pin(text: str) -> tuple[int, int] | None:
    label = _PIN_LABEL.search(text)
    m = None if label is None else _PIN.search(text, label.start())
    if m is None:
        m = _DIAL.search(text) if _LOCK_WORDS.search(text) else None
        return None if m is None else m.span()
    return m.span("value" if m.group("value") else "cvv")


_LOCK_WORDS = Folded(
    re.compile(
        r"combination|combo|safe|lock|dial|kombination|tresor|schloss|cadenas|coffre|candado|caja fuerte|cassaforte"
        r"|lucchetto|cofre|cadeado|kluis|slot",
        re.IGNORECASE,
    )
)
# A dial combination: "24 left, 8 right, 31 left", "links 12, rechts 40, links 7".
_DIAL = re.compile(
    r"(?:\b\d{1,2} ?(?:left|right|l|r|links|rechts|gauche|droite|izquierda|derecha|sinistra|destra)\b[,;/ ]*){3,}"
    r"|(?:\b(?:left|right|links|rechts|gauche|droite|izquierda|derecha|sinistra|destra) ?\d{1,2}\b[,;/ ]*){3,}",
    re.IGNORECASE,
)


def _redis(text: str) -> tuple[int, int] | None:
    m = _REDIS.search(text)
    if m is None or (not credential_like(m.group("value")) and len(m.group("value")) < 6):
        return None
    return m.span("value")


def _numbers_in_groups(groups: str) -> bool:
    """Two groups of digits alone ("card 4242 4242 4242 4242"): a number read out in groups, not a base32 key."""
    return sum(1 for g in re.split(r"[ -]", groups) if g.isdigit()) >= 2


def _otp(text: str) -> tuple[int, int] | None:
    upper = _BASE32_UPPER_START.search(text) is not None
    # The lower-case groups themselves are rarer in prose, and cheaper to look for, than their start.
    lower = _BASE32_LOWER.search(text) is not None and _BASE32_LOWER_START.search(text) is not None
    if not upper and not lower:  # no run of 4 base32 capitals, no lower-case group with a digit: stop cheaply
        return None
    said = None  # whether the text names a 2FA key (searched once, and only if needed)
    if upper:
        for m in _BASE32_GROUPS.finditer(text):
            if _numbers_in_groups(m.group(0)):
                continue
            if sum(c.isdigit() for c in m.group(0)) >= 2 or (said := said or bool(_OTP_WORDS.search(text))):
                return m.span()
    if lower:
        for m in _BASE32_LOWER.finditer(text):  # as authenticator apps show them; words never carry 2-7 digits
            if sum(c.isdigit() for c in m.group(0)) >= 2 and not _numbers_in_groups(m.group(0)):
                return m.span()
    if upper and (said if said is not None else _OTP_WORDS.search(text)):
        for m in _BASE32_RUN.finditer(text):
            value = m.group(0)
            if any(c.isdigit() for c in value) and not value.isalpha():
                return m.span()
        # Named as a 2FA key, groups of letters and digits are one even where a 0, 1, 8 or 9 was miscopied.
        for m in _KEY_GROUPS.finditer(text):
            value = m.group(0)
            if any(c.isdigit() for c in value) and any(c.isalpha() for c in value) and not _numbers_in_groups(value):
                return m.span()
    return None


_KEY_GROUPS = re.compile(r"(?<![A-Za-z0-9])(?:[A-Z0-9]{4}[ -]){3,}[A-Z0-9]{4}(?![A-Za-z0-9])")


def _spaced_key(text: str) -> tuple[int, int] | None:
    if _mixed_chunks(text) < 2 and not _SPACED_CHARS.search(text):
        return None  # a key cut in pieces leaves pieces of letters and digits; prose has almost none
    if _FINGERPRINT.search(text):
        return None  # a key's fingerprint is public by design
    for m in _CHUNKS.finditer(text):
        chunks = m.group(0).split(" ")
        joined = "".join(chunks)
        if len(joined) < 20:
            continue
        if _HEX_KEY.fullmatch(joined) and _KEY_WORDS.search(text):
            return m.span()  # "auth token, spaced out: 9f3c 7a21 e8b4 …"
        # Prose ("MacBook Pro M3 with 36 GB of RAM") has words in it; a key cut in pieces has none.
        if _JOINED_KEY.match(joined) or (random_token(joined) and not any(_PROSE_WORD.match(c) for c in chunks)):
            return m.span()
    for m in _SINGLE_CHARS.finditer(text):  # "g h p _ 2 b H b …", "g-h-p-_-K-2-…": one character at a time
        spaced = m.group(0).replace(" ", "")
        joined = _SEPARATOR.sub("", m.group(0))
        if any(_JOINED_KEY.match(v) or random_token(v) for v in (spaced, joined)) or _spelled_code(joined):
            return m.span()
    return None


def _mixed_chunks(text: str) -> int:
    """At least how many letter-digit or digit-letter pairs the text holds (as `_MIXED_CHUNK` counts them, or
    more): an ASCII text is read as a string of classes, where counting two substrings is one pass in C."""
    if not text.isascii():
        return len(_MIXED_CHUNK.findall(text))
    classes = text.translate(_CLASSES)
    return classes.count("a0") + classes.count("0a")


def _spelled_code(joined: str) -> bool:
    """Sixteen or more characters spelled one by one, letters and digits mixed: nobody spells a word that way
    with digits in it, so it is a key or a code written to get past a filter."""
    digits = sum(c.isdigit() for c in joined)
    return len(joined) >= 16 and digits >= 3 and sum(c.isalpha() for c in joined) >= 3


_MIXED_CHUNK = re.compile(r"[A-Za-z]\d|\d[A-Za-z]")
_CLASSES = {c: "a" if chr(c).isalpha() else "0" if chr(c).isdigit() else " " for c in range(128)}
# Ten characters one at a time, from the start of a word (from inside one, `re` would try every letter of prose).
_SPACED_CHARS = re.compile(r"\b(?:\w(?: ?[-.·] ?| )){10}", re.ASCII)
_PROSE_WORD = re.compile(r"^(?:[a-z]{2,}|[A-Z][a-z]+)$")
_SINGLE_CHARS = re.compile(r"(?<![\w-])(?:[\w+/=](?: ?[-.·] ?| )){15,}[\w+/=](?![\w-])", re.ASCII)
_SEPARATOR = re.compile(r"[ .·-]")
_FINGERPRINT = re.compile(r"fingerprint|empreinte|fingerabdruck|huella|지문|フィンガープリント|指紋", re.IGNORECASE)


def _named_hex(text: str) -> tuple[int, int] | None:
    if not _KEY_WORDS.search(text):  # the key word first: its one-pass check rules out most texts
        return None
    m = _HEX_KEY.search(text) or _UUID_OR_DOTTED.search(text)
    if m is None or _DIGEST_WORDS.search(text):
        return None
    return m.span()


# Keys a service issues as a UUID or as dot-separated parts ("SG.xxxx.yyyy"), named as a key or token.
_UUID_OR_DOTTED = re.compile(
    r"(?<![0-9A-Za-z-])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![0-9A-Za-z-])"
    r"|(?<![\w.])[A-Za-z]{2,8}\.(?=[\w-]*\d)[\w-]{10,}\.[\w-]{10,}(?![\w-])"
)


_RECOVERY_WORDS = Folded(
    re.compile(
        r"recovery codes?|recovery keys?|backup codes?|one-time codes?|wiederherstellungscodes?|backup-codes?"
        r"|wiederherstellungsschlüssel|clés? de récupération|claves? de recuperación|chiavi? di ripristino"
        r"|herstelsleutel|klucz\w* odzyskiwania|ключ\w* восстановления|복구 키|回復キー|回复密钥|恢复密钥"
        r"|códigos? de (?:recuperación|respaldo)|codes? de (?:récupération|secours)|복구 코드|백업 코드"
        r"|リカバリーコード|バックアップコード|復旧コード"
        r"|codici di (?:recupero|backup)|códigos de (?:recuperação|backup)|kode (?:pemulihan|cadangan)"
        r"|mã (?:khôi phục|dự phòng)|kurtarma kod\w*|yedek kod\w*|коды восстановления|резервные коды"
        r"|резервні коди|коди відновлення|záložní kódy|kódy pro obnovení|kódy obnovenia|helyreállítási kódok"
        r"|tartalék kódok|coduri de (?:rezervă|recuperare)"
        r"|εφεδρικοί κωδικοί|κωδικοί ανάκτησης|קודי גיבוי|קודי שחזור|รหัสสำรอง|รหัสกู้คืน"
        r"|kody (?:zapasowe|odzyskiwania)|herstelcodes|back-?upcodes|återställningskoder|reservkoder|恢复码|备用码"
        r"|復原碼|備用碼|رموز الاسترداد|رموز الاحتياط|रिकवरी कोड|बैकअप कोड",
        re.IGNORECASE,
    )
)
_CODE_TOKEN = re.compile(
    r"(?<![\w-])(?=[\w-]*\d)[A-Za-z0-9]{4,}(?:-[A-Za-z0-9]{4,})+(?![\w-])|(?<!\d)(?<!\d )\d{4} \d{4}(?! ?\d)"
    r"|(?<!\w)(?=\w*\d)(?=\w*[a-z])[a-z0-9]{8,12}(?!\w)|(?<![\d.,])\d{6,10}(?:\s*[,;]\s*\d{6,10})+(?![\d.,]\d)"
)
_PGPASS = re.compile(r"(?<![\w.-])[\w.-]+:\d{2,5}:[\w.*-]+:[\w.-]+:(?P<value>\S{4,})")
_WIFI_QR = re.compile(r"WIFI:[^\n]*?P:(?P<value>[^;\n]{4,});", re.IGNORECASE)


def _recovery_codes(text: str) -> tuple[int, int] | None:
    for word in _RECOVERY_WORDS.finditer(text):
        m = _CODE_TOKEN.search(text, word.end(), min(len(text), word.end() + 80))
        if m is not None:
            return m.span()
    return None


def _config_line(text: str) -> tuple[int, int] | None:
    """A ~/.pgpass line (host:port:db:user:password) or a Wi-Fi QR payload (WIFI:T:WPA;S:…;P:password;;)."""
    for pattern in (_PGPASS, _WIFI_QR):
        m = pattern.search(text)
        if m is not None and credential_like(m.group("value")):
            return m.span("value")
    return None


def _rule(rule_id: str, reason: str, finder: Finder, needles: tuple[str, ...] = (), digits: int = 0) -> GateRule:
    return GateRule(rule_id, "secret", reason, "", needles=needles, min_digits=digits, hint=True, finder=finder)


# A label word opens every PIN match; a lock word comes with every dial combination.
_PIN_NEEDLES = (*literal_needles(_PIN_LABEL.pattern), *literal_needles(_LOCK_WORDS.pattern))
#: Every credential word as a plain substring, for the rules' cheap pre-filter.
_NEEDLES = (
    *sorted({w.replace("\\", "").rstrip("?s") for w in _WORDS.split("|")}),
    *"community wifi wi-fi wpa wlan pin código zugangscode 와이파이 キー psk shared key chiave chave".split(),
    "network key",
    "access code",
    "security code",
    "code d'acc",
)


# A password read out piece by piece, so no token in it looks like one: "spelled out: capital M, the word moonlight,
# then nine nine three, then an exclamation mark".
_SPELLED = re.compile(
    r"\b(?:password|passwort|passcode|passphrase|pin|contraseña|mot de passe|senha|wachtwoord|hasło|пароль)\b"
    r"[^.!?\n]{0,60}\b(?:spelled out|spelt out|buchstabiert|deletread[ao]|capital [a-z]\b|uppercase [a-z]\b"
    r"|the word \w+, then)",
    re.IGNORECASE,
)


def _spelled(text: str) -> tuple[int, int] | None:
    m = _SPELLED.search(text)
    if m is None:
        return None
    end = text.find(".", m.end())
    return m.end(), len(text) if end < 0 else end  # what is read out, after the marker


PROSE_SECRET_RULES: tuple[GateRule, ...] = (
    _rule(
        "secret.prose.spelled",
        "reads out a password piece by piece",
        _spelled,
        (
            "password",
            "passwort",
            "passcode",
            "passphrase",
            "pin",
            "contraseña",
            "mot de passe",
            "senha",
            "wachtwoord",
            "hasło",
            "пароль",
        ),
    ),
    _rule("secret.prose.credential", "names a password or login and gives its value", _credential, _NEEDLES),
    _rule(
        "secret.prose.login_pair",
        "gives a login as user and password",
        _slashed_login,
        literal_needles(_LOGIN_WORD.pattern),
    ),
    _rule("secret.prose.pin", "gives a PIN, door code or card security code", _pin, _PIN_NEEDLES, digits=3),
    _rule("secret.prose.password_shaped", "holds a token shaped like a password", _password_shaped, digits=1),
    _rule("secret.prose.redis", "gives a Redis password (requirepass)", _redis, ("requirepass", "masterauth")),
    # Base32 has the digits 2-7; a 16+ character key without two of them is vanishingly rare.
    _rule("secret.prose.otp_key", "looks like a TOTP / 2FA setup key", _otp, digits=2),
    _rule("secret.prose.spaced_key", "looks like an API key with spaces inserted", _spaced_key, digits=1),
    _rule(
        "secret.prose.recovery_codes",
        "gives account recovery codes",
        _recovery_codes,
        literal_needles(_RECOVERY_WORDS.pattern),
        digits=1,
    ),
    _rule("secret.prose.config_line", "gives a password in a .pgpass line or Wi-Fi QR payload", _config_line, (":",)),
    _rule(
        "secret.prose.named_hex_key",
        "gives a key (hex, UUID or dotted) named as a key or token",
        _named_hex,
        literal_needles(_KEY_WORDS.pattern),
        digits=4,
    ),
)
