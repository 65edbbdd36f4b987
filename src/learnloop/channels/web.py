"""The built-in channel: the web chat and plain API callers. Nothing is sent over HTTP; `send` hands the
formatted parts back for the caller's own response.

An inbound payload is `{"user_id": ..., "text": ...}` (or `"session"` in place of `user_id` for an anonymous
web visitor), optionally with `message_id`, `username` and `display_name`. The answer is sanitised HTML:
markdown-it-py renders it with raw HTML switched off, then the nh3 sanitiser (Ammonia) keeps only an
allow-list of tags and attributes and safe link schemes, so neither the model nor a stored learning can put
script into the page. Images become links to them: nothing in an answer is fetched until someone clicks.
"""

from __future__ import annotations

import html
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Final

import nh3
from markdown_it import MarkdownIt
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from ..errors import ValidationError
from .base import ChannelUser, InboundMessage, SentMessage, friendly_error
from .markups import LINK_REL, WebHTML
from .splitting import format_markdown

__all__ = ["WebAdapter", "sanitise_html"]

_TAGS: Final = frozenset(
    {"p", "br", "strong", "em", "del", "s", "code", "pre", "blockquote", "a", "ul", "ol", "li", "hr"}
    | {"h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td"}
)
_ATTRIBUTES: Final = {"a": {"href"}, "code": {"class"}, "ol": {"start"}}
_SCHEMES: Final = frozenset({"http", "https", "mailto"})
_PAGE_PARSER = MarkdownIt("commonmark", {"html": False}).enable(["strikethrough", "table"])


def _image_as_link(renderer: Any, tokens: Sequence[Token], index: int, options: OptionsDict, env: EnvType) -> str:
    # A browser loads an <img> by itself: an answer steered by injected text could send what it knows to any
    # server in the image's URL. A link waits for a click.
    token = tokens[index]
    alt = html.escape(token.content or "image", quote=False)
    src = str(token.attrGet("src") or "")
    return f'<a href="{html.escape(src, quote=True)}">{alt}</a>' if src else alt


_PAGE_PARSER.add_render_rule("image", _image_as_link)
_MAX_ID = 200


def sanitise_html(markup: str) -> str:
    """Only the allow-listed tags and attributes; links to http, https and mailto only; no script or style."""
    return nh3.clean(
        markup,
        tags=set(_TAGS),
        attributes={tag: set(names) for tag, names in _ATTRIBUTES.items()},
        url_schemes=set(_SCHEMES),
        link_rel=LINK_REL,
        strip_comments=True,
    )


class WebAdapter:
    """`channel` is "web" for the chat page or "api" for programmatic callers; `message_limit` 0 is no limit."""

    def __init__(self, channel: str = "web", *, message_limit: int = 0) -> None:
        if channel not in ("web", "api"):
            raise ValidationError(f"the built-in channel is 'web' or 'api', not {channel!r}")
        self._channel = channel
        self._limit = max(0, message_limit)
        self._markup = WebHTML()

    @property
    def channel(self) -> str:
        return self._channel

    @property
    def message_limit(self) -> int:
        return self._limit

    def resolve_user(self, event: Mapping[str, Any]) -> ChannelUser | None:
        if not isinstance(event, Mapping):
            raise ValidationError("a message payload must be a JSON object")
        who = event.get("user_id") or event.get("session")
        if who is None:
            return None
        if not isinstance(who, str | int) or isinstance(who, bool) or not str(who).strip():
            raise ValidationError("user_id (or session) must be a non-empty string", field="user_id")
        if len(str(who)) > _MAX_ID:
            raise ValidationError(f"user_id must be at most {_MAX_ID} characters", field="user_id")
        username, display = event.get("username"), event.get("display_name")
        return ChannelUser(
            channel=self._channel,
            channel_user_id=str(who).strip(),
            username=username if isinstance(username, str) else None,
            display_name=display if isinstance(display, str) else None,
            metadata={"anonymous": True} if event.get("user_id") is None else {},
        )

    def parse(self, event: Mapping[str, Any]) -> list[InboundMessage]:
        sender = self.resolve_user(event)
        if sender is None:
            raise ValidationError("a message needs a user_id (or a session)", field="user_id")
        text = event.get("text")
        if not isinstance(text, str) or not text.strip():
            raise ValidationError("a message needs a non-empty text", field="text")
        message_id = event.get("message_id")
        return [
            InboundMessage(
                channel=self._channel,
                sender=sender,
                message_id=str(message_id) if isinstance(message_id, str | int) else uuid.uuid4().hex,
                text=text,
                recipient=sender.channel_user_id,
            )
        ]

    def format_response(self, markdown: str) -> list[str]:
        if self._limit == 0:
            page = sanitise_html(_PAGE_PARSER.render(markdown)).strip()
            return [page] if page else []
        return [sanitise_html(part) for part in format_markdown(markdown, self._markup, self._limit)]

    async def send(self, recipient: str, markdown: str) -> list[SentMessage]:
        return [SentMessage(self._channel, recipient, part) for part in self.format_response(markdown)]

    async def send_error(self, recipient: str, error: BaseException) -> list[SentMessage]:
        return await self.send(recipient, friendly_error(error))

    async def aclose(self) -> None:
        """Nothing to close (no HTTP); here so every built-in adapter can be closed alike."""
