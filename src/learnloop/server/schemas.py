"""Request and response bodies of the HTTP API.

Requests are strict (unknown fields rejected, bounded sizes, no NaN), so malformed input is a typed 422
before it reaches the engine. Responses reuse learnloop's own models.
"""

from __future__ import annotations

import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StringConstraints, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from ..capture.write import SaveAction
from ..models import _IDENT, _NAME, DEFAULT_NAMESPACE, Learning, LearningType, Resolution
from ..textcheck import first_problem

__all__ = [
    "IDENT",
    "MAX_INT",
    "NAME",
    "CategoryIn",
    "DeletedOut",
    "DeprecateIn",
    "Ident",
    "LearningUpdate",
    "LimitsIn",
    "MeOut",
    "Name",
    "ObserveIn",
    "ObserveMeta",
    "PromptOut",
    "PurgeIn",
    "PurgeOut",
    "ReasonIn",
    "ResolveIn",
    "RestoreIn",
    "RetrieveIn",
    "Strict",
    "ToolCallIn",
    "ToolCallOut",
    "VocabularyIn",
]

# The rules `learnloop.models.check_identifier` and namespace names follow, as schema patterns: one definition.
IDENT = _IDENT.pattern
NAME = _NAME.pattern
# The largest integer any request may carry: stored integers are SQLite's 64-bit ones (a larger value raised
# OverflowError deep in the store), and 2**53 is also the largest a JavaScript client holds exactly.
MAX_INT = 2**53
Ident = Annotated[str, StringConstraints(pattern=IDENT, max_length=128)]
Name = Annotated[str, StringConstraints(pattern=NAME, max_length=64)]
Text = Annotated[str, StringConstraints(min_length=1, max_length=4000)]
Reason = Annotated[str, StringConstraints(max_length=500)]
Short = Annotated[str, StringConstraints(max_length=200)]
Tag = Annotated[str, StringConstraints(max_length=64)]


def _is_bool(annotation: Any) -> bool:
    """`bool` or `bool | None`: the fields whose values must be JSON booleans."""
    if annotation is bool:
        return True
    if get_origin(annotation) in (Union, types.UnionType):
        return all(arg is bool or arg is type(None) for arg in get_args(annotation)) and bool in get_args(annotation)
    return False


