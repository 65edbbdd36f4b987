"""`create_app(loop)`: the FastAPI application serving the API, the event stream and the pages."""

from __future__ import annotations

import json
import logging
import weakref
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import __version__
from ..events import EventBus
from ..loop import Loop
from ..models import utcnow
from ..stores.service import ServiceStore
from . import pages, sse
from .errors import install_error_handlers
from .logs import event_log_sink
from .routes import admin, agent, capture, feedback, holdback, learnings, metrics, profiles, review, tools, turns
from .routes import channels as channel_routes
from .routes import identities as identity_routes
from .state import Service, ServiceOptions, service_store_for
from .wire import BodySizeLimit, QueryTextCheck

__all__ = ["create_app"]

log = logging.getLogger("learnloop.server")

_HERE = Path(__file__).resolve().parent
_LOGGED_BUSES: weakref.WeakSet[EventBus] = weakref.WeakSet()

_DESCRIPTION = """
learnloop as a service: capture learnings from your model's `save_learning` tool calls and from observed
turns, recall them before each model call, review and correct them, and watch the loop learn live.

Authenticate with an API key: `Authorization: Bearer ll_…` (or `X-API-Key`). Keys belong to one tenant:
**admin** keys may do everything in it, **app** keys read and write for any user of it, **user-bound** keys
only their own user's data. Anything outside a key's tenant or user is `404`, never `403`.

Errors are `{"error": {"code", "message", …}}`.
"""

# Pages only load what the process itself serves: no inline scripts, no third-party origins.
_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)


def _counter_sink(store: ServiceStore) -> Callable[[str, str], None]:
    def sink(tenant: str, key: str) -> None:
        if key.startswith("save."):
            store.add_count(tenant, key, utcnow())

    return sink


class _SecurityHeaders:
    """Pure ASGI (not BaseHTTPMiddleware), so streamed responses such as the event stream pass untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("X-Content-Type-Options", "nosniff")
                if headers.get("content-type", "").startswith("text/html"):
                    headers.setdefault("Content-Security-Policy", _CSP)
                    headers.setdefault("Referrer-Policy", "same-origin")
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _json_text(value: object) -> str:
    """A value as JSON for reading on a page. Jinja's `tojson` escapes <, > and & as \\u003c… (it is made for
    scripts), which a reader then sees verbatim; this is plain text that autoescaping makes safe."""
    return json.dumps(value, ensure_ascii=False, default=str)


def _templates() -> Jinja2Templates:
    templates = Jinja2Templates(directory=str(_HERE / "templates"))
    templates.env.filters["json_text"] = _json_text
    return templates


def _body_limits(options: ServiceOptions) -> Callable[[str], int]:
    def limit_for(path: str) -> int:
        return options.max_import_bytes if path == admin.IMPORT_PATH else options.max_body_bytes

    return limit_for


def create_app(loop: Loop, *, options: ServiceOptions | None = None, store: ServiceStore | None = None) -> FastAPI:
    """An app over `loop`'s engine; each request works on `loop.for_tenant(<the key's tenant>)`.

    The app does not close the loop: whoever opened it does (`learnloop serve` does on shutdown).
    """
    service_store = store or service_store_for(loop)
    counter = _counter_sink(service_store)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await loop.engine.ensure_started()
        loop.engine.count_sinks.append(counter)
        if loop.agent.configured and loop.agent.runtime.config.run_workers:
            await loop.agent.start()  # resume the workers of sessions left open by the last run
        loop.turns.start()  # housekeeping: turns' work another process left behind, expiry, silence
        try:
            yield
        finally:
            await loop.turns.stop()
            await app.state.service.imports.stop()  # interrupted jobs resume later, after their last batch
            await app.state.service.close_adapters()
            loop.engine.count_sinks.remove(counter)
            await service_store.flush()

    options = options or ServiceOptions()
    app = FastAPI(
        title="learnloop",
        version=__version__,
        description=_DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,  # FastAPI's docs page loads its assets from a CDN; /openapi.json is the contract
        redoc_url=None,
    )
    app.state.service = Service(
        loop=loop,
        store=service_store,
        templates=_templates(),
        options=options,
    )
    if loop.engine.bus not in _LOGGED_BUSES:
        loop.engine.bus.add_sink(event_log_sink())
        _LOGGED_BUSES.add(loop.engine.bus)
    install_error_handlers(app)
    routers = (
        learnings.router,
        review.router,
        capture.router,
        admin.router,
        agent.router,
        tools.router,
        turns.router,
        sse.router,
        metrics.router,
        holdback.router,
        profiles.router,
        feedback.router,
        identity_routes.router,
        channel_routes.router,
        pages.router,
    )
    for router in routers:
        app.include_router(router)
    app.mount("/static", StaticFiles(directory=str(_HERE / "static")), name="static")

    app.add_middleware(QueryTextCheck)
    app.add_middleware(BodySizeLimit, limit_for=_body_limits(options))
    app.add_middleware(_SecurityHeaders)
    return app
