"""Artifacts from the assistant's answer: the procedure (numbered or bulleted steps) or snippet (a code block) it
gave, condensed into one reusable learning with the question it answered (seed 004's canonical artifact).

They are only *proposed* here. `observe` holds them on the turn's record and saves them when the next message
confirms the answer worked ("That worked, thanks!", or `meta` such as `validation_passed`); an answer nobody
confirms is never learned. Parsing is markdown-it-py's CommonMark parser, so lists and fences are read as a
renderer reads them (nested lists, indented code, fences inside items) rather than by line patterns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ..models import LearningType
from .artifacts import MAX_ARTIFACT_CHARS
from .phrasing import sentences, third_person

__all__ = ["AnswerArtifact", "answer_artifact", "prose_artifact"]

_PARSER = MarkdownIt("commonmark")
_MAX_ANSWER_CHARS = 12_000
_STEP_CHARS = 220
_MAX_CODE_LINES = 25
# "Here's how to fix a stuck sparge:" names what the steps are for.
_INTRO = re.compile(
    r"^(?:(?:ok(?:ay)?|sure|right|great|got it|no problem|good question)[,!.]?\s+)?"
    r"(?:here(?:'s| is| are)\s+(?:how\s+(?:to\s+|you\s+(?:can\s+)?)?|what\s+to\s+do\s+(?:to|about|for)\s+|"
    r"(?:the\s+|some\s+|a few\s+)?(?:steps?|fix|way|procedure|process)\s+(?:to|for)\s+)|"
    r"to\s+(?=\w+\s)|steps?\s+(?:to|for)\s+|how\s+to\s+)(?P<goal>[^:]{4,140}?)\s*[:.]?$",
    re.IGNORECASE,
)


_SECOND_PERSON = re.compile(r"\b(?:your|yours|you)\b", re.IGNORECASE)
_ADDRESSED = {"your": "the user's", "yours": "the user's", "you": "the user"}


@dataclass(frozen=True)
class AnswerArtifact:
    text: str
    type: LearningType
    topic: str
    rule: str
    question: str = ""  # what it answered (provenance), clipped


def answer_artifact(answer: str, question: str) -> AnswerArtifact | None:
    """The answer's procedure or snippet as one learning, or None when it holds neither (prose, one step)."""
    if not answer or ("\n" not in answer and "```" not in answer):
        return None
    tokens = _PARSER.parse(answer[:_MAX_ANSWER_CHARS])
    steps, intro = _first_list(tokens)
    code = _first_code(tokens)
    goal = _goal(intro) or _goal_from_question(question)
    head = f"To {goal}" if _is_goal(goal) else f"For {goal}"
    if len(steps) >= 2:
        body = _condensed(steps, MAX_ARTIFACT_CHARS - len(head) - 40)
        text = f"{head}, steps that worked: {body}"
        if code and code[1] and len(text) + len(code[1]) + 12 <= MAX_ARTIFACT_CHARS and not _inline(code[1], steps):
            text += f" Code: {_one_line(code[1])}"
        return AnswerArtifact(
            text[:MAX_ARTIFACT_CHARS], LearningType.PROCEDURE, goal, "answer.procedure", _asked(question)
        )
    if code is not None and code[1].strip():
        language, body = code
        room = MAX_ARTIFACT_CHARS - len(head) - len(language) - 40
        snippet = _clipped_code(body, room)
        text = f"{head}, code that worked:\n```{language}\n{snippet}\n```"
        return AnswerArtifact(text, LearningType.SNIPPET, goal, "answer.snippet", _asked(question))
    return None


_PROSE_CHARS = (80, 1500)


def prose_artifact(answer: str, question: str) -> AnswerArtifact | None:
    """A prose answer (no steps, no code) as a pattern to condense: held only when a model is configured, which
    rewrites it into one learning when the user confirms it worked; the rules never store prose as it is."""
    text = " ".join(answer.split())
    if not _PROSE_CHARS[0] <= len(text) <= _PROSE_CHARS[1] or len(list(sentences(text))) < 2:
        return None
    goal = _goal_from_question(question)
    body = f"For {goal}, what worked: {text}"[:MAX_ARTIFACT_CHARS]
    return AnswerArtifact(body, LearningType.PATTERN, goal, "answer.pattern", _asked(question))


def _asked(question: str) -> str:
    return " ".join(question.split())[:200]


