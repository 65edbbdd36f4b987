"""A measured value against the assistant's previous prediction, when the message names no subject:
"you said 1.050 but I measured 1.046 after cooling", "Got 390 shots before it died, way under the 520 you quoted".

The prediction is a number the previous answer stated; the measurement is a new number of the same kind in the
same sentence, which says it observed something or refers to what the assistant said. The subject is the question
the prediction answered, kept with the numbers: 'Measured 1.046 where the assistant predicted 1.050 (asked: "what
OG should I expect…")'. Questions, hypotheticals and plans ("let's do 25 L instead of 20") are not measurements.
"""

from __future__ import annotations

import re

from .phrasing import Value, parse_values, sentences

__all__ = ["measured_against_answer"]

_OBSERVED = re.compile(
    r"\b(?:measured|got|getting|tested|weighed|actual(?:ly)?|came (?:in|out)|finished|ended(?: up)?|ran for|took|"
    r"says|said|showed|shows|reads|reading|clocked|hit|seeing|saw|only|turned out|in reality|real(?:ly)?|result|"
    r"gemessen|gedauert|dauerte|tatsächlich|ergab|medí|tardó|tardé|resultó|salió|mesuré|a pris|a duré|misurato|"
    r"durato|ho ottenuto|medi|demorou|deu|gemeten|duurde|zmierzyłem|zmierzyłam|trwało|wyszło|測った|かかった)\b",
    re.IGNORECASE,
)
_REFERS = re.compile(
    r"\b(?:you|your|u)\b[^.!?]{0,30}\b(?:said|estimated|predicted|guessed|quoted|expected|estimate|guess|prediction|"
    r"figure|number|calc(?:ulation)?|forecast|told)\b|\b(?:vs\.?|versus|not the|rather than the|instead of the)\b|"
    r"du hattest|geschätzt|dijiste|estimaste|calculaste|tu avais|vous aviez|hai detto|avevi|você disse|"
    r"je zei|mówiłeś|mówiłaś|言っていた",
    re.IGNORECASE,
)
_PLAN = re.compile(r"\b(?:let's|let us|what if|should i|could i|can i|would|if i|if we|plan|planning|want to)\b", re.I)


def measured_against_answer(message: str, answer_numbers: str, question: str) -> str | None:
    if not answer_numbers:
        return None
    predicted_pool = parse_values(answer_numbers)
    asked = {v.number for v in parse_values(question)}
    for sentence in sentences(message[:2000]):
        if sentence.rstrip().endswith("?") or _PLAN.search(sentence):
            continue
        if not (_OBSERVED.search(sentence) or _REFERS.search(sentence)):
            continue
        values = parse_values(sentence)
        pair = _pair(values, predicted_pool, asked)
        if pair is None:
            continue
        observed, predicted = pair
        topic = " ".join(question.split())[:120].rstrip(" ?!.")
        where = f' (asked: "{topic}")' if topic else ""
        return f"Measured {observed.text} where the assistant predicted {predicted.text}{where}"
    return None


def _pair(values: list[Value], pool: list[Value], asked: set[float | None]) -> tuple[Value, Value] | None:
    said = {v.number for v in pool if v.number is not None}
    predicted = next((v for v in values if v.number in said), None)
    if predicted is None:
        return None
    for value in values:
        if value is predicted or value.number is None or value.number in said or value.number in asked:
            continue
        if value.compatible(predicted) or not (value.unit and predicted.unit):
            return value, predicted
    return None
