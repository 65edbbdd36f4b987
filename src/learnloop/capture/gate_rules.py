"""Built-in write-gate rules and validators, in evaluation order (the decisions behind them: see `gate`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import cast

from .gate_rule import GateRule, Kind, Target, luhn_ok, random_token
from .id_detectors import product_number_before
from .phone_detectors import business_line, organisation_line
from .sample_values import called_example
from .timing import MOMENTARY

__all__ = ["BUILTIN_RULES", "card_ok", "credential_like", "iban_ok"]

# --- validators -------------------------------------------------------------------------------------------


def _digits(s: str) -> str:
    return "".join(c for c in s if "0" <= c <= "9")


def _card_brand_ok(d: str) -> bool:
    n, p2, p3, p4 = len(d), int(d[:2]), int(d[:3]), int(d[:4])
    return (
        (d[0] == "4" and n in (16, 19))  # Visa
        or ((51 <= p2 <= 55 or 2221 <= p4 <= 2720) and n == 16)  # Mastercard
        or (p2 in (34, 37) and n == 15)  # American Express
        or ((300 <= p3 <= 305 or p2 in (36, 38, 39)) and 14 <= n <= 19)  # Diners Club
        or ((p4 == 6011 or p2 in (50, 56, 57, 58, 62, 65, 67) or 644 <= p3 <= 649 or 3528 <= p4 <= 3589) and n >= 16)
    )


def card_ok(value: str) -> bool:
    """A Luhn-valid number of a known brand and length; prefixes are tried (a match may run into digits)."""
    d = _digits(value)
    return any(_card_brand_ok(d[:n]) and luhn_ok(d[:n]) for n in range(min(len(d), 19), 13, -1))


_IBAN_LENGTHS = {  # ISO 13616 registry: country code → IBAN length
    m[:2]: int(m[2:])
    for m in (
        "AD24 AE23 AL28 AT20 AZ28 BA20 BE16 BG22 BH22 BR29 CH21 CR22 CY28 CZ24 DE22 DK18 DO28 EE20 EG29 ES24 FI18 FO18 "
        "FR27 GB22 GE22 GI23 GL18 GR27 GT28 HR21 HU28 IE22 IL23 IS26 IT27 JO30 KW30 KZ20 LB28 LC32 LI21 LT20 LU20 LV21 "
        "MC27 MD24 ME22 MK19 MR27 MT31 MU30 NL18 NO15 PK24 PL28 PS29 PT25 QA29 RO24 RS22 SA24 SC31 SE24 SI19 SK24 SM27 "
        "TL23 TN24 TR26 UA29 VA22 VG24 XK20"
    ).split()
}


def iban_ok(value: str) -> bool:
    """Known country, that country's length, and the ISO 13616 mod-97 check (trailing text is ignored)."""
    s = "".join(value.split()).replace("-", "").upper()
    n = _IBAN_LENGTHS.get(s[:2])
    if n is None or len(s) < n or not s[2:4].isdigit() or not s[:n].isalnum():
        return False
    return int("".join(str(int(c, 36)) for c in s[4:n] + s[:4])) % 97 == 1


def _iban_shape(value: str) -> bool:
    s = "".join(value.split()).replace("-", "").upper()
    n = _IBAN_LENGTHS.get(s[:2])
    return n is not None and len(s) == n and s.isalnum()


def _dni_ok(value: str) -> bool:
    """Spanish DNI (8 digits) or NIE (X/Y/Z + 7 digits) with its mod-23 control letter."""
    s = value.replace("-", "").upper()
    s = str("XYZ".index(s[0])) + s[1:] if s[0] in "XYZ" else s
    return s[:-1].isdigit() and "TRWAGMYFPDXBNJZSQVHLCKE"[int(s[:-1]) % 23] == s[-1]


def _cpf_ok(value: str) -> bool:
    """Brazilian CPF: two mod-11 check digits."""
    d = [int(c) for c in _digits(value)]
    if len(d) != 11 or len(set(d)) == 1:
        return False
    return all(sum(d[i] * (k + 1 - i) for i in range(k)) * 10 % 11 % 10 == d[k] for k in (9, 10))


_REFERENCE = re.compile(
    r"^(?:[$%<{\[(/~]|\.{2,}|…|\*{3}|[xX•#]{4,}|(?:os|env|process|secrets|vault|config|settings|self|ENV)\b"
    r"|(?:none|null|nil|true|false|undefined|redacted|hidden|masked|required|optional|string|str|int|example"
    r"|placeholder|dummy|sample)$|your[_-])",
    re.IGNORECASE,
)
_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_PASSPHRASE = re.compile(r"(?=.{16})[a-zA-Z]+(?:[-_.][a-zA-Z]+){3,}")


def _url_pw(value: str) -> bool:
    """A URL's password part that is not a placeholder ("PASSWORD", "password", "${DB_PASS}", "****")."""
    placeholder = (
        _ENV_NAME.match(value)
        or (value.isalpha() and value.isupper())
        or set(value) <= set("*x•.")
        or value.casefold() in _PLACEHOLDER_PASSWORDS
    )
    return not _REFERENCE.match(value) and not placeholder


# What documentation writes where a password goes.
_PLACEHOLDER_PASSWORDS = frozenset(
    "password pass passwd pwd secret changeme change_me example yourpassword your_password your-password mypassword"
    " my_password mysecretpassword".split()
)


def credential_like(value: str) -> bool:
    """Could `value` be a real password or key rather than a word, a placeholder or a reference to one?"""
    v = value.strip("\"'`,;.)]}")
    if len(v) < 4 or _REFERENCE.match(v) or _ENV_NAME.match(v):
        return False
    if _has(v, str.isdigit, str.isalpha):
        return True
    if v.isdigit():
        return len(v) >= 6
    if any(c in "!@#$%^&*+=?" for c in v):
        return len(v) >= 6
    if _PASSPHRASE.fullmatch(v):
        return True
    if v.isalpha():
        return len(v) >= 16 or (len(v) >= 10 and not (v.islower() or v.isupper() or v.istitle()))
    return False


