"""The web pages: login, `/knowledge` (seed 000's review page), `/activity` (live panels), `/metrics`, `/tools`.

Server-rendered with Jinja2 (autoescaped); small plain scripts in `static/` do inline edits and live
updates through the same JSON API, authenticated by the http-only cookie the login form sets.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ..capture.dedupe import merged_text
from ..channels.records import ChannelIdentity
from ..errors import AuthenticationError, LearnloopError, NotFound
from ..models import Status
from .auth import COOKIE, Api, api_for, principal_of
from .keys import Role
from .schemas import IDENT
from .state import get_service
from .tool_views import overview

__all__ = ["EMPTY_STATE", "metrics_page", "router", "wants_html"]

router = APIRouter(include_in_schema=False)

# Seed 000, verbatim.
EMPTY_STATE = (
    "Your assistant hasn't saved any learnings yet. As you brew and chat, it will proactively capture insights "
    "about your equipment, techniques, and preferences."
)
_PAGE_SIZE = 50
_IDENT = re.compile(IDENT)
_COOKIE_DAYS = 30


def wants_html(request: Request) -> bool:
    return "text/html" in request.headers.get("accept", "")


async def _page_api(request: Request) -> Api | None:
    try:
        return api_for(request, await principal_of(request))
    except AuthenticationError:
        return None


def _to_login(request: Request) -> RedirectResponse:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/login?next={quote(target, safe='')}", status_code=303)


def _safe_next(value: str | None) -> str:
    # Only local paths: an open redirect after login would hand the cookie-holder to another site.
    if not value or not value.startswith("/") or value.startswith("//") or "\\" in value:
        return "/knowledge"
    return value


def _render(request: Request, template: str, api: Api | None, status_code: int = 200, **context: Any) -> HTMLResponse:
    templates = get_service(request).templates
    base: dict[str, Any] = {"principal": api.principal if api else None, "path": request.url.path}
    return templates.TemplateResponse(request, template, base | context, status_code=status_code)


@router.get("/")
async def home() -> RedirectResponse:
    return RedirectResponse("/knowledge", status_code=303)


@router.get("/login")
async def login_form(request: Request, next: str | None = None) -> HTMLResponse:
    return _render(request, "login.html", None, next=_safe_next(next), error=None)


@router.post("/login")
async def login(
    request: Request, key: Annotated[str, Form(max_length=300)] = "", next: Annotated[str, Form(max_length=2000)] = ""
) -> Response:
    service = get_service(request)
    if not _same_origin(request):
        # Login CSRF: a page elsewhere must not log this browser in under a key of its choosing.
        return _render(
            request, "login.html", None, status_code=403, next="/knowledge", error="Log in from this site's own page."
        )
    try:
        principal = await service.keys.resolve(key)
    except AuthenticationError as exc:
        return _render(request, "login.html", None, status_code=401, next=_safe_next(next), error=exc.message)
    response = RedirectResponse(_safe_next(next), status_code=303)
    response.set_cookie(
        COOKIE,
        key.strip(),
        max_age=_COOKIE_DAYS * 86_400,
        httponly=True,
        samesite="strict",
        secure=service.options.secure_cookies,
        path="/",
    )
    del principal
    return response


def _same_origin(request: Request) -> bool:
    """Whether a form post comes from this site's own pages. Browsers say so in `Sec-Fetch-Site` and `Origin`;
    a request with neither is not from a browser form (curl, scripts) and cannot carry another site's intent."""
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return False
    origin = request.headers.get("origin")
    if origin is None:
        return True
    own = f"{request.url.scheme}://{request.headers.get('host', '')}"
    return origin.rstrip("/").lower() == own.lower()


@router.api_route("/logout", methods=["GET", "POST"])
async def logout() -> RedirectResponse:
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(COOKIE, path="/")
    return response


def _category_label(name: str) -> str:
    return name.replace("_", " ").capitalize()


