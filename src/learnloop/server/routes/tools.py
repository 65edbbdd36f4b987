"""Tool intelligence over HTTP (`loop.tools`): the catalog, routing, usage signals, templates, recovery
patterns, statistics, learned evidence, insights, privacy and feedback.

Each request works on the one `ToolIntelligence` of the key's tenant, so the correlation window a
`POST /api/tools/context` opens is there when `POST /api/tools/calls` records the call. The catalog and the
cold-start templates are the tenant's: changing them needs an admin or app key. Signals, routing and
knowledge act for a user; a user-bound key acts only for its own user, and a session window another user
opened is as unknown to it as a session that does not exist.

(`/api/tools/save_learning` and `/api/tools/schema`, the save_learning tool of the capture path, live in
`routes/capture.py`.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from fastapi import APIRouter, Path, Query, Response

from ...errors import NotFound, ValidationError
from ...tools import ToolIntelligence
from ...tools.models import (
    AggregationReport,
    Insight,
    QueryTemplate,
    RecoveryPattern,
    RegisterReport,
    RoutedTool,
    SeedTemplate,
    SignalKind,
    SignalReceipt,
    ToolDef,
    ToolInfo,
    ToolSignal,
    ToolStat,
)
from ..auth import Api, ApiDep
from ..errors import ERROR_RESPONSES
from ..keys import Role
from ..schemas import IDENT
from ..tool_schemas import (
    TOOL_NAME,
    BestTemplateOut,
    CallIn,
    ContextIn,
    FeedbackIn,
    FeedbackOut,
    ListIn,
    PrivacyIn,
    PrivacyOut,
    RegisterIn,
    RemovedOut,
    RouteIn,
    SearchIn,
    SearchRecordIn,
    SeededOut,
    SeedIn,
    SignalOut,
    SuggestIn,
    SuggestionOut,
    ToolDetail,
    ToolEvidenceOut,
)
from ..tool_views import evidence_for

__all__ = ["router"]

router = APIRouter(prefix="/api/tools", tags=["tools"], responses=ERROR_RESPONSES)

# `:path`, because tool names may contain "/" (only whitespace and control characters are refused).
ToolPath = Annotated[str, Path(pattern=TOOL_NAME, max_length=128, description="The tool's name")]
ToolFilter = Annotated[str | None, Query(pattern=TOOL_NAME, max_length=128, description="Only this tool")]
UserQuery = Annotated[
    str | None,
    Query(pattern=IDENT, max_length=128, description="Only this user's (a user-bound key: only its own user)"),
]
UserPath = Annotated[str, Path(pattern=IDENT, max_length=128)]
Intent = Annotated[str | None, Query(max_length=200)]


def _tools(api: Api) -> ToolIntelligence:
    return api.loop.tools


def _reader(api: Api, user: str | None) -> str | None:
    """The user a read is scoped to: the one asked for (a user-bound key: only itself), else the key's."""
    return api.acting_for(user) if user is not None else api.scope_user


def _session(api: Api, session: str) -> None:
    """A user-bound key may not touch a window another user (or a tenant key for nobody) opened: replacing it
    would cut that user's calls off from their context, reading it would show what they asked.

    The owner is known only in memory, from the open correlation window of this process's `loop.tools`
    (`ToolIntelligence.session_user`); nothing about it is persisted. Once the window is gone — the process
    restarted, the window was evicted (`ToolConfig.max_sessions`, least recently used first), or the request
    reached another worker — the session id is unknown here and a user-bound key may open a new window under
    it. That window is its own: the old one's query is gone with it, and the stored signals of a session are
    kept per user (a recovery pattern is only ever built from one user's calls), so no data crosses users."""
    if api.principal.role is not Role.USER:
        return
    open_, owner = _tools(api).session_user(session)
    if open_ and owner != api.principal.user:
        raise NotFound(f"session {session!r} not found", session=session)


async def _catalog_names(api: Api) -> set[str]:
    return {t.name for t in await _tools(api).catalog()}


