"""A chat model for any OpenAI-compatible `/chat/completions` endpoint, on plain httpx (no `openai` SDK).

Works with the hosted API and with local servers that speak the same wire format (llama.cpp, Ollama, vLLM).
`OpenAIEndpoint` holds the HTTP plumbing (auth, timeouts, retries, error mapping) that the embeddings client
in `learnloop.embedders.openai` shares.

Tool-call arguments arrive as a JSON string. When a model sends arguments that are not a JSON object, the
call is kept rather than dropped: `arguments` is `{}` and `raw_arguments` holds exactly what the model sent,
so the caller, which validates arguments against the tool's schema anyway, can report the problem back to
the model.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import logging
import random
import ssl
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from ..config import Settings
from ..errors import ConfigurationError, LearnloopError, LLMError
from .base import ChatModel, ChatResponse, Message, ToolCall, ToolSpec

__all__ = ["DEFAULT_BASE_URL", "OpenAIChat", "OpenAIEndpoint", "connection_from", "from_spec"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
logger = logging.getLogger(__name__)

# Rate limiting and transient server trouble; every other 4xx means the request itself is wrong.
RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
_MAX_ERROR_TEXT = 500


class OpenAIEndpoint:
    """POSTs JSON to an OpenAI-compatible API and returns the decoded JSON object, or raises `error`.

    Retries (at most `max_attempts` requests in all) on 429/500/502/503/504 and on connection failures,
    with exponential backoff and jitter, or after the server's `Retry-After` when it asks for at most
    `max_retry_after` seconds; a longer wait is reported as a failure rather than stalling the caller.
    A read timeout is not retried: the server is up but slow, and retrying would multiply the caller's
    wait by the number of attempts.
    """

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        timeout: float,
        error: type[LearnloopError],
        what: str,
        max_attempts: int = 3,
        backoff_base: float = 0.5,
        backoff_max: float = 8.0,
        max_retry_after: float = 20.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key or None
        self._timeout = timeout
        self._error = error
        self._what = what
        self._max_attempts = max(1, max_attempts)
        self._backoff_base = backoff_base
        self._backoff_max = backoff_max
        self._max_retry_after = max_retry_after
        self._client: httpx.AsyncClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    async def post(self, path: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        url = f"{self.base_url}/{path.lstrip('/')}"
        client = self._get_client()
        for attempt in range(1, self._max_attempts + 1):
            last = attempt == self._max_attempts
            try:
                response = await client.post(url, json=payload)
            except httpx.TimeoutException as exc:
                if isinstance(exc, httpx.ConnectTimeout) and not last:
                    await self._pause(attempt, self._backoff(attempt), type(exc).__name__)
                    continue
                raise self._fail(f"timed out after {self._timeout:g} s ({type(exc).__name__})", url) from exc
            except httpx.TransportError as exc:
                if not last:
                    await self._pause(attempt, self._backoff(attempt), type(exc).__name__)
                    continue
                raise self._fail(f"connection failed: {type(exc).__name__}: {exc}", url) from exc

            if response.status_code in RETRYABLE_STATUS and not last:
                wait = _retry_after(response.headers)
                if wait is None or wait <= self._max_retry_after:
                    reason = f"HTTP {response.status_code}"
                    await self._pause(attempt, self._backoff(attempt) if wait is None else wait, reason)
                    continue
                raise self._status_error(response, url, f" (asked to retry after {wait:g} s)")
            if response.is_success:
                return self._decode(response, url)
            raise self._status_error(response, url)
        raise AssertionError("unreachable: the last attempt always returns or raises")

    async def aclose(self) -> None:
        client, loop = self._client, self._client_loop
        self._client = self._client_loop = None
        # A client opened on another (by now usually closed) loop cannot be closed from this one; its
        # sockets are released when it is collected.
        if client is not None and loop is asyncio.get_running_loop():
            await client.aclose()

    def _get_client(self) -> httpx.AsyncClient:
        # Pooled connections belong to the event loop that opened them. A caller that runs us on a new loop
        # (a sync wrapper, a test per loop) gets a fresh client instead of "Event loop is closed" errors.
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop or self._client.is_closed:
            headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self._timeout), headers=headers, verify=_shared_ssl_context()
            )
            self._client_loop = loop
        return self._client

    async def _pause(self, attempt: int, seconds: float, reason: str) -> None:
        logger.warning(
            "%s request failed (%s), attempt %d of %d; retrying in %.2f s",
            self._what,
            reason,
            attempt,
            self._max_attempts,
            seconds,
        )
        await asyncio.sleep(seconds)

    def _backoff(self, attempt: int) -> float:
        ceiling = min(self._backoff_max, self._backoff_base * 2.0 ** (attempt - 1))
        return ceiling * random.uniform(0.5, 1.0)

    def _decode(self, response: httpx.Response, url: str) -> dict[str, Any]:
        try:
            body = response.json()
        except ValueError as exc:
            raise self._fail(f"answered with non-JSON: {_snippet(response.text)}", url) from exc
        if not isinstance(body, dict):
            raise self._fail(f"answered with JSON that is not an object: {_snippet(response.text)}", url)
        return body

    def _status_error(self, response: httpx.Response, url: str, note: str = "") -> LearnloopError:
        provider_message = _provider_message(response)
        return self._fail(
            f"failed with HTTP {response.status_code}{note}: {provider_message}",
            url,
            status_code=response.status_code,
            provider_message=self._redact(provider_message),
        )

    def fail(self, reason: str, **details: Any) -> LearnloopError:
        """An error of this endpoint's class for a response that was received but is unusable."""
        return self._fail(reason, self.base_url, **details)

    def _fail(self, reason: str, url: str, **details: Any) -> LearnloopError:
        shown_url = str(httpx.URL(url).copy_with(userinfo=b""))
        return self._error(self._redact(f"{self._what} request to {shown_url} {reason}"), **details)

    def _redact(self, text: str) -> str:
        # Some servers echo the credentials they rejected; error messages end up in logs.
        return text.replace(self._api_key, "***") if self._api_key else text


