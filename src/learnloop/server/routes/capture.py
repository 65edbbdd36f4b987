"""The capture and recall paths over HTTP: the model's `save_learning` call, a turn to observe, retrieval,
and what an app needs to give its model (tool schemas, the Proactive Learning prompt section)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from ...capture.observe import ObserveResult
from ...capture.tool import DEFAULT_TOOL_NAME
from ...errors import ValidationError
from ...models import Filters, Limits, RetrievalResult, RetrievedItem, Status
from ..auth import Api, ApiDep
from ..errors import ERROR_RESPONSES, UserRequired
from ..schemas import NAME, ObserveIn, PromptOut, RetrieveIn, ToolCallIn, ToolCallOut

__all__ = ["router"]

router = APIRouter(prefix="/api", tags=["capture and recall"], responses=ERROR_RESPONSES)

ToolName = Annotated[str, Query(pattern=r"^[A-Za-z0-9_-]{1,64}$", description="The tool's name")]
Namespace = Annotated[str, Query(pattern=NAME, max_length=64)]


def _arguments(raw: dict[str, Any] | str) -> dict[str, Any] | str:
    """Parse a JSON-string argument here, where a pathological one (too deeply nested) becomes a 422."""
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw or "{}")
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ValidationError("tool arguments are not valid JSON", field="arguments") from exc
    return parsed if isinstance(parsed, dict) else raw


def _owner(api: Api, requested: str | None, shared: bool) -> str | None:
    """Whose learnings a write creates. A tenant-wide key must say: a `user`, or `global: true` for learnings
    every user of the tenant is shown; taking silence for "global" put private facts into everyone's context."""
    if shared:
        if requested is not None:
            raise ValidationError("send either 'user' or 'global: true', not both", field="global")
        api.principal.require_tenant_key("writing tenant-global learnings")
        return None
    user = api.acting_for(requested)
    if user is None:
        raise UserRequired(
            "name the user this is for ('user'), or send 'global: true' to write tenant-global learnings",
            field="user",
        )
    return user


@router.post("/tools/save_learning", summary="Route the model's save_learning call")
async def save_learning(api: ApiDep, body: ToolCallIn) -> ToolCallOut:
    """Runs the model's raw tool-call arguments through the governed write (validate, gate, dedupe). A
    category outside the vocabulary is a 422 listing the allowed ones; content the write gate refuses is a
    200 with `ok: false` and `content` telling the model not to try again. Admin and app keys name the
    `user`, or send `global: true`; neither is a 422 `user_required`. A user-bound key saves for its user."""
    user = _owner(api, body.user, body.global_)
    called = await api.loop.handle_tool_call(
        _arguments(body.arguments),
        user=user,
        session=body.session,
        message=body.message,
        interaction=body.interaction,
        namespace=body.namespace,
        errors="raise",
        at=body.at,
    )
    result = called.result
    assert result is not None  # errors="raise": an invalid call raised instead of returning
    return ToolCallOut(
        ok=called.ok,
        action=result.action,
        content=called.content,
        learning_id=called.learning_id,
        learning=result.learning,
        related_id=result.related_id,
        reason=result.reason,
        rule=result.rule,
    )


@router.get("/tools/schema", summary="The save_learning tool definition for the tenant's vocabulary")
async def tool_schema(
    api: ApiDep,
    format: Literal["openai", "anthropic", "mcp", "json"] = "openai",
    namespace: Namespace = "learning",
    name: ToolName = DEFAULT_TOOL_NAME,
) -> dict[str, Any]:
    return await api.loop.tool_schema(format, namespace=namespace, name=name)


@router.get("/prompt/proactive-learning", summary='The "Proactive Learning" system-prompt section')
async def proactive_learning(
    api: ApiDep, namespace: Namespace = "learning", tool: ToolName = DEFAULT_TOOL_NAME
) -> PromptOut:
    text = await api.loop.proactive_learning_prompt(namespace=namespace, tool=tool)
    return PromptOut(namespace=namespace, tool=tool, text=text)


@router.post("/observe", summary="Observe one turn: judge the previous answer, keep what this turn taught")
async def observe(api: ApiDep, body: ObserveIn) -> ObserveResult:
    """Like `save_learning`, admin and app keys name the `user` or send `global: true`."""
    user = _owner(api, body.user, body.global_)
    retrieved: RetrievalResult | None = None
    if body.retrieved_ids:
        # Ids the caller cannot see are ignored, exactly as if they had been deleted meanwhile.
        shown = await api.loop.engine.store.get_many(api.loop.scope(user), body.retrieved_ids)
        items = [
            RetrievedItem(
                learning=learning,
                score=0.0,
                relevance=0.0,
                vector_similarity=None,
                text_rank=None,
                vector_rank=None,
                recency=0.0,
                why="shown to the model (reported by the client)",
            )
            for learning in shown
        ]
        retrieved = RetrievalResult(query="", items=items, block="", tokens=0)
    return await api.loop.observe(
        body.user_message,
        body.assistant_message,
        user=user,
        session=body.session,
        retrieved=retrieved,
        meta=body.meta.model_dump(exclude_none=True),
        namespace=body.namespace,
        tags=body.tags,
        at=body.at,
        channel=body.channel,
    )


@router.post("/retrieve", summary="The learnings to show the model before its next call")
async def retrieve(api: ApiDep, body: RetrieveIn) -> RetrievalResult:
    """`block` goes into the prompt; `items` carry scores and the reasons for each pick. Filters apply
    before ranking; deprecated learnings are never returned."""
    user = api.acting_for(body.user)
    filters = Filters(
        namespace=body.namespace,
        categories=body.categories,
        types=body.types,
        tags=body.tags,
        include_global=body.include_global,
        **({"statuses": [Status(s) for s in body.statuses]} if body.statuses else {}),
    )
    limits = Limits(**body.limits.model_dump())
    return await api.loop.retrieve_context(
        user, body.query, filters=filters, limits=limits, record=body.record, at=body.at, session=body.session
    )