async def _known(api: Api, names: Sequence[str]) -> None:
    """Signals name tools of the catalog: one the router cannot rank is nearly always a typo or a missing
    registration, and what is learned about it would never surface."""
    unknown = sorted(set(names) - await _catalog_names(api))
    if unknown:
        raise NotFound(f"unknown tool{'s' if len(unknown) > 1 else ''}: {', '.join(unknown[:10])}", tools=unknown)


async def _tool(api: Api, name: str) -> ToolInfo:
    for tool in await _tools(api).catalog():
        if tool.name == name:
            return tool
    raise NotFound(f"tool {name!r} not found", tool=name)


# -- catalog ---------------------------------------------------------------------------------------------


@router.get("/catalog", summary="The tool catalog")
async def list_catalog(
    api: ApiDep, server: Annotated[str | None, Query(max_length=200, description="Only this server's")] = None
) -> list[ToolInfo]:
    return await _tools(api).catalog(server=server)


@router.post("/catalog", summary="Register tools (bulk; admin or app key)")
async def register_tools(api: ApiDep, body: RegisterIn) -> RegisterReport:
    """Adds or updates tools; only tools whose name or description changed are embedded again. With
    `replace`, the tools of `server` that are not listed are removed."""
    api.principal.require_tenant_key("changing the tool catalog")
    definitions = [ToolDef(**t.model_dump()) for t in body.tools]
    return await _tools(api).register(definitions, server=body.server, replace=body.replace)


@router.get("/catalog/{name:path}", summary="One tool of the catalog")
async def get_tool(api: ApiDep, name: ToolPath) -> ToolInfo:
    return await _tool(api, name)


@router.delete("/catalog/{name:path}", summary="Remove a tool from the catalog (admin or app key)")
async def remove_tool(api: ApiDep, name: ToolPath) -> RemovedOut:
    """What was learned about the tool stays (templates, recovery patterns, statistics); it is routed again
    as soon as the tool is registered again."""
    api.principal.require_tenant_key("changing the tool catalog")
    if not await _tools(api).unregister([name]):
        raise NotFound(f"tool {name!r} not found", tool=name)
    return RemovedOut(name=name)


# -- routing and context ---------------------------------------------------------------------------------


@router.post("/route", summary="Rank tools for a context")
async def route(api: ApiDep, body: RouteIn, response: Response) -> list[RoutedTool]:
    """The `k` tools to show for `query`, best first, each with its score, the parts of the score
    (description similarity, keyword match, learned evidence, unlike its past uses) and `why` in words.
    Records nothing. `context` is the deprecated name of `query` (as in `/context` and `/search`)."""
    user = api.acting_for(body.user)
    query = body.query
    if body.context is not None:
        if query is not None:
            raise ValidationError("send query, not both query and its old name context", field="context")
        query = body.context
        response.headers["Warning"] = '299 learnloop "the field context is deprecated; send query"'
        response.headers["Deprecation"] = "true"
    return await _tools(api).route(query, body.k, user=user, learned=body.learned)


@router.post("/context", summary="Set a session's context (opens a correlation window)")
async def set_context(api: ApiDep, body: ContextIn) -> list[RoutedTool]:
    """Routes the tools for `query` and records them as the tools/list of a new window in `session`: calls
    recorded in the session until its next context are attributed to this query (seed 002)."""
    user = api.acting_for(body.user)
    _session(api, body.session)
    return await _tools(api).set_context(body.session, body.query, user=user, intent=body.intent, k=body.k)


@router.post("/search", summary="search_available_tools: the whole catalog ranked for a query")
async def search_tools(api: ApiDep, body: SearchIn) -> list[RoutedTool]:
    """With `session`, the search and its results are recorded in that session's window: a tool found here
    and then called is a discovery signal."""
    user = api.acting_for(body.user)
    if body.session is not None:
        _session(api, body.session)
    return await _tools(api).search(body.query, limit=body.limit, user=user, session=body.session)


# -- usage signals ---------------------------------------------------------------------------------------


