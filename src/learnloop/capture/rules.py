"""The rule table of the turn observer: which user sentences are teaching moments, and what statement each makes.

A `Rule` (see `turn`) is data: an id, the learning type, a compiled pattern run on one sentence of the user's
message, a render function that turns the match into a third-person statement (or declines), the trigger
words that let the observer skip it cheaply, and a confidence. `DEFAULT_RULES` is this module's stated
preferences and environment facts followed by `outcomes.OUTCOME_RULES` (measured-versus-predicted numbers,
procedures that worked). Corrections are the observer's own step: a correction lead-in ("No, …"), then the
`correctable` rules or a subject/value statement on the rest of the sentence.

Renderers decline whenever the statement would not be reusable on its own: a pronoun where the subject should
be ("I love that!"), a vague object ("I have a question"), a measurement with nothing to compare it to.
"""

from __future__ import annotations

import re

from ..models import LearningType
from .outcomes import OUTCOME_RULES
from .phrasing import (
    PRONOUN_HEADS,
    gerund_object,
    is_specific,
    third_person,
    user_clause,
)
from .setup_languages import SETUP_IN_OTHER_LANGUAGES
from .turn import EVENT_NOUNS, PERSONAL_NOUNS, Draft, Rule, TurnView, clean_object, content_terms, hedged, one_off

__all__ = ["ACTION_VERBS", "DEFAULT_RULES"]