@functools.cache
def _shared_ssl_context() -> ssl.SSLContext:
    # httpx's default, built once: loading the CA bundle costs ~35 ms per client otherwise.
    return httpx.create_ssl_context()


def _retry_after(headers: httpx.Headers) -> float | None:
    """Seconds the server asks us to wait: `retry-after-ms` (OpenAI), else `Retry-After` seconds or date."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _provider_message(response: httpx.Response) -> str:
    """The human-readable reason from the error shapes OpenAI-compatible servers use, else the raw body."""
    try:
        body = response.json()
    except ValueError:
        return _snippet(response.text) or response.reason_phrase
    if isinstance(body, dict):
        error = body.get("error")
        nested = error.get("message") if isinstance(error, dict) else None
        for candidate in (nested, error, body.get("message"), body.get("detail")):
            if isinstance(candidate, str) and candidate:
                return candidate
    return _snippet(response.text)


def _snippet(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _MAX_ERROR_TEXT else text[:_MAX_ERROR_TEXT] + "…"


class OpenAIChat:
    """`ChatModel` over `POST {base_url}/chat/completions`."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_attempts: int = 3,
        backoff_base: float = 0.5,
    ) -> None:
        if not model:
            raise ConfigurationError("the openai LLM needs a model name: 'openai:<model>', e.g. 'openai:gpt-4o-mini'")
        self._model = model
        self._endpoint = OpenAIEndpoint(
            base_url=base_url,
            api_key=api_key,
            timeout=timeout,
            error=LLMError,
            what=f"chat ({model})",
            max_attempts=max_attempts,
            backoff_base=backoff_base,
        )

    @property
    def model_id(self) -> str:
        return f"openai:{self._model}"

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        json_output: bool = False,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> ChatResponse:
        payload: dict[str, Any] = {"model": self._model, "messages": [_wire_message(m) for m in messages]}
        if tools:
            payload["tools"] = [_wire_tool(t) for t in tools]
        if json_output:
            payload["response_format"] = {"type": "json_object"}
        if temperature is not None:
            payload["temperature"] = temperature
        if max_tokens is not None:
            payload["max_tokens"] = max_tokens
        body = await self._endpoint.post("chat/completions", payload)
        try:
            return _parse_completion(body)
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise self._endpoint.fail(f"answered with an unexpected completion shape: {exc!r}") from exc

    async def aclose(self) -> None:
        await self._endpoint.aclose()


