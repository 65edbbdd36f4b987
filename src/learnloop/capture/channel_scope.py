"""A preference said for one channel stays with that channel (seed 001 §8.8: channel-specific preferences, such as
a format, are kept per channel identity; everything else follows the person).

What a person says on a channel about *that channel* — naming it ("on WhatsApp keep it short") or pointing at
it ("in this chat, plain text please") — is learned with the scope tag `channel:<name>`, and retrieval on another
channel does not serve it (`Filters.channel`). Saying "here" alone is not enough: "I live here" is about a place.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["CHANNEL_TAG_PREFIX", "channel_tag", "said_for_channel", "served_on"]

CHANNEL_TAG_PREFIX = "channel:"

# How people name the channels learnloop ships adapters for; any other channel is matched by its own name
# (the bare words "web" and "api" are too common to mean the channel).
_NAMES: dict[str, tuple[str, ...]] = {
    "telegram": ("telegram",),
    "whatsapp": ("whatsapp", "whats app", "wsp", "wapp"),
    "web": ("web chat", "webchat", "website", "web site", "web app", "browser"),
    "api": (),  # "the API" in a message is about some API, not this channel
}
# "This chat" in the languages the setup and correction rules read; a phrase points at the conversation itself.
_THIS_CHAT = (
    "in this chat",
    "on this chat",
    "in this channel",
    "on this channel",
    "in this app",
    "on this app",
    "en este chat",
    "por este chat",
    "en esta app",
    "in diesem chat",
    "hier im chat",
    "in dieser app",
    "dans ce chat",
    "sur ce chat",
    "dans cette appli",
    "in questa chat",
    "su questa chat",
    "neste chat",
    "nesta conversa",
    "in deze chat",
)


def channel_tag(channel: str) -> str:
    return f"{CHANNEL_TAG_PREFIX}{channel}"


def said_for_channel(message: str, channel: str) -> bool:
    """Whether `message`, sent on `channel`, speaks about that channel: it names it or says "this chat"."""
    if not channel:
        return False
    text = " ".join(message.casefold().split())
    names = _NAMES.get(channel, (channel.casefold(),))
    if any(re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) for name in names):
        return True
    return any(phrase in text for phrase in _THIS_CHAT)


def served_on(tags: Sequence[str], channel: str | None) -> bool:
    """A learning scoped to channels is served on those channels only; with no channel given, everywhere."""
    if channel is None:
        return True
    scoped = [t for t in tags if t.startswith(CHANNEL_TAG_PREFIX)]
    return not scoped or channel_tag(channel) in scoped