def _first_list(tokens: list[Token]) -> tuple[list[str], str]:
    """The first top-level list's items (each item's own text, code inline) and the paragraph before it."""
    intro, depth, in_list = "", 0, False
    steps: list[str] = []
    item: list[str] = []
    for index, token in enumerate(tokens):
        if token.type in ("ordered_list_open", "bullet_list_open"):
            depth += 1
            if depth == 1 and not in_list:
                in_list = True
                before = [t for t in tokens[:index] if t.type == "inline"]
                intro = before[-1].content if before else ""
            continue
        if token.type in ("ordered_list_close", "bullet_list_close"):
            depth -= 1
            if depth == 0 and in_list:
                break
            continue
        if not in_list:
            continue
        if token.type == "list_item_open" and depth == 1:
            item = []
        elif token.type == "inline" and token.content.strip():
            item.append(token.content.strip())
        elif token.type in ("fence", "code_block") and token.content.strip():
            item.append(f"`{_one_line(token.content)}`")
        elif token.type == "list_item_close" and depth == 1:
            joined = " ".join(item).strip()
            if joined:
                steps.append(joined)
    return steps, intro


def _first_code(tokens: list[Token]) -> tuple[str, str] | None:
    for token in tokens:
        if token.type in ("fence", "code_block") and token.content.strip():
            return (token.info.split()[0] if token.info.strip() else ""), token.content.rstrip()
    return None


def _goal(intro: str) -> str:
    for sentence in reversed(list(sentences(intro))[-2:]):
        match = _INTRO.match(sentence.strip())
        if match:  # the assistant's "your" is the user's
            return _SECOND_PERSON.sub(lambda m: _ADDRESSED[m.group(0).casefold()], match.group("goal").strip(" .:"))
    return ""


def _is_goal(goal: str) -> bool:
    first = goal.split()[0].casefold() if goal.split() else ""
    return first.isalpha() and not first.endswith("ing") and first not in ("a", "an", "the", "your", "my", "this")


_QUESTION_LEAD = re.compile(
    r"^(?:(?:hi|hey|hello|ok|so|quick question)[,!.]?\s+)*(?:how (?:do|can|should|would) (?:i|we|you)\s+|"
    r"what(?:'s| is| are)? (?:the best way|a good way) to\s+|can you (?:help me |tell me how to |show me how to )?|"
    r"could you (?:help me )?|i need to\s+|i want to\s+|help me\s+)",
    re.IGNORECASE,
)


def _goal_from_question(question: str) -> str:
    """A goal ("fix a stuck sparge") from the question, else the question itself in quotes."""
    first = next(iter(sentences(question)), "").strip()
    lead = _QUESTION_LEAD.match(first)
    if lead and len(first) - lead.end() >= 6:
        return third_person(first[lead.end() :].rstrip(" ?!.")[:140])
    clipped = " ".join(question.split())[:160].rstrip(" ?!.")
    return f'"{clipped}"' if clipped else "this task"


def _condensed(steps: list[str], room: int) -> str:
    """Numbered steps in one line; each step's first sentence when the whole would not fit."""
    full = [_plain(step)[:_STEP_CHARS] for step in steps]
    joined = _numbered(full)
    if len(joined) <= room:
        return joined
    short = [next(iter(sentences(step)), step)[:140] for step in full]
    kept: list[str] = []
    for step in short:
        if len(_numbered([*kept, step])) > room - 2:
            break
        kept.append(step)
    return _numbered(kept) + (" …" if len(kept) < len(short) else "")


def _numbered(steps: list[str]) -> str:
    return " ".join(f"{n}. {step.rstrip('.;')}." for n, step in enumerate(steps, start=1))


def _plain(text: str) -> str:
    text = re.sub(r"\*\*(.+?)\*\*|__(.+?)__", lambda m: m.group(1) or m.group(2), text)
    return " ".join(text.split())


def _one_line(code: str) -> str:
    lines = [line.strip() for line in code.strip().splitlines() if line.strip()]
    return "; ".join(lines)[:300]


def _inline(code: str, steps: list[str]) -> bool:
    return _one_line(code)[:40] in " ".join(steps)


def _clipped_code(code: str, room: int) -> str:
    lines = code.strip("\n").splitlines()[:_MAX_CODE_LINES]
    kept: list[str] = []
    for line in lines:
        if sum(len(k) + 1 for k in kept) + len(line) > room:
            break
        kept.append(line.rstrip())
    return "\n".join(kept) if kept else code.strip()[:room]