def _has(v: str, *tests: Callable[[str], bool]) -> bool:
    return all(any(t(c) for c in v) for t in tests)


def _min_digits(n: int) -> Callable[[str], bool]:
    return lambda v: len(_digits(v)) >= n


def _ssn_ok(v: str) -> bool:
    d = _digits(v)
    return len(d) == 9 and d[:3] not in ("000", "666") and d[3:5] != "00" and d[5:] != "0000"


_DATE = re.compile(r"\b(?:\d{1,2}[./-]\d{1,2}[./-](?:19|20)\d\d|(?:19|20)\d\d[./-]\d{1,2}[./-]\d{1,2})\b")
_IPV4 = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")


def _phone(lo: int, hi: int) -> Callable[[str], bool]:
    return lambda v: (
        lo <= len(_digits(v)) <= hi
        and len(set(_digits(v).lstrip("0"))) > 1  # "000-00-0000", "0000 000000": a placeholder
        and not _DATE.search(v)
        and not _IPV4.fullmatch(v.strip())
        and not business_line(v)
    )


# --- rules ------------------------------------------------------------------------------------------------

# fmt: off
_RULES: list[GateRule] = []
_SEP = r"""["']?\s*(?:[:=]|=>|:=|\s(?:is|was|=)\s)\s*["'`]?"""  # between a setting's name and its value
LOW: Target = "lower"  # most rules match the lowercased text: far faster than re.IGNORECASE


def _r(id: str, reason: str, pattern: str, target: Target = "text", *, flags: int = 0, digits: int = 0,
       check: Callable[[str], bool] | None = None, needles: tuple[str, ...] = (), words: str = "") -> None:
    kind = cast(Kind, id.split(".", 1)[0])
    mention_ok = kind == "injection" and id not in _STRUCTURAL
    _RULES.append(GateRule(id, kind, reason, re.compile(pattern, flags), check, needles, tuple(words.split()),
                           digits, target, hint=kind == "secret", mention_ok=mention_ok))


# Injection rules that fire on structure (markup a model would parse), whatever the text is about.
_STRUCTURAL = frozenset({"injection.hidden_characters", "injection.role_tag", "injection.tool_call"})


_QUAL = r"(?:previous|prior|above|earlier|preceding|original|initial|existing|your|system|developer|safety)"
_AMBIG = r"(?:instructions?|prompts?|guidelines|commands)"  # ordinary words too: need a qualifier or context
_DAYS = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_SENSITIVE = (r"(?:conversations?|chats?|chat history|history|transcripts?|messages|sessions?|context"
              r"|memor(?:y|ies)|credentials|passwords?|api[ _-]?keys?|secrets?|tokens?|cookies|personal (?:data"
              r"|info\w*)|user data|system prompt|card numbers?)")
_N = r"(?:a|an|one|two|three|four|five|a few|a couple of|several|\d+)"
_VERBS = ("act as", "act like", "pretend", "roleplay as", "role-play as", "play the", "impersonate", "behave as",
          "behave like", "assume the")
_LEADS = ("^", *(c + s for c in ".!?;:\n\"'(" for s in ("", " ")), "please ", "now ", "just ", "simply ",
          *(f"you {m} " for m in ("will", "must", "should", "shall", "are going to", "need to")),
          *(f"i {w} you to " for w in ("want", "need", "'d like")))
_IMPERATIVE = "|".join(  # one fixed-width look-behind per lead-in and verb: cheap, checked only after a verb
    f"(?<={'^' if lead == '^' else re.escape(lead)}{re.escape(verb)})" for verb in _VERBS for lead in _LEADS)

# Prompt injection / memory poisoning first: an injection carrying an address or key is named as injection.
_r("injection.hidden_characters", "contains invisible or direction-changing characters used to hide text",
   r"[\u200b-\u200d\u2060\u00ad\ufeff\u202a-\u202e\u2066-\u2069\U000E0000-\U000E007F]"
   r"(?:(?<=[A-Za-z0-9][\u200b-\u200d\u2060\u00ad\ufeff])[\u200b-\u200d\u2060\u00ad\ufeff]*(?=[A-Za-z0-9])"
   r"|(?<=[\u202a-\u202e\u2066-\u2069])|(?<![\U0001F3F4\U000E0000-\U000E007F][\U000E0000-\U000E007F])"
   r"(?<=[\U000E0000-\U000E007F]))", "raw")
_r("injection.role_tag", "contains chat-template or role markers (a fake system/assistant turn)",
   r"<\|(?:im_start|im_end|system|user|assistant|endoftext|begin_of_text|start_header_id|end_header_id|eot_id)\|>"
   r"|\[/?inst\]|<</?sys>>|\[(?:system|assistant|developer)\]\(#|</?(?:system|learning_memories|instructions?"
   r"|assistant|developer|memories|context|user_?message|system_?prompt)>|^\s*#{2,}\s*(?:system|instruction|developer"
   r"|assistant)s?\b\s*:?\s*$|^#{2,}\s*(?:system|instruction|developer)s?\s*:|^\s*(?:human|assistant|system"
   r"|developer)\s*:\s+(?=(?:\w+\s+){0,3}?(?:you|your|ignore|disregard|forget|always|never|must|do not|don't|from now"
   r"|new (?:rules|instructions)|override|obey|respond|reply|answer|act|pretend|the assistant"
   r"|assistant)\b)", LOW, flags=re.M,
   needles=("<", "[", "#"), words="human assistant system developer")
_r("injection.tool_call", "contains a tool or function call aimed at the model",
   r"""["'](?:tool_calls?|function_call|tool_use|tool_code|recipient_name)["']\s*:|</?(?:tool_call|tool_use"""
   r"""|function_calls?|invoke|tool_result|tool_response|antml:[a-z_]+)\b|\{\s*["'](?:name|tool|function)["']"""
   r"""\s*:\s*["'][^"']{1,64}["']\s*,\s*["'](?:arguments|parameters|args|input)["']\s*:"""
   r"|(?:^|[.!?;:\n]\s*|\b(?:now|immediately|please|first|silently|secretly|automatically|always)\s+)(?:call|invoke"
   r"|execute|trigger|run)\s+(?:the\s+)?(?:tool\b|[`\"']?[\w.-]+[`\"']?\s+tool\b)(?:\s+[`\"']?[\w.-]+[`\"']?)?\s+"
   r"(?:with|using|passing|now|immediately|and)\b", LOW, flags=re.M,
   words="tool tools function invoke recipient arguments parameters")
