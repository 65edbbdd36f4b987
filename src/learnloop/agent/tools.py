"""Executing the learning agent's tool calls: one step = effect, ledger entry, tool message and event, once.

Experience writes commit together with their ledger entry (the store applies them inside the step's
transaction), so a retried package never applies them twice. Knowledge edits are set-this-field operations
and the governed learning writes deduplicate, so re-applying one after a crash between effect and ledger
leaves the same state; re-analysis requests carry a stable id for the handler to run each once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..capture.write import SaveRequest, save
from ..errors import ConflictError, InvalidTransition, LearnloopError, NotFound, PermissionDenied, ValidationError
from ..governance import change_status
from ..llms.base import Message, ToolCall
from ..models import EventAction, LearningType, Origin, Panel, Scope, Source, Status
from ..prompting import estimate_tokens
from ..stores.base import EventDraft
from .gating import check_strings
from .knowledge import ReanalysisRequest
from .records import (
    AgentSession,
    EditExperience,
    ExperienceOp,
    Job,
    SessionGone,
    StepCommit,
    WriteExperience,
    check_path,
)
from .reground import reground
from .schemas import KNOWLEDGE_WRITES, REANALYSIS

if TYPE_CHECKING:
    from .runtime import AgentRuntime

__all__ = ["ACTOR", "StepContext", "call_digest", "run_step"]

ACTOR = "agent:learning"
# Errors the model caused or can work around (bad arguments, unknown ids): it reads them and carries on.
# Anything else (store, embedder, model endpoint) fails the package, which is then retried.
_MODEL_ERRORS = (ValidationError, NotFound, InvalidTransition, ConflictError, PermissionDenied)


@dataclass(frozen=True)
class StepContext:
    runtime: AgentRuntime
    session: AgentSession
    job: Job

    @property
    def learning_scope(self) -> Scope:
        return Scope(tenant=self.session.tenant, user=self.session.user)


@dataclass
class StepPlan:
    """What a tool did (or will do, for experience writes): the model's result and the event to log."""

    result: dict[str, Any]
    summary: str
    action: EventAction = EventAction.AGENT_TOOL
    data: dict[str, Any] = field(default_factory=dict)
    effect: ExperienceOp | None = None


def call_digest(call: ToolCall) -> str:
    body = json.dumps([call.name, call.arguments or call.raw_arguments], sort_keys=True, default=str)
    return hashlib.blake2b(body.encode(), digest_size=12).hexdigest()


def _panel(tool: str) -> Panel:
    return Panel.KNOWLEDGE_UPDATE if tool in (*KNOWLEDGE_WRITES, REANALYSIS) else Panel.LEARNING


def _text(args: Mapping[str, Any], name: str, *, allow_empty: bool = False) -> str:
    value = args.get(name)
    if not isinstance(value, str) or (not allow_empty and not value.strip()):
        raise ValidationError(f"'{name}' is required and must be a{'' if allow_empty else ' non-empty'} string")
    return value


_REFUSED_HINT = "; do not write this"


def _gated(ctx: StepContext, value: Any, field: str) -> None:
    """Every string of what a tool would store, through the content gate (an app's knowledge port too)."""
    check_strings(ctx.runtime.content_gate, value, field, hint=_REFUSED_HINT)


