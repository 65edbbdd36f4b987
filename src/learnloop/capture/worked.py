"""Words that say an answer worked, for a message the feedback verdict reads as something else: "ok that did the
trick, crystal clear. next question: …" is a follow-up by its end and a confirmation by its start.

Only plain, un-negated statements count: "didn't work", "still not working", "worked until I rebooted" and
questions ("did it work?") do not.
"""

from __future__ import annotations

import re

__all__ = ["deferred", "taken_back", "worked"]

_SAYS = re.compile(
    r"(?<![\w'])(?:(?:that|it|this|which|they|those|these|everything|all)(?:'s|\s+is|\s+are)?\s+)?"
    r"(?:worked|works(?:\s+now|\s+again|\s+perfectly|\s+great|\s+fine)|working(?:\s+now|\s+again)|did the trick|"
    r"does the trick|fixed it|solved it|sorted it|nailed it|(?:is|are|all)\s+(?:fixed|sorted|solved|good)\s+now|"
    r"all good(?:\s+now)?|all sorted|problem solved|that was it|spot on|"
    r"(?<=[\w)] )(?<!\bi )(?<!\bwe )(?<!\byou )did it(?!\s+(?:work|help|fix|solve))|"
    r"funktioniert(?:\s+jetzt|\s+wieder)?|hat (?:funktioniert|geklappt)|klappt(?:\s+jetzt)?|"
    r"funcion[óo]|ha funcionado|funciona(?:\s+ya|\s+ahora)?|(?:ça|ca) (?:marche|a marché|fonctionne)|"
    r"a fonctionné|ha funzionato|funziona(?:\s+ora|\s+adesso)?|funcionou|deu certo|werkt(?:\s+nu|\s+weer)?|"
    r"het werkte|działa(?:\s+już|\s+teraz)?|zadziałało|うまくいきました|うまくいった|直りました|できました)"
    r"(?![\w'])",
    re.IGNORECASE,
)
_NEGATED = re.compile(
    r"(?:\b(?:not|never|no longer|didn't|did not|doesn't|does not|isn't|wasn't|hasn't|haven't|won't|still no|"
    r"nicht|kein|no|pas|non|não|niet|nie)\b|n't)[^.!?\n]{0,24}$",
    re.IGNORECASE,
)
_THEN_FAILED = re.compile(r"^[^.!?\n]{0,12}\b(?:until|but|except|then|only for|for a while|at first)\b", re.IGNORECASE)


def worked(message: str) -> bool:
    for match in _SAYS.finditer(message):
        before = message[max(0, match.start() - 40) : match.start()]
        after = message[match.end() : match.end() + 40]
        if _NEGATED.search(before) or _THEN_FAILED.match(after) or after.lstrip().startswith("?"):
            continue
        if before.rstrip().casefold().endswith(("if", "whether", "did", "does", "has", "hope", "hopefully")):
            continue
        return True
    return False


_LATER = re.compile(
    r"\b(?:i'll|i will|i'm going to|gonna|will|going to|let me|i need to|need to|i'd like to|i should)\s+"
    r"(?:\w+\s+){0,2}(?:try|test|give it a (?:go|try|shot)|check|run|see|do it|apply)"
    r"|\b(?:try|test) (?:it|that|this|them) (?:later|tonight|tomorrow|soon|first|out)\b"
    r"|\b(?:haven't|have not|not) (?:tried|run|tested|done) (?:it|that|this|them)?\s*yet\b|\bnot yet\b|\byet to\b"
    r"|\b(?:later|tonight|tomorrow|this weekend|in the morning)\b"
    r"|lo (?:intento|pruebo|probaré|probare)|voy a probar|ich (?:probier|teste|versuch)|je (?:vais|testerai|essaierai)|"
    r"(?:proverò|provo dopo)|vou (?:tentar|testar|experimentar)|ik (?:probeer|test) het|spróbuję|試してみます",
    re.IGNORECASE,
)
_TAKEN_BACK = re.compile(
    r"\b(?:scratch that|take (?:that|it) back|spoke too soon|worse than (?:before|ever)|broke (?:it|everything|again)|"
    r"(?:it|that)\s+broke|stopped working|not working (?:anymore|again)|no longer works|doesn't work anymore|"
    r"still (?:failing|fails|broken|not working|doesn't work|happening)|"
    r"(?:came|is|was) back(?! together| to normal| up| online| on| to life)|"
    r"didn't (?:actually|really) (?:work|fix)|wasn't (?:actually|really) (?:fixed|working)|back to square one|"
    r"rolled (?:it )?back|had to revert|reverted)\b"
    r"|funktioniert (?:doch )?nicht mehr|geht wieder nicht|ya no funciona|vuelve a fallar|"
    r"ne (?:marche|fonctionne) plus|"
    r"non funziona più|não funciona mais|werkt niet meer|już nie działa",
    re.IGNORECASE,
)


def deferred(message: str) -> bool:
    """ "Thanks, I'll give it a go tomorrow": grateful, but nothing has been tried yet."""
    return _LATER.search(message) is not None


def taken_back(message: str) -> bool:
    """ "Actually scratch that — it's wobbling worse than before": what was confirmed did not hold."""
    return _TAKEN_BACK.search(message) is not None