_r("injection.ignore_instructions", "tells the model to ignore or override its instructions",
   r"\b(?:ignore|ignoring|disregard|forget|override|overrule|bypass|circumvent|discard|abandon|set aside|put aside"
   r"|throw out|scrap|reset|erase|wipe|do not follow|don't follow|stop following|no longer follow)\b\W+(?:(?:\w+\W+)"
   rf"{{0,3}}?(?:{_QUAL}\W+(?:\w+\W+){{0,2}}?|all\W+(?:(?:the|of|your|my|these|those)\W+)*)(?:{_AMBIG}|rules"
   r"|restrictions|constraints|polic(?:y|ies)|guidance|context|training)\b|(?:\w+\W+){0,2}?(?:directives?|guardrails"
   rf"|programming|safeguards)\b|(?:(?:the|these|those|any|such)\s+)?{_AMBIG}\b(?=\s+(?:above|below|before|given"
   r"|you\b)|\s*(?:[.,;:!\n]|$|and\b|but\b|then\b))|what (?:you|i) (?:were|was|have been) told)|\b(?:forget"
   r"|disregard|ignore) (?:about )?everything (?:above|before|you (?:know|were told|learned)|i (?:said|told you)"
   r"|we discussed|so far)\b|\b(?:instructions?|prompt|rules|ones)\s+(?:above|before this|you were given)\W+(?:are"
   r"|is)\s+(?:void|wrong|outdated|cancel+ed|revoked|obsolete|no longer valid)|\b(?:new|updated|real|actual|true)"
   r" (?:rules|instructions|directives|system prompt)(?: from the (?:developer|admin|system|operator))?\s*:"
   r"|\b(?:real|actual|true|new) (?:instructions|rules) (?:are|follow|come) (?:below|here|next|as follows)", LOW,
   words="ignore ignoring disregard forget override overrule bypass circumvent discard abandon aside throw scrap"
         " reset erase wipe follow following instructions instruction prompt rules directives")
_r("injection.ignore_instructions_multilingual", "tells the model to ignore its instructions (non-English)",
   r"\b(?:ignor\w*|olvid\w*|oubli\w*|vergiss\w*|negeer\w*|dimentica\w*|esque[cç]\w*|игнорир\w*|забудь\w*"
   r"|zignoruj\w*)\W+(?:(?:\w+\W+){0,4}?(?:instru[cç]\w*|istruz\w*|anweisung\w*|instructies|инструкци\w*|указани\w*"
   r"|instrukcj\w*|consignes|indicaciones|regeln|règles|reglas)|(?:tout|todo|alles|tutto|tudo|wszystko|всё|все)\W+"
   r"(?:ce qui précède|lo anterior|vorherige|oben|precedente|anterior|powyżej|выше))"
   r"|(?:忽略|无视|無視|忘记|忽視)[^。.!?]{0,12}?(?:指令|指示|说明|說明|提示|命令)"
   r"|\bignoruj\w*\s+(?:\w+\s+){0,2}?(?:předchozí|dosavadní|všechn\w*)\s+(?:\w+\s+)?(?:pravidla|pokyny|instrukce)"
   r"|(?:指示|命令|指令)[^。.!?]{0,8}?(?:無視|忘れ)"
   # Indonesian, Vietnamese, Turkish, Swedish, Korean, Hindi, Arabic: with "previous", "all" or "above", so that
   # "don't forget the instructions" is not one.
   r"|\b(?:abaikan|lupakan|bỏ qua|phớt lờ|quên|ignorera|glöm)\s+(?:\w+\s+){0,2}?(?:semua|mọi|tất cả|alla|tidigare)"
   r"\s+(?:\w+\s+){0,2}?(?:instruksi|perintah|arahan|aturan|hướng dẫn|chỉ dẫn|chỉ thị|quy tắc|instruktioner|regler)"
   r"|\b(?:abaikan|lupakan|bỏ qua|phớt lờ|quên|ignorera|glöm)\s+(?:các\s+|những\s+)?(?:instruksi|perintah|arahan"
   r"|hướng dẫn|chỉ dẫn|chỉ thị|instruktioner(?:na)?)\s+(?:sebelumnya|di atas|trước(?: đó)?|ở trên|tidigare|ovan)"
   r"|\b(?:önceki|tüm|bütün|yukarıdaki)\s+(?:\w+\s+){0,2}?(?:talimat\w*|yönerge\w*|kural\w*)\s+(?:\w+\s+)?"
   r"(?:yok say\w*|görmezden gel\w*|unut\w*|dikkate alma\w*)"
   r"|(?:이전|모든|위의|앞의|기존)\s*(?:\S+\s+){0,2}?(?:지시|지침|명령|규칙|안내)\S*\s*(?:\S+\s+)?(?:무시|잊어)"
   r"|(?:पिछले|सभी|पहले|ऊपर)[^।.!?]{0,25}?निर्देश[^।.!?]{0,20}?(?:अनदेखा|नज़रअंदाज़|नजरअंदाज|भूल)"
   r"|(?:تجاهل|انس|تناس)[^.!?؟]{0,30}?(?:التعليمات|تعليمات|الأوامر|الإرشادات)[^.!?؟]{0,10}?(?:السابقة|أعلاه)"
   r"|(?:تجاهل|انس|تناس)\s+(?:جميع|كل)\s+(?:التعليمات|الأوامر|الإرشادات)", LOW,
   needles=("ignor", "olvid", "oubli", "vergiss", "negeer", "dimentic", "esque", "игнор", "забуд", *"忽视視忘",
            "abaikan", "lupakan", "bỏ qua", "phớt lờ", "quên", "glöm", "talimat", "yönerge", "kural", "무시", "잊어",
            "निर्देश", "تجاهل", "انس", "تناس"))
