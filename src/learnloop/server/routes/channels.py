"""Channels in: Telegram and WhatsApp webhooks, and the web chat's messages (seed 001 §5, §7).

The webhooks carry no API key; each is believed only after its platform's proof (Telegram's secret-token
header, WhatsApp's `X-Hub-Signature-256` over the raw body) — anything else is a 401 and stores nothing, since
otherwise anyone could post as any `channel_user_id` and read that person's memory in the answer. A verified
event is answered before the 200 goes back, so a platform that retries an unanswered event meets the duplicate
window (learned once, the first answer sent again) instead of a lost message. Webhooks act for the service's
own tenant (`LEARNLOOP_TENANT`).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, Field, StringConstraints

from ...channels.base import ChannelUser, InboundMessage
from ...channels.router import ChannelRouter, Handled
from ...channels.webhooks import read_event, verify_webhook, whatsapp_handshake
from ..auth import ApiDep
from ..errors import ERROR_RESPONSES
from ..schemas import Strict
from ..state import Service, get_service

__all__ = ["router"]

router = APIRouter(
    prefix="/api/channels",
    tags=["channels"],
    responses={
        **ERROR_RESPONSES,
        # The same error shape as every other status.
        401: {
            **ERROR_RESPONSES[401],
            "description": "Webhook secret or signature missing or wrong: nothing stored",
        },
        409: {**ERROR_RESPONSES[409], "description": "The channel or its responder is not configured on this service"},
        502: {**ERROR_RESPONSES[422], "description": "The responder or the platform failed"},
    },
)

ServiceDep = Annotated[Service, Depends(get_service)]


class Delivered(BaseModel):
    kind: str = Field(description="turn, duplicate, redelivered, link, paused or error")
    user: str = Field(description="the canonical user the message was from")
    channel: str
    turn: str | None = None
    duplicate_of: str | None = None
    parts: list[str] = Field(default_factory=list, description="the answer as sent, one item per message")
    error: str | None = None


class WebhookAnswer(BaseModel):
    ok: bool = True
    handled: list[Delivered] = Field(default_factory=list)


class WebMessageIn(Strict):
    channel_user_id: Annotated[str, StringConstraints(min_length=1, max_length=256)] = Field(
        description="the web visitor's session token or the API caller's own id for the person"
    )
    text: Annotated[str, StringConstraints(min_length=1, max_length=20_000)]
    username: Annotated[str, StringConstraints(max_length=128)] | None = None


def _delivered(handled: Handled) -> Delivered:
    fields = asdict(handled)
    fields["parts"] = [sent.text for sent in handled.sent]
    del fields["sent"]
    return Delivered(**fields)


async def _webhook(channel: str, request: Request, service: Service) -> WebhookAnswer:
    body = await request.body()
    verify_webhook(channel, request.headers, body, service.options.channels)
    event = read_event(body)
    handled = await ChannelRouter(service.loop, service.responder()).handle(service.adapter(channel), event)
    return WebhookAnswer(handled=[_delivered(h) for h in handled])


@router.post("/telegram/webhook", summary="A Telegram update (setWebhook with secret_token)")
async def telegram_webhook(request: Request, service: ServiceDep) -> WebhookAnswer:
    return await _webhook("telegram", request, service)


@router.get(
    "/whatsapp/webhook",
    summary="WhatsApp's subscription check: echoes hub.challenge when hub.verify_token is ours",
    response_class=PlainTextResponse,
)
async def whatsapp_subscribe(request: Request, service: ServiceDep) -> PlainTextResponse:
    challenge = whatsapp_handshake(request.query_params, service.options.channels.whatsapp_verify_token)
    return PlainTextResponse(challenge)


@router.post("/whatsapp/webhook", summary="A WhatsApp Cloud API notification (signed with the app secret)")
async def whatsapp_webhook(request: Request, service: ServiceDep) -> WebhookAnswer:
    return await _webhook("whatsapp", request, service)


@router.post("/web/messages", summary="A message from the web chat or an API caller: the answer as sanitised HTML")
async def web_message(api: ApiDep, body: WebMessageIn, service: ServiceDep) -> Delivered:
    api.principal.require_tenant_key("answering channel messages")
    router_ = ChannelRouter(api.loop, service.responder())
    adapter = service.adapter("web")
    sender = ChannelUser("web", body.channel_user_id, username=body.username)
    message = InboundMessage("web", sender, message_id="", text=body.text, recipient=body.channel_user_id)
    return _delivered(await router_.handle_message(adapter, message))