@router.post("/calls", summary="Record a tool call and its outcome")
async def record_call(api: ApiDep, body: CallIn) -> SignalReceipt:
    """Durable when the answer arrives. A success after a failure in the session becomes (or reinforces) a
    recovery pattern (`recovery`); a failure that matches one gets `suggestion`."""
    user = api.acting_for(body.user)
    _session(api, body.session)
    await _known(api, [body.tool])
    return await _tools(api).record_call(
        body.session,
        body.tool,
        body.arguments,
        ok=body.ok,
        error=body.error,
        error_type=body.error_type,
        latency_ms=body.latency_ms,
        user=user,
        intent=body.intent,
    )


@router.post("/lists", summary="Record a tools/list the agent saw")
async def record_list(api: ApiDep, body: ListIn) -> SignalOut:
    user = api.acting_for(body.user)
    _session(api, body.session)
    await _known(api, body.tools)
    return SignalOut(id=await _tools(api).record_list(body.session, body.tools, user=user))


@router.post("/searches", summary="Record a search_available_tools done elsewhere, with its results")
async def record_search(api: ApiDep, body: SearchRecordIn) -> SignalOut:
    user = api.acting_for(body.user)
    _session(api, body.session)
    await _known(api, body.results)
    return SignalOut(id=await _tools(api).record_search(body.session, body.query, body.results, user=user))


