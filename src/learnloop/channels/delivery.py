"""POSTing a message to a platform's API, with the retries a chat platform needs.

Retried: 429 (after the platform's own wait: Telegram's `parameters.retry_after`, else a `Retry-After`
header, capped at `max_retry_after`), 5xx and connection failures (exponential backoff with jitter), up to
`max_attempts` requests in all. Any other 4xx means the request itself is wrong and is not retried. Giving up
raises `ChannelSendError` with the last status, the attempt count and the platform's own description; the
bot token (which Telegram puts in the URL) and the access token never appear in it.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from ..errors import ChannelSendError
from .base import SentMessage, friendly_error
from .splitting import Markup, format_markdown

__all__ = ["Delivery", "PlatformAdapter", "RetryPolicy"]

logger = logging.getLogger(__name__)
_MAX_DESCRIPTION = 300


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 4
    backoff_base: float = 0.5
    backoff_max: float = 8.0
    max_retry_after: float = 30.0
    timeout: float = 30.0


class Delivery:
    """One platform's HTTP sender. The `httpx.AsyncClient` may be injected; else one is created on first use."""

    def __init__(
        self,
        channel: str,
        *,
        client: httpx.AsyncClient | None = None,
        headers: Mapping[str, str] | None = None,
        secrets: tuple[str, ...] = (),
        policy: RetryPolicy | None = None,
    ) -> None:
        self.channel = channel
        self.policy = policy or RetryPolicy()
        self._client = client
        self._owns_client = client is None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._headers = dict(headers or {})
        self._secrets = tuple(s for s in secrets if s)

    async def post(self, url: str, payload: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
        """The platform's JSON answer and how many requests it took."""
        policy = self.policy
        status: int | None = None
        description = ""
        attempts = 0
        for attempt in range(1, policy.max_attempts + 1):
            attempts = attempt
            try:
                response = await self._get_client().post(url, json=payload, headers=self._headers)
            except httpx.TransportError as exc:
                status, description = None, f"{type(exc).__name__}: {exc}"
                wait = self._backoff(attempt)
            else:
                status = response.status_code
                body = _json(response)
                if response.is_success and body.get("ok", True) is not False:
                    return body, attempt
                description = _description(body, response)
                if status != 429 and status < 500:
                    break
                asked = _retry_after(body, response) if status == 429 else None
                wait = self._backoff(attempt) if asked is None else min(asked, policy.max_retry_after)
            if attempt < policy.max_attempts:
                logger.warning(
                    "%s send failed (%s), attempt %d of %d; retrying in %.2f s",
                    self.channel,
                    status if status is not None else "no answer",
                    attempt,
                    policy.max_attempts,
                    wait,
                )
                await asyncio.sleep(wait)
        reason = f"HTTP {status}" if status is not None else "no answer"
        text = self._redact(description)[:_MAX_DESCRIPTION]
        raise ChannelSendError(
            f"{self.channel}: the message was not delivered after {attempts} attempt(s) ({reason}): {text}",
            channel=self.channel,
            status=status,
            attempts=attempts,
            description=text or None,
        )

    async def aclose(self) -> None:
        """Closes the client this sender created (an injected one belongs to the caller)."""
        client, loop = self._client, self._client_loop
        if self._owns_client and client is not None:
            self._client = self._client_loop = None
            if loop is asyncio.get_running_loop():
                await client.aclose()

    def _get_client(self) -> httpx.AsyncClient:
        if not self._owns_client and self._client is not None:
            return self._client
        # Pooled connections belong to the event loop that opened them: a caller on a new loop (a sync
        # wrapper, a test per loop) gets a fresh client of ours rather than "Event loop is closed".
        loop = asyncio.get_running_loop()
        if self._client is None or self._client.is_closed or self._client_loop is not loop:
            self._client = httpx.AsyncClient(timeout=httpx.Timeout(self.policy.timeout))
            self._client_loop = loop
        return self._client

    def _backoff(self, attempt: int) -> float:
        ceiling = min(self.policy.backoff_max, self.policy.backoff_base * 2.0 ** (attempt - 1))
        return ceiling * random.uniform(0.5, 1.0)

    def _redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text


def _json(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _description(body: Mapping[str, Any], response: httpx.Response) -> str:
    """Telegram: `description`; WhatsApp (Graph API): `error.message`; else the start of the body."""
    error = body.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        code = error.get("code")
        message = error["message"]
        # the Graph API's number says more than its words: 131047 is "outside the 24-hour window"
        return f"{message} (code {code})" if code is not None and str(code) not in message else message
    for candidate in (body.get("description"), error):
        if isinstance(candidate, str) and candidate:
            return candidate
    return response.text.strip()[:_MAX_DESCRIPTION] or response.reason_phrase


def _retry_after(body: Mapping[str, Any], response: httpx.Response) -> float | None:
    parameters = body.get("parameters")
    if isinstance(parameters, dict) and isinstance(parameters.get("retry_after"), int | float):
        return max(0.0, float(parameters["retry_after"]))
    header = response.headers.get("retry-after")
    try:
        return max(0.0, float(header)) if header else None
    except ValueError:
        return None


class PlatformAdapter:
    """What the adapters of platforms reached over HTTP share: a response in the platform's markup cut to its limit,
    and delivered part by part; each platform posts a part its own way (`_send_parts`)."""

    _limit: int
    _markup: Markup
    _delivery: Delivery

    @property
    def message_limit(self) -> int:
        return self._limit

    def format_response(self, markdown: str) -> list[str]:
        return format_markdown(markdown, self._markup, self._limit)

    async def send(self, recipient: str, markdown: str) -> list[SentMessage]:
        return await self._send_parts(recipient, self.format_response(markdown))

    async def send_error(self, recipient: str, error: BaseException) -> list[SentMessage]:
        return await self._send_parts(recipient, self.format_response(friendly_error(error)))

    async def aclose(self) -> None:
        await self._delivery.aclose()

    async def _send_parts(self, recipient: str, parts: list[str]) -> list[SentMessage]:
        raise NotImplementedError