class Strict(BaseModel):
    """Every request body: unknown fields rejected, no NaN, every string inside it valid text (no lone
    surrogates, NUL or control characters: `learnloop.textcheck`), and booleans only as JSON booleans
    (pydantic's lax mode would read `"yes"` or `1` as true)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _wire_checks(cls, value: Any, info: ValidationInfo) -> Any:
        name = info.field_name or "value"
        field = cls.model_fields.get(name)
        if field is not None and _is_bool(field.annotation) and not (value is None or isinstance(value, bool)):
            raise PydanticCustomError("bool_type", "must be a JSON boolean (true or false)")
        found = first_problem(value, "")
        if found is not None:
            where, problem = found
            said = f"{where} {problem}" if where else problem
            raise PydanticCustomError("invalid_text", "{problem}", {"problem": said})
        return value


_AT = 'When it was said (ISO 8601 with a zone; default now): "yesterday" in the text is resolved against it'
_GLOBAL = "Write tenant-global learnings, shown to every user (admin and app keys, instead of `user`)"


class LearningUpdate(Strict):
    """Fields to change; omitted fields stay. A new text is re-embedded and bumps the version."""

    text: Text | None = None
    category: Name | None = None
    topic: Short | None = None
    tags: list[Tag] | None = Field(default=None, max_length=32)
    type: LearningType | None = None
    reason: Reason | None = None


class ReasonIn(Strict):
    reason: Reason | None = None


class DeprecateIn(Strict):
    reason: Reason = "deprecated by a person"


class RestoreIn(Strict):
    status: Literal["candidate", "verified"] = "candidate"
    reason: Reason | None = None


class ResolveIn(Strict):
    resolution: Resolution
    text: Text | None = Field(default=None, description="With `merge`: the merged text (default: both stated)")
    reason: Reason | None = None


class DeletedOut(BaseModel):
    id: int
    deleted: bool = True


class ToolCallIn(Strict):
    """A model's `save_learning` call: its raw arguments (object or JSON string) and who it was for.

    With an admin or app key, name the `user` the learning is for, or send `"global": true` to save a
    tenant-global learning (recalled for every user); naming neither is a 422 `user_required`."""

    arguments: dict[str, Any] | Annotated[str, StringConstraints(max_length=20_000)] = Field(
        examples=[{"learning": "Grainfather Gen 1 boil-off rate is ~3.5 L/hr", "category": "fact"}]
    )
    user: Ident | None = None
    global_: bool = Field(default=False, alias="global", description=_GLOBAL)
    session: Short | None = None
    message: Short | None = None
    interaction: Short | None = None
    namespace: Name = DEFAULT_NAMESPACE
    at: AwareDatetime | None = Field(default=None, description=_AT)


class ToolCallOut(BaseModel):
    ok: bool
    action: SaveAction
    content: str = Field(description="What to send back to the model as the tool result")
    learning_id: int | None = None
    learning: Learning | None = None
    related_id: int | None = None
    reason: str
    rule: str | None = None


class ObserveMeta(Strict):
    message_id: Short | None = None
    interaction_id: Short | None = None
    validation_passed: bool | None = None
    feedback: Short | None = None
    feedback_score: float | None = Field(default=None, ge=-1.0, le=1.0)


class ObserveIn(Strict):
    """One turn. `retrieved_ids` are the learnings shown to the model for this turn (from /api/retrieve), so
    feedback on the next turn reaches them and recalled text is not learned again. What it learns is
    stored for `user`; admin and app keys name the user or send `"global": true` (else 422 `user_required`)."""

    user_message: Annotated[str, StringConstraints(max_length=20_000)]
    assistant_message: Annotated[str, StringConstraints(max_length=50_000)] = ""
    user: Ident | None = None
    session: Short = "default"
    retrieved_ids: list[Annotated[int, Field(ge=1, le=MAX_INT)]] = Field(default_factory=list, max_length=100)
    meta: ObserveMeta = Field(default_factory=ObserveMeta)
    namespace: Name = DEFAULT_NAMESPACE
    global_: bool = Field(default=False, alias="global", description=_GLOBAL)
    at: AwareDatetime | None = Field(default=None, description=_AT)
    channel: Annotated[str, StringConstraints(pattern=f"^$|{IDENT}", max_length=64)] = Field(
        default="", description="Where the message came from (web, telegram, …): kept on the turn's record"
    )
    tags: list[Tag] = Field(
        default_factory=list,
        max_length=32,
        description="The run's scope: every learning this turn produces carries them",
    )


class LimitsIn(Strict):
    top_k: int = Field(default=6, ge=1, le=100)
    max_items: int = Field(default=6, ge=1, le=100)
    max_chars: int = Field(default=1500, ge=50, le=100_000)
    max_tokens: int | None = Field(default=None, ge=10, le=100_000)
    min_relevance: float = Field(default=0.0, ge=0.0, le=1.0)


class RetrieveIn(Strict):
    query: Annotated[str, StringConstraints(min_length=1, max_length=4000)]
    user: Ident | None = None
    namespace: Name = DEFAULT_NAMESPACE
    categories: list[Name] | None = Field(default=None, max_length=64)
    types: list[LearningType] | None = Field(default=None, max_length=8)
    statuses: list[Literal["candidate", "verified"]] | None = Field(default=None, min_length=1, max_length=2)
    tags: list[Tag] | None = Field(default=None, max_length=32)
    include_global: bool = True
    limits: LimitsIn = Field(default_factory=LimitsIn)
    record: bool = Field(default=True, description="Record hits and streaks of what is returned")
    at: AwareDatetime | None = Field(
        default=None, description="When the question is asked (default now): the anchor of 'last May' in it"
    )
    session: Short | None = Field(
        default=None, description="The conversation (as given to observe): its earlier corrections come first"
    )


class CategoryIn(Strict):
    name: Name
    description: Annotated[str, StringConstraints(min_length=1, max_length=500)]
    examples: list[Annotated[str, StringConstraints(max_length=300)]] = Field(default_factory=list, max_length=5)


class VocabularyIn(Strict):
    namespace: Name = DEFAULT_NAMESPACE
    categories: list[CategoryIn] = Field(min_length=1, max_length=64)


class PurgeIn(Strict):
    older_than_days: float = Field(default=30.0, ge=0.0, le=36_500.0)
    user: Ident | None = None


class PurgeOut(BaseModel):
    purged: list[int]


class PromptOut(BaseModel):
    namespace: str
    tool: str
    text: str


class MeOut(BaseModel):
    tenant: str
    role: str
    user: str | None
    key_id: str
