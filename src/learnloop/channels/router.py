"""The channel router: seed 001 §7 for one inbound message, whatever the platform.

    router = ChannelRouter(loop, respond)                     # respond: the app's agent (see `responders`)
    delivered = await router.handle(telegram, update)         # a verified webhook's event

For each text message: the sender is resolved to the canonical user (`loop.identities`, step 0); `/link`
commands link identities without a turn; otherwise a turn opens for the canonical user on this channel (the
memory the agent sees is the person's, whichever channel they write from), the responder answers, the turn is
finished (learning, once) and the answer is formatted and sent (step 6). The same message again within the
duplicate window (seed §8.6, any channel) learns nothing and is answered with the first turn's response.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import (
    ChannelSendError,
    ConflictError,
    LearnloopError,
    LinkCodeInvalid,
    LinkLocked,
    ResponderError,
    ValidationError,
)
from ..stores.conversations import RESPONSE_REDACTED
from .base import ChannelAdapter, InboundMessage, SentMessage
from .responders import Responder

if TYPE_CHECKING:
    from ..loop import Loop
    from ..turns import Turn

__all__ = ["ChannelRouter", "Handled"]

log = logging.getLogger("learnloop.channels")

_PAUSED = "This chat is paused: I'm not using or keeping any memory here."
_LINK = "/link"
_UNLINK = "/unlink"
# A duplicate that arrives while the first turn is still being answered waits this long for its answer.
_DUPLICATE_WAIT_S = 10.0
_DUPLICATE_POLL_S = 0.25


@dataclass(frozen=True)
class Handled:
    """What became of one inbound message: `kind` is `turn`, `duplicate`, `redelivered`, `link`, `paused` or `error`."""

    kind: str
    user: str
    channel: str
    turn: str | None = None
    duplicate_of: str | None = None
    sent: list[SentMessage] = field(default_factory=list)
    error: str | None = None


class ChannelRouter:
    def __init__(self, loop: Loop, respond: Responder, *, duplicate_wait_s: float = _DUPLICATE_WAIT_S) -> None:
        self._loop = loop
        self._respond = respond
        self._duplicate_wait_s = duplicate_wait_s

    async def handle(self, adapter: ChannelAdapter, event: Mapping[str, Any]) -> list[Handled]:
        """Every text message an inbound event carries, in order; other events (receipts, media) give none."""
        return [await self.handle_message(adapter, message) for message in adapter.parse(event)]

    async def handle_message(self, adapter: ChannelAdapter, message: InboundMessage) -> Handled:
        sender = message.sender
        who = await self._loop.identities.resolve(
            sender.channel,
            sender.channel_user_id,
            username=sender.username,
            display_name=sender.display_name,
            metadata=dict(sender.metadata) or None,
        )
        command, argument = _command(message.text)
        try:
            if command in (_LINK, _UNLINK):
                return await self._link(adapter, message, who.user, command, argument)
            if not who.active:  # switched off for learning (`identities.set_active`): no turn, no memory
                sent = await adapter.send(message.recipient, _PAUSED)
                return Handled("paused", who.user, adapter.channel, sent=sent)
            return await self._turn(adapter, message, who.user)
        except ChannelSendError:
            raise  # the platform refused the answer itself: telling the person would fail the same way
        except LearnloopError as exc:
            # The person hears that something went wrong, in words; the platform hears 200 (a retry would
            # only meet the duplicate window). The error is logged with its kind, never the message text.
            where = {"event": "channel_turn_failed", "channel": adapter.channel, "code": exc.code}
            log.warning("channel_turn_failed", extra=where)
            sent = await adapter.send_error(message.recipient, exc)
            return Handled("error", who.user, adapter.channel, sent=sent, error=exc.code)

    async def _turn(self, adapter: ChannelAdapter, message: InboundMessage, user: str) -> Handled:
        # The platform's message id names the turn: an event delivered again, however late, is the same turn.
        turn_id = _delivery_id(adapter.channel, message)
        try:
            turn = await self._loop.turns.begin(
                user, message.text, session=adapter.channel, channel=adapter.channel, id=turn_id
            )
        except ConflictError:
            if turn_id is None:
                raise
            return await self._redelivered(adapter, message, user, turn_id)
        if turn.duplicate_of is not None:
            # Learned once already; the person still gets an answer: the first one, or a fresh one when the
            # first is not coming (abandoned, still open after the wait) or was stored only in redacted form.
            answer = await self._sent_answer(turn.duplicate_of) or await self._answer(turn, message)
            sent = await adapter.send(message.recipient, answer)
            return Handled("duplicate", user, adapter.channel, turn.id, turn.duplicate_of, sent)
        answer = await self._answer(turn, message)
        await turn.finish(answer)
        sent = await adapter.send(message.recipient, answer)
        return Handled("turn", user, adapter.channel, turn.id, None, sent)

    async def _redelivered(self, adapter: ChannelAdapter, message: InboundMessage, user: str, turn_id: str) -> Handled:
        """An event the platform sent again: its answer again once there is one; nothing is learned twice. While
        the first delivery is still being answered (the platform gave up waiting), that one sends the answer."""
        answer = await self._sent_answer(turn_id)
        sent = await adapter.send(message.recipient, answer) if answer else []
        return Handled("redelivered", user, adapter.channel, turn_id, None, sent)

    async def _answer(self, turn: Turn, message: InboundMessage) -> str:
        try:
            return await self._respond(turn, message)
        except LearnloopError:
            raise
        except Exception as exc:  # the app's code: its failure is the responder's, not the service's
            raise ResponderError(f"the responder failed: {type(exc).__name__}") from exc

    async def _sent_answer(self, turn_id: str) -> str | None:
        """The answer turn `turn_id` sent, waiting a little while it is still being answered; None when it is not
        coming (still open after the wait, abandoned) or was stored only in redacted form."""
        waited = 0.0
        while True:
            turn = await self._loop.turns.get(turn_id)
            if turn.status != "open" or waited >= self._duplicate_wait_s:
                return None if turn.meta.get(RESPONSE_REDACTED) else turn.response
            await asyncio.sleep(_DUPLICATE_POLL_S)
            waited += _DUPLICATE_POLL_S

    async def _link(
        self, adapter: ChannelAdapter, message: InboundMessage, user: str, command: str, code: str
    ) -> Handled:
        identities = self._loop.identities
        sender = message.sender
        if command == _UNLINK:
            try:
                user = (await identities.unlink(sender.channel, sender.channel_user_id)).user
                text = "This chat is no longer linked: what you taught me stays with your other channels."
            except ValidationError:  # its user's only identity
                text = "This chat isn't linked to another one: there is nothing to unlink."
        elif not code:
            issued = await identities.issue_link_code(sender.channel, sender.channel_user_id)
            minutes = max(1, round((issued.expires_at - self._loop.engine.clock()).total_seconds() / 60))
            text = (
                f"Your link code is **{issued.code}**. Send `/link {issued.code}` from your other channel "
                f"within {minutes} minutes to use the same memory there."
            )
        else:
            try:
                user = (await identities.redeem_link_code(sender.channel, sender.channel_user_id, code)).user
                text = "Linked: I now know you here as on your other channel."
            except LinkLocked:
                text = "Too many wrong codes: linking is paused for a while."
            except LinkCodeInvalid:
                text = "That code is wrong, used or expired. Ask for a new one with /link on your other channel."
        sent = await adapter.send(message.recipient, text)
        return Handled("link", user, adapter.channel, sent=sent)


def _command(text: str) -> tuple[str, str]:
    """`("/link", "CODE")` from "/link CODE", "/link\\nCODE" or Telegram's "/link@SomeBot CODE"; else ("", "")."""
    words = text.split()
    if not words or not words[0].startswith("/"):
        return "", ""
    command = words[0].split("@", 1)[0].casefold()
    return command, " ".join(words[1:2])


def _delivery_id(channel: str, message: InboundMessage) -> str | None:
    """A turn id from the platform's own message id (None when the channel gives none, as the web chat)."""
    if not message.message_id:
        return None
    key = f"{channel}\x1f{message.recipient}\x1f{message.message_id}".encode()
    return "msg-" + hashlib.sha256(key).hexdigest()[:40]
