"""Rules for outcomes: measured-versus-predicted numbers and procedures that worked.

"I got 82%, not 75%" becomes a fact only when there is something to compare with — a value stated in the
sentence or the assistant's own claim with the same kind of unit — and a subject to name: a bare measurement
of one batch is not reusable. A procedure needs at least two content words ("the fix was adding --no-cache to
the build"), so "that fixed it" alone yields nothing.
"""

from __future__ import annotations

import re

from ..models import LearningType
from .phrasing import PRONOUN_HEADS, VALUE, Value, capitalize, is_specific, parse_values, third_person
from .turn import Draft, Render, Rule, TurnView, clean_object, content_terms, hedged

__all__ = ["OUTCOME_RULES"]


def _r(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# ---- measured versus predicted -----------------------------------------------------------------------------

_PREDICTED = _r(
    rf"(?:(?:you|the recipe|the calculator|the app|the software|the model|your estimate|it)\s+"
    rf"(?:predicted|said|estimated|expected|calculated|projected|assumed|quoted|gave|told me)"
    rf"(?:\s+(?:it would be|it'd be|would be|of|me|was|it was))?"
    rf"|(?:you|the recipe|the calculator|the app|the software|the model|it)\s+(?:predicted|said|estimated|expected|"
    rf"calculated|projected|quoted)\s+(?:that\s+)?(?:the\s+|an?\s+|my\s+|our\s+)?"
    rf"(?P<psubj>[a-z][\w./-]*(?:\s[a-z][\w./-]*){{0,2}}?)"
    rf"(?:\s+(?:would be|will be|would come in at|would take|will take|would need|of|at|is|was|to be|=|:))?"
    rf"|(?:predicted|expected|estimated|estimate|prediction|forecast|projection|target|planned|calculated|"
    rf"projected)(?:\s+[\w-]+){{0,2}}?"
    rf"(?:\s+(?:was|is|of|at|:))?"
    rf"|instead of|rather than|not|vs\.?|versus|compared to|against|than)\s+(?:the\s+)?"
    rf"(?:predicted\s+|expected\s+|listed\s+|estimated\s+)?(?:about\s+|~)?(?P<pred>{VALUE})"
)


def _compare(observed: Value, predicted: Value) -> str | None:
    if observed.number is None or predicted.number is None or observed.number == predicted.number:
        return None
    return "higher than" if observed.number > predicted.number else "lower than"


_LEAD_NP = _r(
    r"^(?:the\s+|my\s+|our\s+)?(?P<subj>(?:[\w./-]+\s){0,2}?[\w./-]+)\s+(?P<verb>attenuated|fermented|finished|"
    r"dropped|boiled off|came in|came out|ended up|ran)\b"
)


def _predicted(match: re.Match[str], observed: Value, turn: TurnView, hint: str) -> tuple[str, Value] | None:
    """What this observation is measured against — stated in the sentence, else the assistant's claim — and
    the subject (the sentence's own, else the subject of the assistant's matching claim)."""
    stated: Value | None = None
    named = ""
    for found in _PREDICTED.finditer(match.string):
        values = parse_values(found.group("pred"))
        if values and values[0].compatible(observed) and found.start("pred") != match.start("obs"):
            stated, named = values[0], found.group("psubj") or ""
            break
    if stated is not None:
        if not hint and named and named.split()[0].casefold() not in PRONOUN_HEADS:
            hint = named
        if not hint:
            same = [c for c in turn.claims() if c.value.compatible(stated) and c.value.number == stated.number]
            hint = same[0].subject if same else ""
        return hint, stated
    # Without a stated prediction only a claim with a real unit will do: "you should buy 2 packs" is not a
    # prediction that "I got 3 of them" measures against.
    claim = turn.claim_for(observed, hint)
    if claim is None or not (claim.value.unit or _same_precision(observed, claim.value)):
        return None
    return hint or claim.subject, claim.value


def _same_precision(observed: Value, predicted: Value) -> bool:
    """Unitless readings of one instrument ("1.046" against "1.050"): both decimals, to the same places."""
    places = [text.partition(".")[2] for text in (observed.text, predicted.text) if "." in text]
    return len(places) == 2 and len(places[0]) == len(places[1]) and places[0].isdigit() and places[1].isdigit()


def _measured(match: re.Match[str], turn: TurnView, *, plain: bool = False) -> Draft | None:
    observed = parse_values(match.group("obs"))
    if not observed or hedged(match):
        return None
    subject = (match.groupdict().get("subj") or "").strip()
    verb = ""
    counted = _COUNTED.match(match.string[match.end("obs") :]) if not observed[0].unit else None
    lead = _LEAD_NP.search(match.string) if not subject else None
    if lead and lead.group("subj").split()[0].casefold() not in PRONOUN_HEADS:
        subject, verb = lead.group("subj"), lead.group("verb").casefold()
    if subject.split()[:1] and subject.split()[0].casefold() in PRONOUN_HEADS:
        subject = ""
    if not subject and counted:  # "I got 312 sessions": the counted noun is the subject
        subject = counted.group(1)
    found = _predicted(match, observed[0], turn, subject)
    if found is None:
        return None
    subject, predicted = found
    comparison = _compare(observed[0], predicted)
    if not subject or comparison is None:
        return None
    if _TOOK.search(match.string[: match.start("obs")]):  # "it took 5 hours": a duration is longer, not higher
        head, comparison = (
            f"{capitalize(subject)} took",
            comparison.replace("higher", "longer").replace("lower", "shorter"),
        )
    elif verb:
        head = f"{capitalize(subject)} {verb} {'to' if verb in ('attenuated', 'fermented', 'dropped') else 'at'}"
    else:  # "Mash efficiency came in at 68%…" names its subject; "I got 82%" borrows the assistant's
        head = f"{capitalize(subject)} was" if plain else f"Measured {subject} was"
    return Draft(f"{head} {observed[0].text}, {comparison} the predicted {predicted.text}", topic=subject)


_TOOK = re.compile(r"\btook\s+(?:about\s+|around\s+|~)?$", re.IGNORECASE)
_COUNTED = re.compile(r"\s+([a-z][\w-]{2,}s)\b")


def _instead(match: re.Match[str], turn: TurnView) -> Draft | None:
    return _measured(match, turn, plain=True)


def _took(match: re.Match[str], turn: TurnView) -> Draft | None:
    subject = (match.group("subj") or "").strip()
    observed = parse_values(match.group("obs"))
    if not observed or hedged(match):
        return None
    if not subject or subject.split()[0].casefold() in PRONOUN_HEADS:
        claim = turn.claim_for(Value("", None, observed[0].unit))
        if claim is None:
            return None
        subject = claim.subject
    text = f"{capitalize(subject)} took {observed[0].text} {match.group('cmp').casefold()} than predicted"
    return Draft(text, topic=subject)


_SETUP = _r(r"\b(?:it's|it is|i have|i've got|i use|we use|on|with) (?:a|an|my|our) (?P<eq>(?:[\w.-]+ ){0,3}[\w.-]+)")


def _than_predicted(match: re.Match[str], turn: TurnView) -> Draft | None:
    subject = match.group("subj").strip()
    if subject.split()[0].casefold() in PRONOUN_HEADS or hedged(match):
        return None
    cmp = {"less": "lower", "more": "higher"}.get(match.group("cmp").casefold(), match.group("cmp").casefold())
    if match.group("delta"):
        cmp = f"{match.group('delta')} {cmp}"
    text = f"{capitalize(subject)} was {cmp} than predicted"
    claim = next((c for c in turn.claims() if set(content_terms(c.subject)) & set(content_terms(subject))), None)
    if claim is not None:
        text = f"{capitalize(subject)} was {cmp} than the predicted {claim.value.text}"
    setup = _SETUP.search(turn.user)
    if setup and is_specific(setup.group("eq")):
        text += f" on the user's {setup.group('eq')}"
    return Draft(text, topic=subject)


# ---- procedures that worked --------------------------------------------------------------------------------


def _procedure(label: str) -> Render:
    """`label` is the statement's head, e.g. "{kind} that worked"; the match supplies `obj` and maybe `topic`."""

    def render(match: re.Match[str], turn: TurnView) -> Draft | None:
        obj = clean_object(match.group("obj"), max_words=24)
        if obj is None or len(content_terms(obj)) < 2 or hedged(match):
            return None
        groups = match.groupdict()
        topic = re.sub(r"^(?:the|my|our)\s+", "", (groups.get("topic") or "").strip(), flags=re.IGNORECASE)
        if topic.casefold() in PRONOUN_HEADS:
            topic = ""
        where = f" for {third_person(topic)}" if topic else ""
        if obj[:1].isupper() and obj[1:2].islower():
            obj = obj[0].lower() + obj[1:]  # "Adding gypsum fixed it" → "…: adding gypsum"
        head = capitalize(label.format(kind=(groups.get("kind") or "fix").casefold()))
        return Draft(f"{head}{where}: {third_person(obj)}", topic=topic or " ".join(content_terms(obj)[:3]))

    return render


F, PR = LearningType.FACT, LearningType.PROCEDURE
_NP = r"(?P<subj>(?:[\w./-]+\s){0,3}?[\w./-]+)"
_NOT_DEICTIC = r"(?!(?:that|this|it|your|you)\b)"

_MEASURED_MEASURED = (
    rf"\b(?:measured|actual|real|final)\s+(?P<subj>[\w./-]+(?:\s[\w./-]+){{0,2}}?)\s+(?:was|is|came in at|"
    rf"came out at|came out|ended at|ended up at|finished at|of|at|=|:)\s*(?P<obs>{VALUE})"
)
_MEASURED_GOT = (
    rf"\b(?:I|we|it)\s+(?:got|measured|hit|saw|reached|ended up with|ended up at|came in at|took)\s+(?:about\s+|~)?"
    rf"(?P<obs>{VALUE})"
)
_MEASURED_TOOK = (
    rf"(?:^(?:the\s+)?{_NP}\s+)?\btook\s+(?:about\s+|around\s+)?(?P<obs>{VALUE})\s+"
    r"(?P<cmp>longer|shorter|more|less|fewer)\b"
)
_MEASURED_THAN_PREDICTED = (
    rf"^(?:the\s+)?{_NP}\s+(?:was|were|is|came in|came out|ran|ended up)\s+(?:way\s+|much\s+|a lot\s+|far\s+|"
    rf"quite a bit\s+|significantly\s+|slightly\s+|a bit\s+|(?P<delta>{VALUE})\s+)?"
    r"(?P<cmp>less|lower|more|higher|longer|shorter|faster|slower|stronger|weaker|thinner|thicker)\s+than\s+"
    r"(?:you\s+|the recipe\s+|the app\s+)?"
    r"(?:predicted|expected|estimated|said|calculated|planned|thought)"
)
_MEASURED_INSTEAD = (
    rf"^(?:the\s+|my\s+|our\s+)?{_NP}\s+(?:came in at|came out at|came out|ended up at|ended at|finished at|was|were)"
    rf"\s+(?:about\s+|~)?(?P<obs>{VALUE}),?\s+(?:instead of|not|rather than|vs\.?|versus|compared to|against|"
    r"when you (?:said|predicted|expected|estimated))\b"
)
_PROCEDURE_WHAT_WORKED = (
    r"^(?:what|the thing that|the one thing that)\s+(?:finally\s+|actually\s+|eventually\s+)?(?:worked|"
    r"fixed it|did the trick|solved it|helped)\s+(?:was|is|:)\s*(?P<obj>.+)$"
)
_PROCEDURE_THE_FIX = (
    r"^(?:the|my|our)\s+(?:(?:actual|real|final)\s+)?(?P<kind>fix|solution|trick|workaround|cure)\s+"
    r"(?:for\s+(?P<topic>[^,:]+?)\s+)?(?:was|is|turned out to be|ended up being|:)\s*(?P<obj>.+)$"
)
_PROCEDURE_THAT_WORKED = r"^(?:that|this|it)\s+worked\s*[:-]\s*(?P<obj>.+)$"
_PROCEDURE_FIXED_IT = rf"^(?P<obj>{_NOT_DEICTIC}[\w-]+ing\b.+?)\s+(?:fixed|solved)\s+(?P<topic>it|the [\w -]+?)\s*$"
_PROCEDURE_DID_THE_TRICK = (
    rf"^(?P<obj>{_NOT_DEICTIC}[\w-]+ing\b.+?)\s+(?:did the trick|worked (?:perfectly|great|like a charm|well)|"
    r"made the difference|made all the difference)\s*$"
)
_PROCEDURE_FIXED_BY = (
    r"^(?:I|we)\s+(?:finally\s+|eventually\s+)?(?:fixed|solved|resolved|got around|worked around)\s+"
    r"(?P<topic>it|this|that|the [\w -]+?)\s+by\s+(?P<obj>.+)$"
)
_PROCEDURE_TURNS_OUT = (
    r"^(?:it\s+)?turns out(?:\s+that)?\s+(?:you|we|I|one)\s+(?:need|have|must|had|needed)\s+to\s+"
    r"(?P<obj>.+)$"
)

OUTCOME_RULES: tuple[Rule, ...] = (
    Rule("measured.measured", F, _r(_MEASURED_MEASURED), _measured, ("measured", "actual", "real", "final"), 0.7),
    Rule(
        "measured.got",
        F,
        _r(_MEASURED_GOT),
        _measured,
        ("got", "measured", "hit", "saw", "reached", "ended up", "came in", "took"),
        0.7,
    ),
    Rule("measured.took", F, _r(_MEASURED_TOOK), _took, ("took",), 0.65),
    Rule(
        "measured.instead",
        F,
        _r(_MEASURED_INSTEAD),
        _instead,
        ("instead", "not", "rather", "vs", "versus", "compared", "against", "when you"),
        0.7,
    ),
    Rule("measured.than_predicted", F, _r(_MEASURED_THAN_PREDICTED), _than_predicted, ("than",), 0.65),
    Rule(
        "procedure.what_worked",
        PR,
        _r(_PROCEDURE_WHAT_WORKED),
        _procedure("what worked"),
        ("worked", "fixed it", "did the trick", "solved it", "helped"),
        0.65,
    ),
    Rule(
        "procedure.the_fix",
        PR,
        _r(_PROCEDURE_THE_FIX),
        _procedure("{kind} that worked"),
        ("fix", "solution", "trick", "workaround", "cure"),
        0.65,
    ),
    Rule("procedure.that_worked", PR, _r(_PROCEDURE_THAT_WORKED), _procedure("what worked"), ("worked",), 0.65),
    Rule("procedure.fixed_it", PR, _r(_PROCEDURE_FIXED_IT), _procedure("fix that worked"), ("fixed", "solved"), 0.6),
    Rule(
        "procedure.did_the_trick",
        PR,
        _r(_PROCEDURE_DID_THE_TRICK),
        _procedure("what worked"),
        ("did the trick", "worked", "difference"),
        0.6,
    ),
    Rule(
        "procedure.fixed_by",
        PR,
        _r(_PROCEDURE_FIXED_BY),
        _procedure("fix that worked"),
        ("fixed", "solved", "resolved", "around"),
        0.65,
    ),
    Rule("procedure.turns_out", PR, _r(_PROCEDURE_TURNS_OUT), _procedure("required step"), ("turns out",), 0.6),
)