@router.get("/knowledge")
async def knowledge(
    request: Request,
    category: Annotated[str | None, Query(max_length=64)] = None,
    q: Annotated[str | None, Query(max_length=500)] = None,
    status: Annotated[str | None, Query(max_length=20)] = None,
    user: Annotated[str | None, Query(max_length=128)] = None,
    namespace: Annotated[str, Query(max_length=64)] = "learning",
    page: Annotated[int, Query(ge=1, le=100_000)] = 1,
    review: Annotated[bool, Query()] = False,
) -> Response:
    api = await _page_api(request)
    if api is None:
        return _to_login(request)
    queue = await api.loop.review_queue(user=api.scope_user, offset=(page - 1) * _PAGE_SIZE, limit=_PAGE_SIZE)
    vocabulary = await api.loop.vocabulary(namespace)
    names = vocabulary.names
    category = category if category in names else None
    chosen_status = status if status in {s.value for s in Status} else None
    owner = user.strip() if user and user.strip() and api.principal.role is not Role.USER else None
    listing = await api.loop.list(
        user=api.scope_user,
        owner=owner,
        category=category,
        status=chosen_status,
        namespace=namespace,
        text=(q or "").strip() or None,
        offset=(page - 1) * _PAGE_SIZE,
        limit=_PAGE_SIZE,
    )
    nothing_yet = False
    if not listing.items:
        everything = await api.loop.list(user=api.scope_user, namespace=namespace, limit=1)
        nothing_yet = everything.total == 0
    tabs = [("All", None)] + [(_category_label(n), n) for n in names]
    channels = await _channels_of(api, owner or api.scope_user)
    pages = max(1, -(-listing.total // _PAGE_SIZE))
    here = {"category": category, "q": q, "status": chosen_status, "user": owner, "namespace": namespace}
    kept = {k: v for k, v in here.items() if v}
    return _render(
        request,
        "knowledge.html",
        api,
        tabs=tabs,
        category=category,
        q=q or "",
        status=chosen_status or "",
        user=owner or "",
        namespace=namespace,
        listing=listing,
        page=page,
        pages=pages,
        prev_url=f"/knowledge?{urlencode(kept | {'page': page - 1})}" if page > 1 else None,
        next_url=f"/knowledge?{urlencode(kept | {'page': page + 1})}" if page < pages else None,
        empty_state=EMPTY_STATE if nothing_yet else None,
        statuses=[s.value for s in Status],
        categories_json=json.dumps([{"name": n, "label": _category_label(n)} for n in names]),
        tenant_view=api.principal.role is not Role.USER,
        reviewing=review,
        queue=queue,
        review_total=queue.total,
        suggestions={item.link.id: merged_text(item.old.text, item.new.text) for item in queue.items},
        channels=channels,
    )


async def _channels_of(api: Api, user: str | None) -> list[ChannelIdentity]:
    """The channels of the user in view (seed 001 §8.8): none for a whole-tenant view, a backend without
    identities, or a name that is no user id."""
    if not user:
        return []
    try:
        return await api.loop.identities.identities(user)
    except LearnloopError:
        return []


@router.get("/activity")
async def activity(request: Request) -> Response:
    api = await _page_api(request)
    if api is None:
        return _to_login(request)
    return _render(request, "activity.html", api)


@router.get("/tools")
async def tools_page(request: Request, user: Annotated[str | None, Query(max_length=128)] = None) -> Response:
    """The tool layer: catalog, learned evidence per tool, templates, recovery patterns, success rates."""
    api = await _page_api(request)
    if api is None:
        return _to_login(request)
    tenant_view = api.principal.role is not Role.USER
    # A malformed name in the address bar shows the whole tenant rather than an error page.
    owner = user.strip() if user and _IDENT.match(user.strip()) and tenant_view else None
    data = await overview(api.loop.tools, api.acting_for(owner) if owner else api.scope_user)
    return _render(request, "tools.html", api, data=data, user=owner or "", tenant_view=tenant_view)


async def metrics_page(request: Request) -> Response:
    api = await _page_api(request)
    if api is None:
        return _to_login(request)
    return _render(request, "metrics.html", api)


@router.get("/profiles")
async def profiles_page(request: Request, user: Annotated[str | None, Query(max_length=128)] = None) -> Response:
    """A user's profile (seed 001's user memory): what was learned of them, hand edits, forget."""
    api = await _page_api(request)
    if api is None:
        return _to_login(request)
    tenant_view = api.principal.role is not Role.USER
    named = user.strip() if user and _IDENT.match(user.strip()) else None
    owner = api.acting_for(named) if tenant_view else api.scope_user
    found = None
    if owner:
        try:
            found = await api.loop.profiles.get(owner)
        except NotFound:
            found = None
    return _render(request, "profiles.html", api, user=owner or "", profile=found, tenant_view=tenant_view)