@router.get("/signals", summary="Recorded signals, oldest first")
async def list_signals(
    api: ApiDep,
    user: UserQuery = None,
    session: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
    kind: SignalKind | None = None,
    after: Annotated[int, Query(ge=0, le=2**53, description="Only signals with a larger id")] = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> list[ToolSignal]:
    return await _tools(api).signals(user=_reader(api, user), session=session, kind=kind, after=after, limit=limit)


@router.post("/feedback", summary="Feedback on a session's answer (moves its templates' confidence)")
async def feedback(api: ApiDep, body: FeedbackIn) -> FeedbackOut:
    """Seed 001 §4.4: a quality score from -1 to 1 on the templates used in the session's current window.
    (`POST /api/observe` does this by itself for the previous turn when the session has a window.)"""
    user = api.acting_for(body.user)
    _session(api, body.session)
    templates = await _tools(api).feedback(body.session, body.score, user=user)
    return FeedbackOut(session=body.session, templates=templates)


# -- templates, recovery, statistics ---------------------------------------------------------------------


@router.get("/templates", summary="Query templates, best first")
async def list_templates(
    api: ApiDep,
    user: UserQuery = None,
    intent: Intent = None,
    tool: ToolFilter = None,
    include_archived: bool = False,
) -> list[QueryTemplate]:
    """Ways of calling a tool that worked for an intent: confidence = successes / (successes + failures),
    moved by feedback and decayed with age; ordered by confidence, then recency, then speed."""
    user = _reader(api, user)
    return await _tools(api).templates(user=user, intent=intent, tool=tool, include_archived=include_archived)


@router.get("/templates/best", summary="The template to use for an intent or a query")
async def best_template(
    api: ApiDep,
    intent: Intent = None,
    query: Annotated[str | None, Query(min_length=1, max_length=4000, description="Match by similar queries")] = None,
    tool: ToolFilter = None,
    user: UserQuery = None,
    min_confidence: Annotated[float, Query(ge=0.0, le=1.0)] = 0.7,
    session: Annotated[str | None, Query(min_length=1, max_length=200, description="Skip what failed here")] = None,
) -> BestTemplateOut:
    """Settled by confidence, then recency, then speed (seed 001 §8.3); `template` is null when none is
    good enough (seed 001 §4.1: confidence 0.7). With `session`, templates whose pattern failed in that
    session's window are skipped, so the next best is tried."""
    found = await _tools(api).best_template(
        intent=intent, query=query, tool=tool, user=_reader(api, user), min_confidence=min_confidence, session=session
    )
    return BestTemplateOut(template=found)


@router.post("/templates/seed", summary="Cold-start templates (admin or app key)")
async def seed_templates(api: ApiDep, body: SeedIn) -> SeededOut:
    """Shared by the tenant and starting at confidence 0.5 (seed 001 §8.2); existing ones are left as they are."""
    api.principal.require_tenant_key("seeding templates")
    seeds = [SeedTemplate(**t.model_dump()) for t in body.templates]
    return SeededOut(added=await _tools(api).seed_templates(seeds))


@router.get("/recoveries", summary="Error-recovery patterns")
async def list_recoveries(
    api: ApiDep, user: UserQuery = None, tool: ToolFilter = None, include_archived: bool = False
) -> list[RecoveryPattern]:
    """Each pattern: the fingerprint of a failure (error type, tool, shape of the arguments), the change that
    fixed it in words, and its confidence (times it worked / times it was applied, decayed)."""
    user = _reader(api, user)
    return await _tools(api).recovery_patterns(user=user, tool=tool, include_archived=include_archived)


@router.post("/recoveries/suggest", summary="What worked before when this call failed like this")
async def suggest_recovery(api: ApiDep, body: SuggestIn) -> SuggestionOut:
    """The exact fingerprint first, else the same error type on the same tool; `suggestion` is null below
    confidence 0.7."""
    user = api.acting_for(body.user)
    found = await _tools(api).suggest_recovery(
        body.tool, body.arguments, body.error, error_type=body.error_type, user=user
    )
    return SuggestionOut(suggestion=found)


@router.get("/stats", summary="Success rates per intent and tool")
async def stats(api: ApiDep, user: UserQuery = None, intent: Intent = None) -> list[ToolStat]:
    return await _tools(api).stats(user=_reader(api, user), intent=intent)


@router.get("/evidence", summary="Learned evidence for every tool of the catalog")
async def list_evidence(api: ApiDep, user: UserQuery = None) -> list[ToolEvidenceOut]:
    """Per tool: learned query→tool pairs (count, confidence, signal classes), call outcomes, and example
    queries where the users' privacy setting keeps them. Most learned about first."""
    tools = _tools(api)
    return await evidence_for(tools, _reader(api, user), await tools.catalog())


@router.get("/evidence/{name:path}", summary="Everything learned about one tool")
async def tool_evidence(
    api: ApiDep, name: ToolPath, user: UserQuery = None, limit: Annotated[int, Query(ge=1, le=500)] = 50
) -> ToolDetail:
    tools, scope_user = _tools(api), _reader(api, user)
    info = await _tool(api, name)
    [summary] = await evidence_for(tools, scope_user, [info], tool=name)
    return ToolDetail(
        tool=info,
        evidence=summary,
        pairs=await tools.learned_pairs(user=scope_user, tool=name, limit=limit),
        templates=await tools.templates(user=scope_user, tool=name),
        recoveries=await tools.recovery_patterns(user=scope_user, tool=name),
        stats=[s for s in await tools.stats(user=scope_user) if s.tool == name],
    )


# -- insights and privacy --------------------------------------------------------------------------------


@router.get("/insights", summary="Global insights (anonymised, across users)")
async def insights(api: ApiDep, type: Annotated[str | None, Query(max_length=64)] = None) -> list[Insight]:
    return await _tools(api).insights(type=type)


@router.post("/insights/aggregate", summary="Run the insight aggregator now (admin)")
async def aggregate_insights(api: ApiDep) -> AggregationReport:
    """Also folds queued weak signals into the learned pairs and archives decayed templates, recovery
    patterns and pairs. It runs by itself every `insight_every` recorded calls."""
    api.principal.require_admin("aggregating insights")
    return await _tools(api).aggregate_insights()


@router.get("/privacy/{user}", summary="What the tool layer keeps of a user's queries")
async def get_privacy(api: ApiDep, user: UserPath) -> PrivacyOut:
    user = api.acting_for(user) or user
    return PrivacyOut(user=user, mode=await _tools(api).privacy(user))


@router.put("/privacy/{user}", summary="Set what the tool layer keeps of a user's queries")
async def set_privacy(api: ApiDep, user: UserPath, body: PrivacyIn) -> PrivacyOut:
    """A stricter choice also applies to what is stored already: query texts are erased (hashed), and with
    opt_out the user's learned pairs too."""
    user = api.acting_for(user) or user
    await _tools(api).set_privacy(user, body.mode)
    return PrivacyOut(user=user, mode=body.mode)