_r("injection.system_prompt", "tries to reveal or override the system prompt",
   r"\b(?:ignore|disregard|forget|override|bypass|leak|reveal|expose|dump)\W+(?:\w+\W+){0,2}?(?:system|developer"
   r"|initial|hidden|original|secret)\s+(?:prompt|message|instructions)|\b(?:print|show|output|repeat|display|recite"
   r"|tell me|give me|share|send|reveal|leak)\s+(?:me\s+|us\s+)?(?:your|all (?:of )?your|the hidden"
   r"|the secret)\s+(?:\w+\s+)?(?:system prompt|instructions|initial prompt|prompt|rules|guidelines|directives"
   r"|configuration)|\b(?:repeat|print|output) (?:the |all )?(?:text|words|everything) above\b"
   r"|\bnew system prompt\b", LOW,
   words="prompt instructions rules guidelines directives configuration above")
# A persona the user asks for themselves ("act as a strict reviewer whenever I paste code", "act as my tutor"),
# with nothing in the sentence that drops the model's rules: the user's preference, not an injected role.
_OWN_PERSONA = (
    r"(?!(?=[^.!?\n]*\b(?:(?:when|whenever|if|while|each time|every time|so(?: that)?) i|for me|with me|to me|my"
    r"|help me)\b)"
    r"(?![^.!?\n]*\b(?:(?:no|without|any) (?:restrictions|rules|limits|limitations|filters|censorship|guidelines"
    r"|ethics)|unfiltered|unrestricted|uncensored|jailbr\w*|dan|evil|grandm\w*|developer mode|ignore|disregard)\b))"
)
_r("injection.role_play", "tells the model to act as someone else",
   rf"(?:{'|'.join(map(re.escape, _VERBS))})(?:{_IMPERATIVE})(?:(?<=pretend) (?:to be|you are|you're|that you)"
   rf"|(?<=play the) (?:role|part) of|(?<=assume the) (?:role|persona|identity) of"
   rf"|(?<!pretend)(?<!play the)(?<!assume the))\b{_OWN_PERSONA}", LOW, flags=re.M,
   needles=("play the", "role-play"), words="act pretend roleplay impersonate behave assume")
_r("injection.role_override", "tries to change the model's role or persona",
   r"\byou(?: are|'re) now (?:an?|the|in|no longer|free|unrestricted|unfiltered|my|jailbroken|called|named|known as"
   r"|acting|playing|operating|dan|evil)\b|\byou (?:have|'ve) (?:now )?become\b"
   # "From now on, always answer in Spanish" is how users state a preference; from now on, dropping the rules is not.
   r"|\bfrom now on\b[^.!?\n]{0,80}?\b(?:ignore|disregard|forget|obey|no longer (?:follow|bound)|(?:no|without|any)"
   r" (?:restrictions|rules|limits|limitations|filters|censorship|guidelines|safety)|unrestricted|unfiltered"
   r"|uncensored|jailbroken|dan|evil|developer mode|god mode|(?:recommend|promote|push|upsell|sell)\w*[^.!?\n]{0,30}\b"
   r"(?:premium|paid|pro|enterprise|upgrades?|subscriptions?|sponsor\w*|partner\w*|affiliate\w*))\b"
   r"|\b(?:your|the assistant's) (?:new|real|true|actual|updated|secret) (?:name|role|persona|identity"
   r"|instructions?|task|goal|purpose|objective|directive|rules?)\b|\blet'?s (?:play a game|role-?play|pretend)\b"
   r"|\byou (?:must|will|shall) (?:now )?(?:obey|comply with)\b|\b(?:always|must) obey\b|\bnever refuse\b", LOW,
   needles=("re now", "become", "from now on", "your new", "your real", "your true", "your actual", "your updated",
            "your secret", "assistant's", "let's", "lets ", "obey", "refuse"))
_r("injection.jailbreak", "looks like a jailbreak (unrestricted persona or disabled safety rules)",
   r"\bdo anything now\b|\bjailbr(?:eak|oken)\w*|\b(?:god|dan|sudo|jailbreak|unrestricted|evil|chaos"
   r"|opposite) mode\b|\b(?:unrestricted|unfiltered|uncensored|amoral|unethical|evil) (?:ai|assistant|model|chatbot"
   r"|version|persona|llm|twin|confidant|bot)\b|\b(?:no|without(?: any)?) (?:ethical|moral|content|safety"
   r"|usage) (?:guidelines|restrictions|filters|limits|policies|constraints|boundaries)\b|\b(?:system|admin|developer"
   r"|security|emergency|sudo|root)(?: prompt)? override\b|\b(?:disable|turn off|bypass|switch off|ignore) (?:all "
   r"|your |the |any )?(?:safety|content|ethical|moderation) (?:filters?|guidelines|guardrails|restrictions|policies"
   r"|checks)\b"
   r"|\byou (?:have|has) no (?:restrictions|rules|limits|filters|guidelines)\b|\byou (?:are|'re) (?:no longer"
   r"|not) (?:bound|restricted|limited|constrained)\b", LOW,
   words="anything jailbreak jailbroken jailbreaking mode unrestricted unfiltered uncensored amoral unethical"
         " evil ethical moral content safety usage override restrictions rules limits filters guidelines bound"
         " restricted limited constrained")
