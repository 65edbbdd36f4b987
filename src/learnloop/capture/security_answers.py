"""Answers to a bank's security questions, and passwords written out a character at a time.

An answer to "your mother's maiden name" or "your first pet" opens the account as a password does, but it is a
plain word with no shape a detector knows: it is found by the question before it and an answer after it. A
password "spaced out so you can read it" ("q u a r t z _ F o x _ 7 3") is found by its word and its letters.
"""

from __future__ import annotations

import re

from .gate_rule import GateRule
from .needles import literal_needles

__all__ = ["SECURITY_ANSWER_RULES"]

_QUESTION = re.compile(
    r"security questions?|secret questions?|memorable (?:word|answer)|question secrète|questions? de sécurité"
    r"|pregunta (?:de seguridad|secreta)|sicherheitsfrage|geheimfrage|domanda (?:di sicurezza|segreta)"
    r"|pergunta (?:de segurança|secreta)|beveiligingsvraag|pytani\w* (?:bezpieczeństwa|pomocnicz\w*)"
    r"|säkerhetsfråga\w*|güvenlik sorusu|gizli soru|контрольн\w* вопрос\w*|секретн\w* вопрос\w*"
    r"|pertanyaan keamanan|câu hỏi bảo mật|秘密の質問|보안 질문|비밀 질문|安全问题|密保问题|सुरक्षा प्रश्न"
    r"|سؤال الأمان|السؤال السري",
    re.IGNORECASE,
)
# The answer is given: an answer word or a colon, then a word of its own.
_ANSWER = re.compile(
    r"(?:\banswered\s+(?:with\s+)?|\banswer\s+(?=(?-i:[A-Z]))|\b(?:answer|reply|réponse|respuesta|antwort|risposta|resposta|antwoord|odpowied\w*"
    r"|svar(?:et)?|cevab\w*|ответ\w*|jawaban\w*|câu trả lời)\b(?:\s*[:=：—–-]\s*|\s+(?:is|was|est|es|ist|è|é|to|jest"
    r"|är|это|là|adalah)\s+)|(?:答え|답|答案|उत्तर|جواب|الإجابة)\s*(?:[:：]|は|은|는|是|है)?\s*"
    r"|(?<![\d:])[:：](?!\d)\s*)"
    r"[\"'“«「『]?(?P<value>[^\W\d_][\w'-]+)",
    re.IGNORECASE,
)
# A description of the answer, not the answer: "the answer is stored in my password manager".
_NOT_ANSWERS = frozenset(
    "the a an is in my our your their stored saved kept written on at still same something nothing different fake"
    " random long".split()
)


def _security_answer(text: str) -> tuple[int, int] | None:
    for question in _QUESTION.finditer(text):
        for m in _ANSWER.finditer(text, question.end(), min(len(text), question.end() + 120)):
            value = m.group("value")
            # After a bare colon, an answer is a name ("… : Delacroix-Vernet"), not more of the sentence.
            named = not m.group(0).lstrip().startswith((":", "：")) or value[0].isupper() or not value[0].isascii()
            if named and value.casefold() not in _NOT_ANSWERS:
                return m.span("value")
    return None


_PASSWORD_WORD = re.compile(
    r"password|passwort|kennwort|passcode|contraseña|mot de passe|senha|wachtwoord|hasło|lösenord|şifre|пароль"
    r"|kata sandi|mật khẩu|パスワード|비밀번호|密码|पासवर्ड|كلمة (?:ال)?مرور",
    re.IGNORECASE,
)
# Eight or more single characters with one space between each: a word spelled out so a filter does not see it.
_SPELLED = re.compile(r"(?<![\w])(?:[^\s] ){7,}[^\s](?![\w])")


def _spelled_password(text: str) -> tuple[int, int] | None:
    for word in _PASSWORD_WORD.finditer(text):
        m = _SPELLED.search(text, word.end(), min(len(text), word.end() + 80))
        if m is not None and any(c.isalpha() for c in m.group(0)):
            return m.span()
    return None


SECURITY_ANSWER_RULES: tuple[GateRule, ...] = (
    GateRule(
        "secret.prose.security_answer",
        "secret",
        "gives the answer to a security question",
        "",
        finder=_security_answer,
        hint=True,
        needles=literal_needles(_QUESTION),
    ),
    GateRule(
        "secret.prose.spelled_out",
        "secret",
        "gives a password spelled out a character at a time",
        "",
        finder=_spelled_password,
        hint=True,
        needles=literal_needles(_PASSWORD_WORD),
    ),
)
