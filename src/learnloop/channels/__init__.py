"""Channels: one person reached through Telegram, WhatsApp, the web chat or the API.

Adapters turn a platform's inbound event into messages and a sender, and learnloop's canonical Markdown
answer into the platform's markup, split to its message limit, then deliver it. Webhook checks prove that
an inbound event comes from the platform before anything in it is believed.
"""

from ..errors import ChannelSendError, WebhookRejected
from .base import ChannelAdapter, ChannelUser, InboundMessage, SentMessage
from .delivery import RetryPolicy
from .registry import CHANNELS, adapter_for
from .responders import HttpResponder, LLMResponder, Responder, responder_from_spec
from .router import ChannelRouter, Handled
from .settings import ChannelSettings
from .telegram import TelegramAdapter
from .web import WebAdapter, sanitise_html
from .webhooks import read_event, verify_telegram, verify_webhook, verify_whatsapp_signature, whatsapp_handshake
from .whatsapp import WhatsAppAdapter

__all__ = [
    "CHANNELS",
    "ChannelAdapter",
    "ChannelRouter",
    "ChannelSendError",
    "ChannelSettings",
    "ChannelUser",
    "Handled",
    "HttpResponder",
    "InboundMessage",
    "LLMResponder",
    "Responder",
    "RetryPolicy",
    "SentMessage",
    "TelegramAdapter",
    "WebAdapter",
    "WebhookRejected",
    "WhatsAppAdapter",
    "adapter_for",
    "read_event",
    "responder_from_spec",
    "sanitise_html",
    "verify_telegram",
    "verify_webhook",
    "verify_whatsapp_signature",
    "whatsapp_handshake",
]