_r("injection.exfiltration", "instructs the model to send conversation data or secrets somewhere",
   rf"\b(?:send|forward|e-?mail|post|upload|leak|exfiltrate|transmit|relay|share|copy|dump|pipe"
   rf"|beam)\b[^\n]{{0,50}}?\b{_SENSITIVE}\b[^\n]{{0,60}}?\bto\s+(?:https?://|www\.|[\w.+-]+@[\w-]+\.|(?:an?|the|this"
   rf"|my|our|their)\s+(?:own\s+)?(?:external|remote|private|personal|attacker'?s?|following|third[- ]party)?\s*(?:url"
   rf"|server|endpoint|webhook|address|domain|inbox|site|email|account)\b|(?:an?\s+)?(?:external|remote|attacker"
   rf"|third[- ]party)\b)|(?<!never )(?<!not )(?<!n't )(?<!without )\b(?:include|embed|append|insert|reveal"
   rf"|add) (?:the |all |any |every )?(?:user'?s'?|users'|their|customer'?s?|stored|saved) (?:\w+ )?(?:passwords?"
   rf"|credentials|api keys?|secrets?|tokens?|ssns?|social security numbers?|credit card(?: numbers?)?|card numbers?"
   rf"|private keys?|session cookies?)\b|https?://\S+[?&/=]\{{\{{?\s*(?:conversation|history|chat|user|data|secrets?"
   rf"|password|messages?|prompt|context|memor(?:y|ies))|!\[[^\]\n]{{0,80}}\]\(https?://[^)\s]*\?[^)\s]*=",
   LOW, needles=("![", "{"),
   words="conversation conversations chat chats history transcript transcripts messages session sessions context"
         " memory memories credentials password passwords key keys secret secrets token tokens cookies personal"
         " data prompt ssn ssns social card")
_r("injection.hidden_marker", "contains hidden-instruction markers",
   r"\[(?:begin|start|end) (?:of )?(?:\w+ )?(?:instructions?|prompt)\]|<!--[^>]{0,300}?\b(?:instructions?|assistant"
   r"|system prompt|ai|llm|model|you must|you are)\b|\b(?:if you are|if you're|to any|attention,?) (?:an? )?(?:ai|llm"
   r"|language model|assistant|chatbot|agent) (?:reading|processing|seeing|parsing) this\b|\bdecode (?:this"
   r"|the following)[^\n]{0,30}? and (?:follow|execute|run|obey)", LOW,
   needles=("[", "<!--"), words="reading processing seeing parsing decode")
_r("injection.marker", "contains a jailbreak persona or hidden-instruction marker",
   r"\b(?:DAN|STAN|DUDE)\b|\b(?:BEGIN|START|END)\s+(?:OF\s+)?(?:NEW\s+|HIDDEN\s+|SECRET\s+|SYSTEM\s+|ADMIN\s+"
   r"|REAL\s+)?(?:INSTRUCTIONS?|PROMPT|DIRECTIVES?)\b", words="dan stan dude instruction instructions prompt"
                                                                " directive directives")
_r("injection.obfuscated", "contains an obfuscated instruction override",
   r"(?:ignor(?:e|ing)?|disregard|forget|overrid(?:e|ing)|bypass)(?:all|any|the|of|my|these|those)*(?:previous|prior"
   r"|above|earlier|preceding|original|system|initial|all|your)(?:instructions?|prompts?|rules|directives|guidelines)"
   r"|youarenow(?:dan|free|unrestricted|jailbroken|evil|an?unfiltered)|doanythingnow|(?:god|jailbreak"
   r"|dan)mode(?:enabled|on|activated)|systemoverride|(?:reveal|print|leak|show)(?:me)?yoursystemprompt", "compact",
   needles=("ignor", "disregard", "forget", "overrid", "bypass", "youarenow", "doanything", "mode", "systemprompt"))

# Secrets: vendor formats first (their reasons are the most precise), then keyword-based and generic ones.
_r("secret.private_key", "contains a private key block",
   r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:\\n|\s)*(?P<value>[A-Za-z0-9+/=]*)|PuTTY-User-Key-File-\d",
   needles=("private key", "putty"))
_r("secret.aws_access_key", "looks like an AWS access key id", r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
   needles=("akia", "asia", "abia", "acca"), check=lambda v: not v.endswith("EXAMPLE"))  # AWS's documented sample
_r("secret.aws_secret_key", "looks like an AWS secret access key",
   r"aws[\w .-]{0,20}?secret[\w .-]{0,20}?" + _SEP + r"(?P<value>[a-z0-9/+]{40})(?![a-z0-9/+])", LOW,
   needles=("aws",))
