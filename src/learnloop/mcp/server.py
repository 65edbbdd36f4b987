"""`learnloop mcp`: learnings as tools for any MCP client, over stdio or streamable HTTP.

Tools: `save_learning` (its schema generated from the namespace's vocabulary), `recall`, `list_learnings`,
`deprecate_learning`, `confirm_learning`. The Proactive Learning system-prompt section is served both as a
resource and as a prompt.

Built on the SDK's low-level `Server` rather than `MCPServer`: the high-level server derives each tool's input
schema from a Python signature once, at registration, while here the schema comes from data (the vocabulary) and
differs per tenant, and over HTTP the tenant is only known per request, from the API key.

Errors reach the model as tool results with `isError: true` whose text is the validator's, the write gate's or
the lifecycle's own sentence (a refused secret names its rule; an unknown category lists the allowed ones).

Whose learnings: the caller's user; without one (a tenant-wide key that sent no `X-Learnloop-User`) recall and
list_learnings see the tenant's global learnings only, and the writing tools refuse (`user_required`) unless
the caller said `X-Learnloop-User: *global*`, or the server was configured without a user (stdio).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from importlib import metadata
from typing import Any

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from starlette.types import ASGIApp

from ..errors import AuthenticationError, LearnloopError, NotFound, ValidationError
from ..loop import Loop
from ..models import DEFAULT_NAMESPACE, Learning, Limits, Status
from . import server_args as a
from . import server_tools as t
from .screening import ScreenedHttp, screened_stdio
from .server_auth import PRINCIPAL_KEY, BearerAuth, KeyResolver, Principal, require_owner, require_write
from .server_turns import BEGIN, FINISH, begin_turn, finish_turn, turn_tools

__all__ = ["PROMPT_NAME", "PROMPT_URI", "LearnloopMCP"]

log = logging.getLogger(__name__)

PROMPT_NAME = "proactive_learning"
PROMPT_URI = "learnloop://prompts/proactive-learning"
_ACTOR = "tool:mcp"

_INSTRUCTIONS = (
    "Long-term memory for this user. Call recall at the start of a task to get what was learned before. "
    "Call save_learning proactively when the user corrects you, states a preference or a fact about their setup, "
    "or a result differs from what you expected. Use confirm_learning and deprecate_learning with the ids recall "
    f"returns. The '{PROMPT_NAME}' prompt has the full guidance for your system prompt."
)

ToolHandler = Callable[
    [Loop, Principal, dict[str, Any], ServerRequestContext[Any, Any]], Awaitable[types.CallToolResult]
]


def _version() -> str:
    try:
        return metadata.version("learnloop")
    except metadata.PackageNotFoundError:  # a source checkout that was never installed
        return "0"


class LearnloopMCP:
    """One MCP server over one `Loop`; the tenant and user of each call come from its `Principal`.

    `principal` is the identity used when the transport carries none (stdio, or HTTP without keys).
    """

    def __init__(self, loop: Loop, principal: Principal, *, namespace: str = DEFAULT_NAMESPACE) -> None:
        self.loop = loop
        self.principal = principal
        self.namespace = namespace
        self._keys_required = False
        self._handlers: dict[str, ToolHandler] = {
            t.SAVE: self._save,
            t.RECALL: self._recall,
            t.LIST: self._list,
            t.DEPRECATE: self._deprecate,
            t.CONFIRM: self._confirm,
            BEGIN: self._begin_turn,
            FINISH: self._finish_turn,
        }
        self.server: Server[Any] = Server(
            "learnloop",
            version=_version(),
            title="learnloop",
            description="Learnings that make an agent better with use: save, recall, confirm, deprecate.",
            instructions=_INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
        )

    # -- transports ----------------------------------------------------------------------------------------

    async def run_stdio(self) -> None:
        """Serve one client on this process's stdin/stdout until it closes the pipe."""
        async with screened_stdio() as (read, write):
            await self.server.run(read, write, self.server.create_initialization_options())

    def http_app(self, *, path: str = "/mcp", host: str = "127.0.0.1", keys: KeyResolver | None = None) -> ASGIApp:
        """The streamable HTTP endpoint at `path`; with `keys`, every request needs a bearer key they know.

        `host` is where the app is served: on loopback the SDK turns on DNS-rebinding protection.
        """
        app: ASGIApp = ScreenedHttp(self.server.streamable_http_app(streamable_http_path=path, host=host))
        if keys is None:
            return app
        self._keys_required = True
        return BearerAuth(app, keys, defer_unknown_user=True)

    # -- identity --------------------------------------------------------------------------------------------

    def _caller(self, ctx: ServerRequestContext[Any, Any]) -> Principal:
        scope = getattr(ctx.request, "scope", None)
        found = scope.get(PRINCIPAL_KEY) if isinstance(scope, dict) else None
        if isinstance(found, Principal):
            return found
        if self._keys_required and ctx.request is not None:
            # Unreachable through BearerAuth; refuse rather than fall back to the configured identity.
            raise AuthenticationError("this request carries no API key")
        return self.principal

    def _loop_for(self, principal: Principal) -> Loop:
        return self.loop if principal.tenant == self.loop.tenant else self.loop.for_tenant(principal.tenant)

    # -- tools -----------------------------------------------------------------------------------------------

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        loop = self._loop_for(self._caller(ctx))
        save_schema = await loop.tool_schema("mcp", namespace=self.namespace)
        vocabulary = await loop.vocabulary(self.namespace)
        return types.ListToolsResult(tools=[*t.tools(save_schema, vocabulary), *turn_tools()])

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        handler = self._handlers.get(params.name)
        if handler is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown tool {params.name!r}")
        try:
            principal = self._caller(ctx)
            if principal.unknown_user is not None:
                raise NotFound(f"user {principal.unknown_user!r} not found", user=principal.unknown_user)
            return await handler(self._loop_for(principal), principal, dict(params.arguments or {}), ctx)
        except LearnloopError as exc:
            return t.error_result(exc)
        except Exception:
            # The model cannot fix an internal failure; it gets a short error, the operator the traceback.
            log.exception("MCP tool %s failed", params.name)
            return t.error_result(LearnloopError(f"{params.name} failed inside learnloop; see the server log"))

    async def _save(
        self, loop: Loop, principal: Principal, args: dict[str, Any], ctx: ServerRequestContext[Any, Any]
    ) -> types.CallToolResult:
        require_write(principal, t.SAVE)
        require_owner(principal, t.SAVE)
        request = ctx.request
        session = request.headers.get("mcp-session-id") if request is not None else None
        call = await loop.handle_tool_call(args, user=principal.user, session=session, namespace=self.namespace)
        return t.save_result(call)

    async def _recall(
        self, loop: Loop, principal: Principal, args: dict[str, Any], ctx: ServerRequestContext[Any, Any]
    ) -> types.CallToolResult:
        query = a.required_str(args, "query")
        limit = a.optional_int(args, "limit", minimum=1, maximum=20, default=6) or 6
        result = await loop.retrieve_context(
            principal.user,
            query,
            namespace=self.namespace,
            categories=a.str_list(args, "categories"),
            limits=Limits(top_k=limit, max_items=limit),
        )
        return t.recall_result(result)

    async def _list(
        self, loop: Loop, principal: Principal, args: dict[str, Any], ctx: ServerRequestContext[Any, Any]
    ) -> types.CallToolResult:
        status = a.optional_str(args, "status")
        if status is not None and status not in {s.value for s in Status}:
            allowed = ", ".join(s.value for s in Status)
            raise ValidationError(f"'status' must be one of: {allowed}", field="status")
        category = a.optional_str(args, "category")
        if category is not None:
            (await loop.vocabulary(self.namespace)).check(category)
        page = await loop.list(
            user=principal.user,
            # Without a user, the global learnings only (what recall searches), never every user's own.
            global_only=principal.user is None,
            namespace=self.namespace,
            category=category,
            status=status,
            text=a.optional_str(args, "text"),
            limit=a.optional_int(args, "limit", minimum=1, maximum=100, default=20) or 20,
            offset=a.optional_int(args, "offset", minimum=0, maximum=a.MAX_INT, default=0) or 0,
        )
        return t.list_result(page)

    async def _deprecate(
        self, loop: Loop, principal: Principal, args: dict[str, Any], ctx: ServerRequestContext[Any, Any]
    ) -> types.CallToolResult:
        require_write(principal, t.DEPRECATE)
        require_owner(principal, t.DEPRECATE)
        learning_id = a.required_int(args, "id")
        reason = a.required_str(args, "reason")
        await _changeable(loop, principal, learning_id)
        learning = await _owned(loop.deprecate(learning_id, reason, user=principal.user, actor=_ACTOR), learning_id)
        return t.changed_result(learning, "Deprecated; it will not be recalled again:")

    async def _confirm(
        self, loop: Loop, principal: Principal, args: dict[str, Any], ctx: ServerRequestContext[Any, Any]
    ) -> types.CallToolResult:
        require_write(principal, t.CONFIRM)
        require_owner(principal, t.CONFIRM)
        learning_id = a.required_int(args, "id")
        reason = a.optional_str(args, "reason")
        await _changeable(loop, principal, learning_id)
        learning = await _owned(
            loop.confirm(learning_id, user=principal.user, actor=_ACTOR, reason=reason), learning_id
        )
        return t.changed_result(learning, f"Confirmed (confidence {learning.confidence:.2f}):")

    async def _begin_turn(
        self, loop: Loop, principal: Principal, args: dict[str, Any], ctx: ServerRequestContext[Any, Any]
    ) -> types.CallToolResult:
        request = ctx.request
        session = request.headers.get("mcp-session-id") if request is not None else None
        return await begin_turn(loop, principal, args, session)

    async def _finish_turn(
        self, loop: Loop, principal: Principal, args: dict[str, Any], ctx: ServerRequestContext[Any, Any]
    ) -> types.CallToolResult:
        return await finish_turn(loop, principal, args)

    # -- the Proactive Learning section, as a resource and as a prompt ---------------------------------------

    async def _section(self, ctx: ServerRequestContext[Any, Any]) -> str:
        loop = self._loop_for(self._caller(ctx))
        return await loop.proactive_learning_prompt(namespace=self.namespace)

    async def _list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        resource = types.Resource(
            uri=PROMPT_URI,
            name="proactive-learning",
            title="Proactive Learning (system-prompt section)",
            description="Add this to the system prompt: when and how to call save_learning, with the categories.",
            mime_type="text/markdown",
        )
        return types.ListResourcesResult(resources=[resource])

    async def _read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        if params.uri != PROMPT_URI:
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown resource {params.uri!r}; try {PROMPT_URI}")
        text = await _or_mcp_error(self._section(ctx))
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=PROMPT_URI, mime_type="text/markdown", text=text)]
        )

    async def _list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        prompt = types.Prompt(
            name=PROMPT_NAME,
            title="Proactive Learning",
            description="System-prompt section telling the model when and how to save learnings.",
            arguments=[],
        )
        return types.ListPromptsResult(prompts=[prompt])

    async def _get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        if params.name != PROMPT_NAME:
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown prompt {params.name!r}; try {PROMPT_NAME}")
        text = await _or_mcp_error(self._section(ctx))
        return types.GetPromptResult(
            description="Add to the system prompt so the model saves learnings proactively.",
            messages=[types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))],
        )


async def _changeable(loop: Loop, principal: Principal, learning_id: int) -> None:
    """A caller working on the global learnings (no user) changes those only, not some user's own: the
    tenant-wide scope it runs with would otherwise reach every user's learnings."""
    if principal.user is not None:
        return  # the user's scope already limits changes to the user's own learnings
    learning = await _owned(loop.get(learning_id), learning_id)
    if learning.user is not None:
        raise NotFound(f"learning {learning_id} not found among the learnings you can change", id=learning_id)


async def _owned(change: Awaitable[Learning], learning_id: int) -> Learning:
    """A user's learnings and the shared ones read alike, but only one's own can be changed."""
    try:
        return await change
    except NotFound as exc:
        raise NotFound(f"learning {learning_id} not found among the learnings you can change", id=learning_id) from exc


async def _or_mcp_error(work: Awaitable[str]) -> str:
    try:
        return await work
    except LearnloopError as exc:
        raise MCPError(code=types.INVALID_PARAMS, message=exc.message, data=exc.to_dict()) from exc