def from_spec(model: str, settings: Settings) -> ChatModel:
    """The `learnloop.llms` entry point: `openai:<model>` with the endpoint and key from settings."""
    base_url, api_key = connection_from(settings)
    return OpenAIChat(model, base_url=base_url, api_key=api_key, timeout=settings.request_timeout)


def connection_from(settings: Settings) -> tuple[str, str | None]:
    """Base URL and API key; the hosted API without a key fails now rather than with a 401 per call."""
    base_url = settings.openai_base_url or DEFAULT_BASE_URL
    if base_url.rstrip("/") == DEFAULT_BASE_URL and not settings.openai_api_key:
        raise ConfigurationError(
            "the OpenAI API needs a key: set OPENAI_API_KEY (or point OPENAI_BASE_URL at a compatible server)"
        )
    return base_url, settings.openai_api_key


# ---- wire format -------------------------------------------------------------------------------------


def _wire_message(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        # `name` is not part of the tool-message schema; strict servers reject unknown fields.
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content or ""}
    wire: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        wire["tool_calls"] = [_wire_tool_call(call) for call in message.tool_calls]
    elif message.content is None:
        wire["content"] = ""
    if message.name:
        wire["name"] = message.name
    return wire


def _wire_tool_call(call: ToolCall) -> dict[str, Any]:
    # Parsed arguments win; a call the model sent with unparseable arguments goes back verbatim.
    arguments = json.dumps(call.arguments) if call.arguments else (call.raw_arguments or "{}")
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": arguments}}


def _wire_tool(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
    }


def _parse_completion(body: Mapping[str, Any]) -> ChatResponse:
    choice = body["choices"][0]
    raw = choice["message"]
    if not isinstance(raw, dict):
        raise TypeError(f"message is {type(raw).__name__}, not an object")
    message = Message(
        role="assistant",
        content=_text_content(raw.get("content")),
        tool_calls=[_parse_tool_call(c) for c in raw.get("tool_calls") or []],
    )
    usage = body.get("usage")
    return ChatResponse(
        message=message,
        finish_reason=choice.get("finish_reason"),
        # Only the flat counters; providers add nested detail objects.
        usage={k: v for k, v in usage.items() if isinstance(v, int)} if isinstance(usage, dict) else {},
        model=body.get("model"),
    )


def _text_content(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: [{"type": "text", "text": "..."}]
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    raise TypeError(f"content is {type(content).__name__}")


def _parse_tool_call(raw: Mapping[str, Any]) -> ToolCall:
    function = raw["function"]
    arguments = function.get("arguments")
    if isinstance(arguments, dict):  # some compatible servers send an object instead of a JSON string
        return ToolCall(
            id=_call_id(raw), name=function["name"], arguments=arguments, raw_arguments=json.dumps(arguments)
        )
    text = arguments if isinstance(arguments, str) else ""
    try:
        parsed = json.loads(text) if text.strip() else {}
    except ValueError:
        parsed = None
    return ToolCall(
        id=_call_id(raw),
        name=function["name"],
        arguments=parsed if isinstance(parsed, dict) else {},
        raw_arguments=text,
    )


def _call_id(raw: Mapping[str, Any]) -> str:
    # Tool results are matched to calls by id; a server that omits it still needs one we can send back.
    call_id = raw.get("id")
    return call_id if isinstance(call_id, str) and call_id else f"call_{uuid.uuid4().hex[:24]}"