def _r(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# A sentence may open on the channel it is about, without a comma ("On WhatsApp I prefer …": `channel_scope`).
_CHANNEL_LEAD = (
    r"^(?:on|in|over|via)\s+(?:this\s+(?:chat|app|channel)|the\s+(?:web\s+)?(?:chat|app)|telegram|whatsapp)\s+"
)
_CLAUSE = rf"(?:{_CHANNEL_LEAD}|^|[,;:]\s*|\b(?:and|but|so|because|since|though|also|btw|fyi)\s+)"
# Up to the end of the clause; a comma between digits ("4,500") is part of a number, not a clause break.
_OBJECT_TEXT = r"(?:[^,;!?]|(?<=\d),(?=\d))+"
_OBJ = rf"(?P<obj>{_OBJECT_TEXT})"

# ---- preferences -------------------------------------------------------------------------------------------

_PREFER_VERBS = {"prefer": "prefers", "like": "likes", "love": "loves", "enjoy": "enjoys", "hate": "dislikes",
                 "dislike": "dislikes", "can't stand": "dislikes", "don't like": "dislikes",
                 "do not like": "dislikes", "don't enjoy": "dislikes", "'d prefer": "prefers",
                 "would prefer": "prefers"}  # fmt: skip


def _prefer(match: re.Match[str], turn: TurnView) -> Draft | None:
    obj = clean_object(match.group("obj"))
    if obj is None or hedged(match):
        return None
    verb = _PREFER_VERBS[" ".join(match.group("verb").casefold().split())]
    obj = _TRAILING_ALSO.sub("", obj)
    if verb == "prefers":
        obj = gerund_object(obj)
    elif obj.split()[0].casefold() in ("the", "all"):
        return None  # "I love the colors!" reacts to something shown in the chat, not a standing taste
    obj = re.sub(r"^if (?:you|the assistant)\b", "that the assistant", third_person(obj))
    return Draft(f"User {verb} {obj}", topic=" ".join(content_terms(obj)[:3]))


_TRAILING_ALSO = re.compile(r"\s+(?:too|as well|also)$", re.IGNORECASE)


def _rather(match: re.Match[str], turn: TurnView) -> Draft | None:
    obj = clean_object(match.group("obj"))
    if obj is None or hedged(match):
        return None
    return Draft(f"User would rather {third_person(obj)}", topic=" ".join(content_terms(obj)[:3]))


def _favorite(match: re.Match[str], turn: TurnView) -> Draft | None:
    obj = clean_object(match.group("obj"))
    noun = match.group("noun").strip()
    if obj is None or noun.split()[0].casefold() in PRONOUN_HEADS:
        return None
    return Draft(f"User's {match.group('fav').casefold()} {noun} is {third_person(obj)}", topic=noun)


#: Verbs that make "always …" / "never …" an instruction about the assistant's answers, not life advice.
ACTION_VERBS = frozenset(
    "use show give include format write round convert express answer reply respond explain cite ask confirm add "
    "put list sort report return mention suggest recommend assume check label quote keep start end split "
    "limit default scale sign call filter group display".split()
)
_EVER = re.compile(r"\b(?:again|anymore|any more|ever)\b", re.IGNORECASE)
_IDIOMS = re.compile(r"^(?:give up|forget|mind|worry|stop believing|look back)\b", re.IGNORECASE)


def _standing_order(match: re.Match[str], turn: TurnView) -> Draft | None:
    obj = clean_object(match.group("obj"), max_words=20)
    if obj is None or _IDIOMS.match(obj):
        return None
    adverb = " ".join((match.group("adv") or "").casefold().split())
    please = bool(match.group("please") or match.group("please2"))
    first = obj.split()[0].casefold()
    # "Please help me with X" is a request for this answer; only a standing order outlives the turn.
    if not match.group("lead"):
        if adverb in ("always", "never"):
            if not please and first not in ACTION_VERBS:
                return None
        elif not (adverb == "stop" and please) and not (adverb and _EVER.search(obj)):
            return None
    topic = " ".join(content_terms(obj)[:3])
    if adverb in ("don't", "do not"):
        return Draft(f"User does not want the assistant to {third_person(obj)}", topic)
    if not adverb and (first in PRONOUN_HEADS or first in ("i", "we", "the", "a", "an", "all", "every")):
        clause = user_clause(obj)
        return Draft(clause if clause else f"User asked that {third_person(obj)}", topic)
    words = f"{adverb} {obj}".strip()
    return Draft(f"User wants the assistant to {third_person(words)}", topic)


_TOO_EXCLUDED = frozenset(
    "good cute kind nice late early bad soon busy tired funny happy sad excited real true adorable beautiful "
    "young old".split()
)


def _too(match: re.Match[str], turn: TurnView) -> Draft | None:
    noun, adjective = match.group("noun"), match.group("adj").casefold()
    det = match.group("det").casefold()
    if adjective in _TOO_EXCLUDED or noun.split()[-1].casefold() in PERSONAL_NOUNS | PRONOUN_HEADS or one_off(match):
        return None
    owner = {"my": "their ", "our": "their ", "your": "the assistant's "}.get(det, "the ")
    return Draft(f"User found {owner}{noun} too {adjective}", topic=noun)


# ---- environment facts -------------------------------------------------------------------------------------

#: Verbs whose object must name something specific ("I have a 30 L kettle", not "I have a question").
_STRICT_VERBS = frozenset(
    ("have", "'ve got", "have got", "own", "keep", "run", "running", "brew", "brewing", "target", "ship", "on")
)


def _first_person(match: re.Match[str], turn: TurnView) -> Draft | None:
    obj = clean_object(match.group("obj"))
    if obj is None or hedged(match) or one_off(match) or obj.split()[0].casefold() in ("my", "our"):
        return None
    if EVENT_NOUNS & {w.casefold().strip(".,") for w in obj.split()[:3]}:
        return None
    verb = " ".join(match.group("verb").casefold().split())
    if not is_specific(obj) and (verb in _STRICT_VERBS or len(content_terms(obj)) < 2):
        return None
    clause = user_clause(match.group("clause").strip(" ,.;:!"))
    return Draft(clause, topic=" ".join(content_terms(obj)[:3])) if clause else None


_COPULAS = frozenset({"is", "are"})
_INTENSIFIERS = frozenset("so really very such super pretty kinda quite too always".split())


def _possessive(match: re.Match[str], turn: TurnView) -> Draft | None:
    noun, verb = match.group("noun").strip(), match.group("verb").casefold()
    obj = clean_object(match.group("obj"))
    if obj is None or hedged(match) or one_off(match) or noun.split()[-1].casefold() in PERSONAL_NOUNS | PRONOUN_HEADS:
        return None
    first = obj.split()[0].casefold()
    # "has been …" / "has seen …" is a story about the past, held to the same bar as "is".
    perfect = verb == "has" and (first == "been" or first.endswith(("ed", "en")))
    if (verb in _COPULAS or perfect) and (not is_specific(obj) or first in _INTENSIFIERS):
        return None
    return Draft(f"User's {noun} {verb} {third_person(obj)}", topic=noun)


P, F = LearningType.PREFERENCE, LearningType.FACT
_ADV = r"(?:\s+(?:really|generally|usually|much|strongly|definitely|always|also|still|actually|personally))*"
_TOO_DEGREE = (
    r"(?:way\s+|a bit\s+|a little(?: bit)?\s+|slightly\s+|much\s+|far\s+|rather\s+|kind of\s+|kinda\s+|just\s+)?"
)

# Patterns run on one sentence of the user's message (case-insensitive).
_PREFERENCE_PREFER = (
    rf"{_CLAUSE}I{_ADV}\s*(?P<verb>prefer|like|love|enjoy|hate|dislike|can't stand|don't like|do not like|"
    rf"don't enjoy|'d prefer|would prefer)\s+{_OBJ}"
)
_PREFERENCE_RATHER = rf"{_CLAUSE}I(?:'d| would)(?:\s+much)?\s+rather\s+{_OBJ}"
_PREFERENCE_FAVORITE = rf"\bmy\s+(?P<fav>favou?rite|preferred|go-to)\s+(?P<noun>[\w -]{{1,30}}?)\s+(?:is|are)\s+{_OBJ}"
_PREFERENCE_STANDING_ORDER = (
    r"^(?P<please>please,?\s+)?(?:(?P<lead>from now on|going forward|in (?:the )?future|next time|"
    r"for future reference),?\s+)?(?P<please2>please\s+)?(?P<adv>always|never|don't|do not|stop)?\s*"
    r"(?P<obj>[^;!?]+)$"
)
_PREFERENCE_TOO = (
    r"\b(?P<det>the|that|this|my|our|your|these|those)\s+(?P<noun>(?:[\w-]+\s){0,3}?[\w-]+)\s+(?:was|is|were|"
    rf"are|came out|tasted|turned out|ended up|felt|seems|seemed|looks|looked|got)\s+{_TOO_DEGREE}too\s+"
    r"(?P<adj>[\w-]+)"
)
_ENVIRONMENT_FIRST_PERSON = (
    rf"{_CLAUSE}(?P<clause>(?:I|we)(?:'re|'m|\s+are|\s+am)?{_ADV}(?:\s+|(?='))(?P<verb>use|using|run|running|"
    r"'ve got|have got|have|own|brew|brewing|deploy|deploying|work with|store|host|keep|ship|target|track|measure|"
    r"report|bill|sell|maintain|develop|code|program|test|shoot with|shoot on|cook on|cook with|print with|"
    r"print on|ride|fly|farm|grow|on)\s+"
    rf"(?P<obj>{_OBJECT_TEXT}))"
)
_ENVIRONMENT_POSSESSIVE = (
    rf"{_CLAUSE}(?:my|our)\s+(?P<noun>(?:[\w./-]+\s){{0,3}}?[\w./-]+)\s+(?P<verb>is|are|returns|uses|"
    r"runs on|runs|has|holds|needs|requires|takes|supports|expects|stores|boils off|loses|averages|defaults to|"
    r"only accepts|accepts|caps|limits|starts|begins|ends|refreshes|syncs|updates|lives in)\s+"
    rf"(?P<obj>{_OBJECT_TEXT})"
)

DEFAULT_RULES: tuple[Rule, ...] = (
    Rule(
        "preference.prefer",
        P,
        _r(_PREFERENCE_PREFER),
        _prefer,
        ("prefer", "like", "love", "enjoy", "hate", "dislike", "can't stand"),
        0.65,
        True,
    ),
    Rule("preference.rather", P, _r(_PREFERENCE_RATHER), _rather, ("rather",), 0.65, True),
    Rule(
        "preference.favorite",
        P,
        _r(_PREFERENCE_FAVORITE),
        _favorite,
        ("favorite", "favourite", "preferred", "go-to"),
        0.6,
        True,
    ),
    Rule(
        "preference.standing_order",
        P,
        _r(_PREFERENCE_STANDING_ORDER),
        _standing_order,
        ("always", "never", "please", "don't", "do not", "stop", "from now on", "going forward", "future", "next time"),
        0.7,
        True,
    ),
    Rule("preference.too", P, _r(_PREFERENCE_TOO), _too, ("too ",), 0.6),
    Rule(
        "environment.first_person",
        F,
        _r(_ENVIRONMENT_FIRST_PERSON),
        _first_person,
        ("i ", "we ", "we'", "i'", "i'm", "we're"),
        0.6,
        True,
    ),
    Rule("environment.possessive", F, _r(_ENVIRONMENT_POSSESSIVE), _possessive, ("my ", "our "), 0.6, True),
    *OUTCOME_RULES,
    SETUP_IN_OTHER_LANGUAGES,
)
