"""Statements of the user's world in other languages: "J'ai un NAS Synology DS920+ dans le bureau", "Tengo un
huerto en Valencia con riego por goteo". The English rules rewrite such a clause in the third person; here the
clause is kept as the user wrote it, behind a label, and only when it names something checkable (a proper noun,
a model number, a quantity) — "tengo una pregunta" names nothing.
"""

from __future__ import annotations

import re

from ..models import LearningType
from .phrasing import is_specific
from .turn import Draft, Rule, TurnView, hedged

__all__ = ["SETUP_IN_OTHER_LANGUAGES"]

_LEADS = (
    # German, Spanish, French, Italian, Portuguese, Dutch, Polish
    r"ich habe|ich hab|ich nutze|ich benutze|ich verwende|ich fahre|wir haben|wir nutzen|wir benutzen|wir verwenden|"
    r"tengo|uso|utilizo|usamos|utilizamos|tenemos|trabajo con|"
    r"j'ai|j’ai|j'utilise|j’utilise|nous avons|nous utilisons|on utilise|on a|"
    r"ho|uso|utilizzo|abbiamo|usiamo|utilizziamo|"
    r"tenho|uso|utilizo|temos|usamos|"
    r"ik heb|ik gebruik|wij hebben|we hebben|wij gebruiken|we gebruiken|"
    r"mam|używam|mamy|używamy"
)
_SETUP = re.compile(
    rf"^(?:(?:also|ja|sí|oui|sì|sim|ja|tak|bueno|bon|ok),?\s+)?(?P<lead>{_LEADS})\s+(?P<obj>[^;!?]{{4,160}})$", re.I
)
_NOTHING = re.compile(
    r"\b(?:pregunta|problema|duda|frage|problem|question|souci|domanda|dúvida|pergunta|vraag|pytanie|idea|idee|"
    r"idée|tiempo|zeit|temps|tempo|tijd|czas|hambre|hunger|faim|fame|fome|honger)\b",
    re.IGNORECASE,
)


def _render(match: re.Match[str], turn: TurnView) -> Draft | None:
    obj = match.group("obj").strip(" .,:")
    if hedged(match) or not is_specific(obj) or _NOTHING.search(obj):
        return None
    clause = f"{match.group('lead')} {obj}".strip()
    clause = clause[:1].upper() + clause[1:]
    return Draft(f"User's setup, in their words: {clause}", topic=obj[:60])


SETUP_IN_OTHER_LANGUAGES = Rule(
    "environment.other_language",
    LearningType.FACT,
    _SETUP,
    _render,
    tuple(sorted({lead.replace("\\", "") for lead in _LEADS.split("|")}, key=len, reverse=True)),
    0.55,
)