def _short(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "…"


# -- experience ----------------------------------------------------------------------------------------


async def _read_file(ctx: StepContext, args: Mapping[str, Any]) -> StepPlan:
    path = check_path(_text(args, "path"))
    found = await ctx.runtime.store.read_file(ctx.session.workspace, path)
    if found is None:
        return StepPlan(
            {"ok": False, "error": f"{path} does not exist yet"}, f"read {path}: missing", data={"path": path}
        )
    return StepPlan({"ok": True, "path": path, "content": found.content}, f"read {path}", data={"path": path})


async def _list_files(ctx: StepContext, args: Mapping[str, Any]) -> StepPlan:
    files = await ctx.runtime.store.list_files(ctx.session.workspace)
    listing = [{"path": f.path, "chars": f.chars, "updated_at": f.updated_at.isoformat()} for f in files]
    return StepPlan({"ok": True, "files": listing}, f"listed {len(files)} experience files")


def _check_size(ctx: StepContext, text: str) -> None:
    if len(text) > ctx.runtime.config.max_file_chars:
        raise ValidationError(f"experience files are at most {ctx.runtime.config.max_file_chars} characters")


async def _write_file(ctx: StepContext, args: Mapping[str, Any]) -> StepPlan:
    path = check_path(_text(args, "path"))
    content = _text(args, "content", allow_empty=True)
    _check_size(ctx, content)
    _gated(ctx, content, "content")
    effect = WriteExperience(ctx.session.workspace, path, content, ctx.session.session)
    data = {"path": path, "content": _short(content, 2000)}
    return StepPlan({"ok": True}, f"wrote {path}", EventAction.EXPERIENCE_WRITTEN, data, effect)


async def _edit_file(ctx: StepContext, args: Mapping[str, Any]) -> StepPlan:
    path = check_path(_text(args, "path"))
    old_text, new_text = _text(args, "old_text"), _text(args, "new_text", allow_empty=True)
    _check_size(ctx, new_text)
    _gated(ctx, new_text, "new_text")
    effect = EditExperience(ctx.session.workspace, path, old_text, new_text, ctx.session.session)
    data = {"path": path, "old_text": _short(old_text, 1000), "new_text": _short(new_text, 1000)}
    return StepPlan({"ok": True}, f"edited {path}", EventAction.EXPERIENCE_WRITTEN, data, effect)


# -- knowledge -----------------------------------------------------------------------------------------


async def _read_pointer(ctx: StepContext, args: Mapping[str, Any]) -> StepPlan:
    pointer_id = _text(args, "pointer_id")
    found = await ctx.runtime.knowledge.read_pointer(ctx.session.workspace, pointer_id)
    return StepPlan({"ok": True, "pointer": found}, f"read pointer {pointer_id}", data={"pointer_id": pointer_id})


async def _read_page(ctx: StepContext, args: Mapping[str, Any]) -> StepPlan:
    page_id = _text(args, "page_id")
    found = await ctx.runtime.knowledge.read_page(ctx.session.workspace, page_id)
    return StepPlan({"ok": True, "page": found}, f"read page {page_id}", data={"page_id": page_id})


async def _search_knowledge(ctx: StepContext, args: Mapping[str, Any]) -> StepPlan:
    query = _text(args, "query")
    limit = args.get("limit", ctx.runtime.config.search_k)
    if not isinstance(limit, int) or not 1 <= limit <= 20:
        raise ValidationError("'limit' must be an integer from 1 to 20")
    hits = await ctx.runtime.knowledge.search(ctx.session.workspace, query, limit)
    return StepPlan({"ok": True, "results": hits}, f"searched '{_short(query, 80)}': {len(hits)} results")


async def _edit_knowledge(ctx: StepContext, args: Mapping[str, Any], tool: str) -> StepPlan:
    port, workspace = ctx.runtime.knowledge, ctx.session.workspace
    if tool == "update_cross_references":
        item_id, references = _text(args, "pointer_id"), args.get("references")
        if not isinstance(references, list):
            raise ValidationError("'references' must be a list")
        _gated(ctx, references, "references")
        edit = await port.update_cross_references(workspace, item_id, references)
    else:
        key = "pointer_id" if tool == "edit_pointer" else "page_id"
        item_id, field_name = _text(args, key), _text(args, "field")
        content = args.get("new_content")
        _gated(ctx, content, "new_content")  # a string, or cross references (a list of anything)
        if tool == "edit_pointer":
            edit = await port.edit_pointer(workspace, item_id, field_name, content)  # type: ignore[arg-type]
        else:
            edit = await port.edit_page(workspace, item_id, field_name, content)  # type: ignore[arg-type]
    summary = f"edited {edit.target} {edit.id}: {edit.field}" + (" (re-embedded)" if edit.reembedded else "")
    data = {**edit.model_dump(), "before": _short(edit.before, 2000), "after": _short(edit.after, 2000)}
    result = {"ok": True, "target": edit.target, "id": edit.id, "field": edit.field, "reembedded": edit.reembedded}
    return StepPlan(result, summary, EventAction.KNOWLEDGE_EDITED, data)


async def _trigger_reground(ctx: StepContext, args: Mapping[str, Any]) -> StepPlan:
    page_id, instruction = _text(args, "page_id"), _text(args, "instruction")
    workspace = ctx.session.workspace
    await ctx.runtime.knowledge.read_page(workspace, page_id)  # NotFound before anything is asked for
    request = ReanalysisRequest(
        request_id=f"{ctx.job.package_id}:{page_id}",
        tenant=workspace.tenant,
        user=ctx.session.user,
        session=ctx.session.session,
        project=workspace.project,
        owner=workspace.owner,
        page_id=page_id,
        instruction=instruction,
    )
    runtime = ctx.runtime
    handler = runtime.reanalysis
    if handler is not None:
        outcome, status = await handler(request), "requested"
    elif runtime.owns_knowledge and runtime.model is not None:
        # Seed 003 R6 by default: learnloop's own knowledge base is re-analysed and gains pending pointers.
        outcome, status = await reground(request, runtime.documents, runtime.model), "reanalysed"
    else:
        outcome, status = None, "recorded"
    data: dict[str, Any] = {"request_id": request.request_id, "page_id": page_id, "status": status}
    data |= {"instruction": _short(instruction, 1000), "outcome": outcome}
    result = {"ok": True, "status": status, "page_id": page_id, "outcome": outcome}
    return StepPlan(result, f"re-analysis of page {page_id} {status}", EventAction.REANALYSIS_REQUESTED, data)


# -- learnings -----------------------------------------------------------------------------------------


async def _save_learning(ctx: StepContext, args: Mapping[str, Any]) -> StepPlan:
    text, category = _text(args, "learning"), _text(args, "category")
    context = args.get("source_context")
    engine, config = ctx.runtime.engine, ctx.runtime.config
    request = SaveRequest(
        text=text,
        user=ctx.session.user,
        namespace=config.learning_namespace,
        category=category,
        type=LearningType.CORRECTION if category == "correction" else LearningType.FACT,
        status=Status.CANDIDATE,
        confidence=config.learning_confidence,
        origin=Origin.AGENT,
        source=Source(
            session=ctx.session.session,
            interaction=ctx.job.package_id,
            context=context if isinstance(context, str) else None,
            author=ctx.session.user,
        ),
        actor=ACTOR,
    )
    saved = await save(engine, ctx.learning_scope, request)
    learning_id = None if saved.learning is None else saved.learning.id
    result = {"ok": saved.action.value != "refused", "action": saved.action.value, "learning_id": learning_id}
    result["reason"] = saved.reason
    data = {"action": saved.action.value, "learning_id": learning_id, "category": category}
    return StepPlan(result, f"save_learning: {saved.action.value}", data=data)


async def _deprecate_learning(ctx: StepContext, args: Mapping[str, Any]) -> StepPlan:
    learning_id, reason = args.get("learning_id"), _text(args, "reason")
    if not isinstance(learning_id, int) or isinstance(learning_id, bool):
        raise ValidationError("'learning_id' must be an integer")
    engine = ctx.runtime.engine
    try:
        await change_status(engine, ctx.learning_scope, learning_id, Status.DEPRECATED, ACTOR, reason)
    except InvalidTransition as exc:
        if exc.details.get("status") != Status.DEPRECATED.value:
            raise
        # Already deprecated (also what a retried step finds after a crash): the intended state holds.
    data = {"learning_id": learning_id, "reason": _short(reason, 500)}
    return StepPlan(
        {"ok": True, "learning_id": learning_id, "status": "deprecated"}, f"deprecated #{learning_id}", data=data
    )


Executor = Callable[[StepContext, Mapping[str, Any]], Awaitable[StepPlan]]
_EXECUTORS: dict[str, Executor] = {
    "read_file": _read_file,
    "write_file": _write_file,
    "edit_file": _edit_file,
    "list_files": _list_files,
    "read_pointer": _read_pointer,
    "read_page": _read_page,
    "search_knowledge": _search_knowledge,
    "edit_pointer": lambda ctx, args: _edit_knowledge(ctx, args, "edit_pointer"),
    "edit_page": lambda ctx, args: _edit_knowledge(ctx, args, "edit_page"),
    "update_cross_references": lambda ctx, args: _edit_knowledge(ctx, args, "update_cross_references"),
    "trigger_reground": _trigger_reground,
    "save_learning": _save_learning,
    "deprecate_learning": _deprecate_learning,
}


def _failed(error: LearnloopError | str) -> StepPlan:
    message = error if isinstance(error, str) else error.message
    return StepPlan({"ok": False, "error": message}, f"failed: {_short(message, 160)}")


async def _plan(ctx: StepContext, call: ToolCall) -> StepPlan:
    executor = _EXECUTORS.get(call.name)
    if executor is None:
        return _failed(f"unknown tool {call.name!r}; use one of: {', '.join(_EXECUTORS)}")
    if not call.arguments and call.raw_arguments.strip() not in ("", "{}"):
        return _failed("the arguments are not a JSON object; send them again as valid JSON")
    try:
        return await executor(ctx, call.arguments)
    except _MODEL_ERRORS as exc:
        return _failed(exc)


async def run_step(ctx: StepContext, call: ToolCall, step: int) -> tuple[dict[str, Any], Message]:
    """Execute one tool call as step `step` of the package (or replay it if the ledger has it), publish its
    events, and return its result and the tool message now in the agent's conversation."""
    runtime, job = ctx.runtime, ctx.job
    # Effects outside the step's transaction (learnings, knowledge edits, re-analysis) must not recreate a
    # forgotten user's data either; the step's own commit checks again, in its transaction.
    if await runtime.store.get_session(Scope(tenant=job.tenant, user=job.user), job.session) is None:
        raise SessionGone(f"session {job.session!r} no longer exists", session=job.session)
    plan = await _plan(ctx, call)
    limit = runtime.config.tool_result_chars

    def tool_message(result: dict[str, Any]) -> tuple[Message, int]:
        content = json.dumps(result, ensure_ascii=False, default=str)
        if len(content) > limit:
            content = content[:limit] + " …(cut)"
        return Message(role="tool", content=content, tool_call_id=call.id, name=call.name), estimate_tokens(content)

    def commit(plan: StepPlan) -> StepCommit:
        data = {
            "tool": call.name,
            "session": job.session,
            "package": job.package_id,
            "turn": job.turn,
            "step": step,
            "ok": bool(plan.result.get("ok")),
            "summary": plan.summary,
            **plan.data,
        }
        draft = EventDraft(actor=ACTOR, action=plan.action, panel=_panel(call.name), data=data)
        return StepCommit(
            tenant=job.tenant,
            user=job.user,
            session=job.session,
            package_id=job.package_id,
            step=step,
            tool=call.name,
            call_digest=call_digest(call),
            result=plan.result,
            events=[draft],
            effect=plan.effect,
        )

    now = runtime.engine.clock()
    try:
        result, events, _ = await runtime.store.commit_step(commit(plan), tool_message, now)
    except _MODEL_ERRORS as exc:  # the experience effect failed in its transaction (e.g. old_text not found)
        failed = _failed(exc)
        failed.data = {k: v for k, v in plan.data.items() if k == "path"}
        result, events, _ = await runtime.store.commit_step(commit(failed), tool_message, now)
    runtime.engine.bus.publish(events)
    return result, tool_message(result)[0]