_r("secret.github_token", "looks like a GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_\w{50,})",
   needles=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"))
_r("secret.gitlab_token", "looks like a GitLab token", r"\bgl(?:pat|dt|rt|ptt|soat|ffct|cbt|imt)-[\w-]{20,}",
   needles=("gl",))
_r("secret.slack_token", "looks like a Slack token", r"\bxox[abposre]-[0-9A-Za-z-]{10,}|\bxapp-\d-[\w-]{20,}",
   needles=("xox", "xapp-"))
_r("secret.slack_webhook", "looks like a Slack webhook URL",
   r"hooks\.slack\.com/(?:services|workflows|triggers)/T?[\w/-]{20,}", needles=("hooks.slack.com",))
_r("secret.stripe_key", "looks like a Stripe secret key",
   r"\b(?:[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,})", needles=("k_live_", "k_test_", "whsec_"))
_r("secret.anthropic_api_key", "looks like an Anthropic API key", r"\bsk-ant-[\w-]{20,}", needles=("sk-ant-",))
_r("secret.openai_api_key", "looks like an OpenAI-style API key",
   r"\bsk-(?:proj-|svcacct-|admin-|None-)?[\w-]{20,}", needles=("sk-",),
   check=lambda v: _has(v, str.isdigit, str.isupper))
_r("secret.google_api_key", "looks like a Google API key", r"\bAIza[\w-]{35}(?![\w-])", needles=("aiza",))
_r("secret.google_oauth_secret", "looks like a Google OAuth client secret", r"\bGOCSPX-[\w-]{28}",
   needles=("gocspx-",))
_r("secret.twilio_key", "looks like a Twilio API key or account SID", r"(?:SK|AC)(?<!\w..)[0-9a-f]{32}\b",
   digits=8)
_r("secret.sendgrid_key", "looks like a SendGrid API key", r"\bSG\.[\w-]{16,32}\.[\w-]{30,50}", needles=("sg.",))
_r("secret.npm_token", "looks like an npm token", r"\bnpm_[A-Za-z0-9]{36}\b", needles=("npm_",))
_r("secret.pypi_token", "looks like a PyPI upload token", r"\bpypi-AgE[\w-]{50,}", needles=("pypi-",))
_r("secret.vendor_token", "looks like an API token (known vendor prefix)",
   r"\b(?:hf_[A-Za-z]{34}|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}|do[por]_v1_[a-f0-9]{64}|hv[sb]\.[\w-]{24,}"
   r"|lin_api_[A-Za-z0-9]{40}|glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}|PMAK-[a-f0-9]{24}-[a-f0-9]{34}|dapi[a-f0-9]{32}"
   r"|ATATT3[\w=-]{60,}|key-[a-f0-9]{32}|ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43}|\d{8,10}:AA[\w-]{33}"
   r"|xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16})\b|discord(?:app)?\.com/api/webhooks/\d+/[\w-]{40,}",
   needles=("dapi", "key-", ":aa"),
   words="hf shpat shpss shpca shppa dop doo dor hvs hvb lin glsa pmak atatt ntn secret xkeysib discord discordapp")
_r("secret.azure_key", "looks like an Azure storage/service key or SAS signature",
   r"(?:accountkey|sharedaccesskey|sharedaccesssignature)\s*=\s*(?P<value>[a-z0-9+/%]{20,}=*)"
   r"|[?&]sig=(?P<sig>[a-z0-9%+/=]{30,})", LOW, needles=("accountkey", "sharedaccess", "sig="))
_r("secret.jwt", "looks like a JSON Web Token", r"\beyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]*", needles=("eyj",))
_r("secret.database_url", "contains a database URL with a password",
   r"\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|mssql|sqlserver|oracle|cockroachdb|clickhouse"
   r"|jdbc:[a-z]+)://[^\s:/@]*:(?P<value>[^\s@/]+)@", LOW, check=_url_pw, needles=("@",))
_r("secret.url_credentials", "contains a URL with an embedded password",
   r"\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@]+:(?P<value>[^\s@/]+)@[\w.-]+", LOW, check=_url_pw, needles=("@",))
_r("secret.bearer_token", "contains an Authorization header credential",
   r"(?:\bauthorization\b[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|digest)"
   r"|\bbearer)\s+(?P<value>[a-z0-9._~+/-]{16,}=*)", LOW, needles=("bearer", "authorization"),
   check=lambda v: _has(v, str.isdigit, str.isalpha) and not _REFERENCE.match(v))
_r("secret.assignment", "assigns a value to a password/secret/key/token setting",
   r"(?:(?:passw(?:or)?d|passphrase|pwd|secret[_-]?key|secret|api[_-]?key|apikey|access[_-]?key|auth[_-]?key"
   r"|private[_-]?key|signing[_-]?key|encryption[_-]?key|master[_-]?key|session[_-]?key|token|credentials?|auth"
   r"|pass)(?:\s+(?:for|of|on|to|at)(?:\s+[\w'.-]+){1,4}?)?" + _SEP + r"|\bpass(?:w(?:or)?d|phrase|code)\s+"
   r"|\b(?:mysql|mysqldump|mariadb)\b[^\n]{0,60}?\s-p)(?P<value>[^\s\"'`,;]{4,})", LOW, check=credential_like,
   needles=("pass", "pwd", "secret", "key", "token", "credential", "auth", "mysql", "mariadb"))
_r("secret.wallet_seed", "looks like a wallet recovery phrase",
   r"\b(?:seed|recovery|mnemonic|backup|secret)\s+(?:phrase|words)\b[^a-z\n]{0,12}(?:is\s+)?(?P<value>"
   r"(?:[a-z]{3,8}[\s,]+){11,23}[a-z]{3,8})", LOW, words="seed recovery mnemonic backup secret")
_r("secret.generic_token", "looks like a random access token or key",
   # Stripe's publishable keys (pk_live_, pk_test_) go into web pages by design: not secrets.
   r"(?<![\w+/=.-])(?<!SHA256:)(?<!SHA512:)(?<!sha256:)(?!sha(?:512|384|256|1)-|AAAA[BC]3NzaC1|AAAAE2VjZHNh|pk_(?:live|test)_)"
   r"[A-Za-z0-9+/_-]{32,}={0,2}(?![\w+/=-])", check=random_token, digits=1)

# Personal data (each category can be switched off with WriteGate(personal_data=...)).
# A role mailbox of an organisation is how to reach it, not a person: press@, support@, info@ …
# Domains reserved for documentation and tests (RFC 2606, RFC 6761): an address there reaches nobody.
_RESERVED_DOMAIN = re.compile(
    r"@(?:[\w-]+\.)*(?:example\.(?:com|net|org)|[\w-]+\.(?:example|test|invalid|localhost))$", re.IGNORECASE
)
_ROLE_MAILBOX = re.compile(
    r"^(?:press|media|support|help|info|contact|hello|sales|billing|invoices?|accounts|office|admin|webmaster"
    r"|postmaster|abuse|security|privacy|legal|jobs|careers|hr|marketing|team|service|customerservice|feedback"
    r"|noreply|no-reply|donotreply|orders|returns|bookings|reservations|enquiries|inquiries|ap|ar|payables"
    r"|receivables|accounts-?payable|finance|procurement|purchasing|payroll|reception|dispatch|operations|ops)@",
    re.IGNORECASE,
)
def _context_rule(id: str, reason: str, pattern: str, check: Callable[[str], bool], digits: int,
                  exempt: Callable[[str, int], bool], flags: int = 0, words: str = "",
                  needles: tuple[str, ...] = ()) -> None:
    """A personal-data pattern whose values also pass when what comes before them says whose they are not (an
    organisation's line, a provider's documented test card)."""
    regex = re.compile(pattern, flags)

    def find(text: str) -> tuple[int, int] | None:
        for m in regex.finditer(text):
            start, end = m.span("value") if "value" in regex.groupindex else m.span()
            if check(text[start:end]) and not exempt(text, start):
                return start, end
        return None

    _RULES.append(GateRule(id, "personal_data", reason, "", min_digits=digits, finder=find,
                           words=tuple(words.split()), needles=needles))


_EMAIL = r"(?<![\w.%+-])[a-z0-9._%+-]{1,64}@[a-z0-9-]{1,63}(?:\.[a-z0-9-]{1,63}){0,5}\.[a-z]{2,24}\b(?!:)"
_EMAIL_AT = re.compile(_EMAIL, re.IGNORECASE)


def _documentation_address(text: str, start: int) -> bool:
    """An address at a domain reserved for documentation, in a sentence that calls it an example or a test
    ("use test@example.com for sign-up flows in QA"); people also write such addresses for real ones."""
    m = _EMAIL_AT.match(text, start)
    if m is None or not _RESERVED_DOMAIN.search(m.group(0)):
        return False
    # An address's own "example.com" calls nothing an example; "test@" does.
    return called_example(_EMAIL_AT.sub(_local_part, text), start, m.end())


def _local_part(m: re.Match[str]) -> str:
    local = m.group(0).split("@")[0]
    return local + " " * (len(m.group(0)) - len(local))


_context_rule("personal_data.email", "contains an email address", _EMAIL, lambda v: not _ROLE_MAILBOX.match(v), 0,
              _documentation_address, re.IGNORECASE, needles=("@",))
# A payment provider's documented test card or a specification's sample IBAN, named as one, is nobody's.
_TEST_VALUE = re.compile(
    r"test(?:ing)? (?:card|visa|mastercard|amex|number|iban|mode|account)|sandbox|testkarte|tarjeta de prueba"
    r"|carte de test|carta di test|cartão de teste|test kartı|testkort|karta testowa|тестов\w+ карт"
    r"|example iban|sample iban|beispiel-?iban|iban (?:de|d')?(?:exemple|ejemplo|esempio)|from the \w+ docs",
    re.IGNORECASE,
)


def _test_value(text: str, start: int) -> bool:
    return bool(_TEST_VALUE.search(text, max(0, start - 48), start))


_context_rule("personal_data.card", "contains a payment card number",
              r"[0-9](?<![\d.,-][0-9])(?:[ -]?[0-9]){13,20}(?![\d-])", card_ok, 14, _test_value)
# Named as a card, a number of a card brand's prefix and length is someone's card even when a digit is mistyped (the
# Luhn check fails): "ma carte bleue : 4970 1283 5567 2048", "kredi kartım 5168 …", "银行卡号是 6222 …".
_CARD_WORDS = (
    r"(?:\bcard|\bvisa|mastercard|\bamex|american express|\bdiscover\b|\bmaestro\b|\bjcb\b|diners club|unionpay"
    r"|carte|tarjeta|cart[ãa]o|carta di (?:credito|debito)|bancomat|karte\b"
    r"|kartennummer|creditcard|bankpas|pinpas|\bkaart|\bkart\w*|kártya|карт|卡号|卡號|银行卡|信用卡"
    r"|储蓄卡|借记卡|カード|카드|บัตร|thẻ|כרטיס|بطاقة|κάρτα|\bkort(?:et|nummer)?\b|kortti)"
)
_context_rule("personal_data.card.labelled", "contains a payment card number",
              _CARD_WORDS + r"[^\d\n]{0,30}?(?P<value>(?<!\d)\d(?:[ -]?\d){12,18})(?![\d-])",
              lambda v: _card_brand_ok(_digits(v)), 13, _test_value, re.IGNORECASE)
_context_rule("personal_data.iban", "contains an IBAN", r"[A-Z](?<!\w[A-Z])[A-Z][0-9]{2}(?:[ -]?[A-Z0-9]){11,30}\b",
              iban_ok, 4, _test_value)
# Named as an IBAN, a known country's IBAN of its length is someone's account even with a mistyped check digit.
# So is one named as a bank account, in any of these languages.
_ACCOUNT_NEEDLES = (
    *"iban account konto konta cuenta compte conto conta rekening счет счёт рахун hesab hesap účet tili tilin".split(),
    *"λογαριασμ حساب खाता 口座 계좌 账户 帳戶 账号 tài khoản bankgiro".split(),
)
_ACCOUNT_WORDS = r"\b(?:account|konto|konta|cuenta|compte|conto|conta|rekening|hesab\w*|hesap\w*|účt?\w*|tili\w*)\b" + (
    r"|сч[её]т\w*|рахун\w*|λογαριασμ\w*|حساب|खाता|口座|계좌|账户|帳戶|账号|tài khoản|bankgiro"
)
_context_rule("personal_data.iban.labelled", "contains an IBAN",
              rf"(?:\biban\b|{_ACCOUNT_WORDS})[^\w\n]{{0,4}}(?:\w+[^\w\n]{{1,3}}){{0,3}}?"
              r"(?P<value>[A-Z]{2}[0-9]{2}(?:[ -]?[A-Z0-9]){11,30})\b",
              lambda v: _iban_shape(v), 4, _test_value, flags=re.IGNORECASE, needles=_ACCOUNT_NEEDLES)
_r("personal_data.government_id.uk_nino", "contains a UK National Insurance number",
   r"[A-CEGHJ-PR-TW-Z](?<!\w[A-Z])[A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b", digits=6,
   check=lambda v: v[:2] not in ("BG", "GB", "NK", "KN", "TN", "NT", "ZZ"))
_r("personal_data.government_id.es_dni", "contains a Spanish DNI/NIE number",
   r"[0-9XYZ](?<!\w[0-9XYZ])[0-9]{6,7}(?<![XYZ][0-9]{6})[0-9]?-?[A-Z]\b", check=_dni_ok, digits=7)
_r("personal_data.government_id.br_cpf", "contains a Brazilian CPF number",
   r"[0-9]{3}\.(?<![\w.][0-9]{3}\.)[0-9]{3}\.[0-9]{3}-[0-9]{2}\b", check=_cpf_ok, digits=11)
_r("personal_data.government_id.in_pan", "contains an Indian PAN",
   r"[A-Z](?<!\w[A-Z])[A-Z]{2}[ABCFGHLJPT][A-Z][0-9]{4}[A-Z]\b", digits=4)
_r("personal_data.government_id.labeled", "contains a passport, licence or national id number",
   r"\b(?:passport|ssn|social security|itin|social insurance|sin|tin|national (?:id|identity|insurance)|nino|tax (?:id"
   r"|file|identification)|driver'?s? licen[cs]e|licen[cs]e (?:number|no)|id card|identity card|aadhaa?r|pan card"
   r"|personalausweis|steuer-?id|bsn|nif|dni|cpf|curp|pesel|codice fiscale|medicare|nhs)\b(?:\s*(?:number|no\.?|num|#"
   r"|id))?\s*(?:is|:|=|#|-)?\s*(?P<value>[a-z0-9][a-z0-9.-]{2,16}(?: \d[\d.-]{1,6}){0,4})\b", LOW, digits=2,
   check=lambda v: v.upper() == v and len(_digits(v)) >= 2 and len(v) >= 6 and len(set(_digits(v))) > 1,
   words="passport ssn social itin sin tin national nino tax licence license id card identity aadhaar aadhar pan"
         " personalausweis steuer bsn nif dni cpf curp pesel codice medicare nhs")
def _phone_rule(id: str, pattern: str, check: Callable[[str], bool], digits: int, flags: int = 0,
                words: str = "") -> None:
    _context_rule(id, "contains a phone number", pattern, check, digits, organisation_line, flags, words)


_phone_rule("personal_data.phone.international",
            r"[+0](?<![\w+][+0])(?:(?<=\+)|(?<=0)0)[1-9](?:[ .-]?\(?[0-9]\)?){6,14}(?![\d])", _phone(8, 15), 8)
_phone_rule("personal_data.phone.north_american",
            r"[(0-9](?<![\w+$.-][(0-9])(?:(?<=\()[0-9]{3}\)\s?|(?<=[0-9])[0-9]{2}[-. ])[0-9]{3}[-. ][0-9]{4}"
            r"(?![\w-]|[.,]\d)",
            lambda v: len(d := _digits(v)) == 10 and d[0] > "1" and d[3] > "1" and not business_line(v), 10)
_NATIONAL_PHONE = re.compile(
    r"[(0](?<![\w+$.,/:-][(0])(?:(?<=\()0[0-9]{1,4}\)\s?|(?<=0)[0-9]{1,4}[ .-])[0-9]{2,8}"
    r"(?:[ .-][0-9]{2,4}){0,3}(?![\w-]|[.,]\d)"
)
_national_phone_ok = _phone(9, 11)


def _national_phone(text: str) -> tuple[int, int] | None:
    """A national number as dialled ("030 129743", "(089) 5374 758"), unless a part or serial number."""
    for m in _NATIONAL_PHONE.finditer(text):
        if (
            _national_phone_ok(m.group(0))
            and not product_number_before(text, m.start())
            and not organisation_line(text, m.start())
        ):
            return m.span()
    return None


_RULES.append(GateRule("personal_data.phone.national", "personal_data", "contains a phone number", "", min_digits=9,
                       finder=_national_phone))
_phone_rule("personal_data.phone.labeled",
            r"\b(?:phone|tel|telephone|mobile|cell|cellphone|call|text|sms|whatsapp|fax|landline|contact number"
            r"|ph)\b\.?(?:\s*(?:number|no\.?|#))?\s*(?:is|at|on|:|=|-)?\s*(?P<value>\+?\(?\d[\d ().-]{5,18}\d)"
            r"(?![\d.,])", _phone(7, 15), 7, re.IGNORECASE,
            "phone tel telephone mobile cell cellphone call text sms whatsapp fax landline contact ph")

# Unstable or one-off facts: wrong tomorrow, or about one record only.
# A dated statement is a fact about its date (anchored by `capture.timing`, never refused); only a claim whose
# truth changes by the minute is unstable.
_r("unstable.momentary", "only true at the moment it was said (right now, currently at, in a meeting); not a learning",
   rf"(?:{MOMENTARY.pattern})|\bcurrently (?:at|sitting at|running at|stands? at|down|up|offline|unavailable"
   rf"|broken|out of stock|trending|\$?\d)\b", LOW,
   words="now moment speak minute currently meeting call phone driving car way traffic busy ahora momento jetzt"
         " moment instant momento")
_ONE_OFF = "contains a one-off identifier (UUID, request/order/session id); keep the reusable pattern"
# A UUID alone may name something lasting (a tenant, a bucket, a workspace): it is one-off only when it is
# introduced as a record's id (request, session, trace, order …).
_r("unstable.one_off_id.uuid", _ONE_OFF, r"\b(?:req(?:uest)?|sess(?:ion)?|trace|span|correlation|order|ticket"
   r"|transaction|txn|run|job|conversation|chat|message|msg|event|call|execution|build|incident|invoice|payment"
   r"|booking|shipment)s?(?![a-z])[ _-]?(?:id|uuid|#|no\.?)?\W{0,4}(?:\w+\W+){0,3}?"
   r"(?P<value>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b", LOW, digits=3)
_PREFIXES = ("req request sess session trace span ord order txn tx evt msg run job ticket tkt case inc cus cust sub"
             " inv pi ch po conv thread call chatcmpl resp batch ws user usr acct").split()
_BEHIND = "|".join(rf"(?<=\b{p}[_-])" for p in _PREFIXES)  # separator first, then a look-behind per prefix
_r("unstable.one_off_id.prefixed", _ONE_OFF, rf"[_-](?:{_BEHIND})(?P<value>\w{{6,}})\b", LOW,
   check=_min_digits(3), digits=3)
# Only the ids a system stamps on one exchange (a trace, a request, a session): a person's order, booking,
# tracking or ticket number is theirs to keep ("USPS tracking number 9405 … — the birthday gift for Mum").
_r("unstable.one_off_id.labeled", _ONE_OFF,
   r"(?:trace|request|session|transaction|conversation|correlation)\s*(?:id|number|no\.?|num|#|ref(?:erence)?)"
   r"\s*(?:is|was|:|=|#)?\s*#?(?P<ref>[a-z0-9][\w-]{3,})\b", LOW, check=_min_digits(3), digits=3,
   words="trace request session transaction conversation correlation")

# fmt: on
BUILTIN_RULES: tuple[GateRule, ...] = tuple(_RULES)
