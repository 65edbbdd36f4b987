"""Who answers a channel message. learnloop keeps the memory; the answer comes from the app's own agent.

A responder is an async callable `(turn, message) -> str`: `turn` is the open turn (`turn.context` is the
memory to put before the model's call, `turn.user` the canonical user), `message` the inbound text; it returns
the answer as canonical Markdown, which the channel formats. Three are built in, named by a spec string
(`LEARNLOOP_CHANNEL_RESPONDER`, `learnloop serve --responder`):

- `llm`: the configured chat model (`LEARNLOOP_LLM`) answers, with the turn's context as its system prompt;
- `http:<url>`: learnloop POSTs `{"turn", "user", "channel", "message", "context"}` to the app and takes
  `{"answer": "..."}` (or a plain-text body) back;
- `python:<module>:<function>`: an async function of the app, imported once.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Protocol

import httpx

from ..errors import ConfigurationError, LLMError, ResponderError
from ..llms.base import ChatModel, Message
from .base import InboundMessage

if TYPE_CHECKING:
    from ..turns import Turn

__all__ = ["HttpResponder", "LLMResponder", "Responder", "responder_from_spec"]

_SYSTEM = "You are a helpful assistant. Answer in Markdown."
_MAX_ANSWER = 65_536


class Responder(Protocol):
    def __call__(self, turn: Turn, message: InboundMessage) -> Awaitable[str]: ...


class LLMResponder:
    """The chat model answers, told what memory holds about the person (`turn.context`)."""

    def __init__(self, llm: ChatModel, *, system: str = _SYSTEM) -> None:
        self._llm = llm
        self._system = system

    async def __call__(self, turn: Turn, message: InboundMessage) -> str:
        system = "\n\n".join(part for part in (self._system, turn.context) if part)
        messages = [Message(role="system", content=system), Message(role="user", content=message.text)]
        reply = await self._llm.chat(messages)
        answer = (reply.message.content or "").strip()
        if not answer:
            raise LLMError("the chat model gave an empty answer", model=self._llm.model_id)
        return answer


class HttpResponder:
    """The app's agent behind a URL. Its answer is JSON `{"answer": ...}` or plain text."""

    def __init__(self, url: str, *, timeout: float = 60.0, client: httpx.AsyncClient | None = None) -> None:
        if not url.startswith(("http://", "https://")):
            raise ConfigurationError(f"an http responder needs an http(s) URL, got {url!r}")
        self.url = url
        self._timeout = timeout
        self._client = client

    async def __call__(self, turn: Turn, message: InboundMessage) -> str:
        body = {
            "turn": turn.id,
            "user": turn.row.user,
            "channel": message.channel,
            "message": message.text,
            "context": turn.context,
        }
        client = self._client or httpx.AsyncClient(timeout=self._timeout)
        try:
            response = await client.post(self.url, json=body)
        except httpx.HTTPError as exc:
            raise ResponderError(f"the responder at {self.url} could not be reached: {exc}") from exc
        finally:
            if self._client is None:
                await client.aclose()
        if response.status_code >= 400:
            raise ResponderError(f"the responder at {self.url} answered HTTP {response.status_code}")
        return _answer_of(response)


def _answer_of(response: httpx.Response) -> str:
    answer: Any = response.text
    if response.headers.get("content-type", "").startswith("application/json"):
        try:
            answer = response.json().get("answer")
        except (ValueError, AttributeError) as exc:
            raise ResponderError('the responder must answer {"answer": "..."} or plain text') from exc
    if not isinstance(answer, str) or not answer.strip():
        raise ResponderError("the responder gave no answer")
    return answer.strip()[:_MAX_ANSWER]


def responder_from_spec(spec: str, *, llm: ChatModel | None = None, timeout: float = 60.0) -> Responder:
    """`llm`, `http:<url>` or `python:<module>:<function>` (see the module's docstring)."""
    kind, _, rest = spec.strip().partition(":")
    if kind == "llm" and not rest:
        if llm is None:
            raise ConfigurationError("the 'llm' responder needs a chat model: set LEARNLOOP_LLM")
        return LLMResponder(llm)
    if kind == "http" and rest:
        return HttpResponder(spec.strip()[len("http:") :], timeout=timeout)
    if kind == "python" and rest:
        return _imported(rest)
    raise ConfigurationError(f"unknown responder {spec!r}: use 'llm', 'http:<url>' or 'python:<module>:<function>'")


def _imported(path: str) -> Responder:
    module_name, _, attribute = path.rpartition(":")
    if not module_name or not attribute:
        raise ConfigurationError(f"a python responder is 'python:<module>:<function>', got 'python:{path}'")
    try:
        found = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ConfigurationError(f"the responder python:{path} could not be imported: {exc}") from exc
    if not callable(found) or not (inspect.iscoroutinefunction(found) or inspect.iscoroutinefunction(found.__call__)):
        raise ConfigurationError(f"the responder python:{path} must be an async function of (turn, message)")
    responder: Responder = found
    return responder
