"""One turn of the main agent in three requests (`loop.turn()` over HTTP, seed 001 §7).

`POST /api/turns` retrieves and routes for the user's message and answers with the context block and a turn
id; `POST /api/turns/{id}/tool-calls` records each tool call as it happens; `POST /api/turns/{id}/finish`
hands over the answer and queues the rest (feedback on the previous turn, learning, tool signals, the learning
agent's package, the conversation record) durably. The turn lives in the database: any API process may take
any of the three requests. A retried finish answers as the first did and queues nothing again.

The user's latest message sent again within 30 s, on any channel, is a duplicate (seed 001 §8.6): `POST
/api/turns` answers with `duplicate_of` (the first turn) and `response` (its answer; null while it is still open:
poll `GET /api/turns/{id}`, whose `response` is the first turn's). A duplicate learns nothing and its finish
changes nothing. A tool call sent with a `call_id` the turn holds already is recorded once.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query
from pydantic import AwareDatetime, BaseModel, Field, StringConstraints

from ...models import DEFAULT_NAMESPACE, Limits, RetrievedItem
from ...stores.conversations import ConversationTurn
from ..auth import ApiDep
from ..errors import ERROR_RESPONSES, UserRequired
from ..schemas import IDENT, Ident, LimitsIn, Name, Strict, Tag

__all__ = ["router"]

router = APIRouter(prefix="/api", tags=["turns"], responses=ERROR_RESPONSES)

TurnId = Annotated[str, Path(pattern=IDENT, max_length=128, description="The id POST /api/turns returned")]
UserQuery = Annotated[str | None, Query(pattern=IDENT, max_length=128, description="The end user (app keys)")]


class TurnIn(Strict):
    message: Annotated[str, StringConstraints(min_length=1, max_length=20_000)]
    user: Ident | None = None
    session: Ident = "default"
    channel: Annotated[str, StringConstraints(pattern=f"^$|{IDENT}", max_length=64)] = ""
    namespace: Name = DEFAULT_NAMESPACE
    tags: list[Tag] = Field(default_factory=list, max_length=32)
    limits: LimitsIn = Field(default_factory=LimitsIn)
    at: AwareDatetime | None = None
    id: Ident | None = Field(default=None, description="Your own id for the turn (default: a new one)")


class RoutedToolOut(BaseModel):
    name: str
    server: str
    description: str
    input_schema: dict[str, Any]
    score: float
    why: str


class TurnOut(BaseModel):
    id: str
    status: str
    channel: str
    duplicate_of: str | None = Field(description="The turn this message repeats (seed 001 §8.6), or null")
    response: str | None = Field(description="A duplicate's answer: the first turn's (null while it is open)")
    context: str = Field(description="What to put before the model's call")
    items: list[RetrievedItem]
    tools: list[RoutedToolOut] = Field(description="The tools to show the model for this message, best first")
    experience_files: list[str]


class ToolCallRecordIn(Strict):
    name: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: Any = None
    error: Annotated[str, StringConstraints(max_length=4_000)] | None = None
    ms: float | None = Field(default=None, ge=0, le=86_400_000)
    user: Ident | None = None
    call_id: Ident | None = Field(default=None, description="The model's id for the call: a retry is recorded once")


class ToolCallRecordOut(BaseModel):
    turn: str
    tool_calls: int


class FinishIn(Strict):
    response: Annotated[str, StringConstraints(max_length=64_000)] = ""
    meta: dict[str, Any] = Field(default_factory=dict)
    user: Ident | None = None


class TurnRecordOut(BaseModel):
    id: str
    user: str | None
    session: str
    channel: str
    status: Literal["open", "finished", "done", "abandoned"]
    message: str
    response: str | None
    tool_calls: list[dict[str, Any]]
    tool_calls_json: list[dict[str, Any]] = Field(description="The calls as seed 001 §3.2 keeps them")
    duplicate_of: str | None
    steps: dict[str, Any]
    started_at: datetime
    finished_at: datetime | None
    expires_at: datetime
    feedback_type: str | None
    feedback_score: float | None

    @classmethod
    def of(cls, turn: ConversationTurn) -> TurnRecordOut:
        return cls(
            id=turn.id,
            user=turn.user,
            session=turn.session,
            channel=turn.channel,
            status=turn.status,
            message=turn.message,
            response=turn.response,
            tool_calls=turn.tool_calls,
            tool_calls_json=turn.tool_calls_json,
            duplicate_of=turn.duplicate_of,
            steps=turn.steps,
            started_at=turn.started_at,
            finished_at=turn.finished_at,
            expires_at=turn.expires_at,
            feedback_type=turn.feedback_type,
            feedback_score=turn.feedback_score,
        )


@router.post("/turns", summary="Begin a turn: the context for the model's call, and a turn id")
async def begin_turn(api: ApiDep, body: TurnIn) -> TurnOut:
    """Admin and app keys name the `user` (a turn is always someone's); a user-bound key acts for its user."""
    user = api.acting_for(body.user)
    if user is None:
        raise UserRequired("name the user this turn is for ('user')", field="user")
    turn = await api.loop.turns.begin(
        user,
        body.message,
        session=body.session,
        channel=body.channel,
        namespace=body.namespace,
        # Only what the request sets: a turn's budget is in tokens (seed 001 §8.9), not retrieve_context's characters.
        limits=Limits(**body.limits.model_dump(exclude_unset=True)),
        tags=body.tags,
        at=body.at,
        id=body.id,
    )
    return TurnOut(
        id=turn.id,
        status=turn.status,
        channel=turn.channel,
        duplicate_of=turn.duplicate_of,
        response=turn.cached_response,
        context=turn.context,
        items=turn.retrieval.items if turn.retrieval else [],
        tools=[
            RoutedToolOut(
                name=t.name,
                server=t.server,
                description=t.description,
                input_schema=t.input_schema,
                score=t.score,
                why=t.why,
            )
            for t in turn.tools
        ],
        experience_files=list(turn.experience.files) if turn.experience else [],
    )


@router.post("/turns/{turn_id}/tool-calls", summary="Record one tool call of an open turn")
async def record_tool_call(api: ApiDep, turn_id: TurnId, body: ToolCallRecordIn) -> ToolCallRecordOut:
    """Durable when answered. `error` marks the call failed. 409 when the turn is finished or expired."""
    count = await api.loop.turns.tool_call(
        turn_id,
        body.name,
        body.arguments,
        result=body.result,
        error=body.error,
        ms=body.ms,
        user=api.acting_for(body.user),
        call_id=body.call_id,
    )
    return ToolCallRecordOut(turn=turn_id, tool_calls=count)


@router.post("/turns/{turn_id}/finish", summary="Finish a turn with the answer; its learning runs in the background")
async def finish_turn(api: ApiDep, turn_id: TurnId, body: FinishIn) -> TurnRecordOut:
    """Idempotent: finishing a finished turn returns it unchanged. 409 when it expired unfinished."""
    turn = await api.loop.turns.finish(turn_id, body.response, meta=body.meta, user=api.acting_for(body.user))
    return TurnRecordOut.of(turn)


@router.get("/turns/{turn_id}", summary="One turn: its conversation record and the state of its work")
async def get_turn(api: ApiDep, turn_id: TurnId, user: UserQuery = None) -> TurnRecordOut:
    return TurnRecordOut.of(await api.loop.turns.get(turn_id, user=api.acting_for(user)))


@router.get("/turns", summary="Turns, newest first")
async def list_turns(
    api: ApiDep,
    user: UserQuery = None,
    session: Annotated[str | None, Query(pattern=IDENT, max_length=128)] = None,
    status: Literal["open", "finished", "done", "abandoned"] | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    channel: Annotated[str | None, Query(pattern=IDENT, max_length=64)] = None,
) -> list[TurnRecordOut]:
    turns = await api.loop.turns.list(
        user=api.acting_for(user), session=session, status=(status,) if status else (), limit=limit, channel=channel
    )
    return [TurnRecordOut.of(t) for t in turns]
