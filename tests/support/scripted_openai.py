"""A scripted OpenAI-compatible HTTP server on loopback: the test stand-in for a hosted model.

No hosted LLM is reachable from the tests, so they drive learnloop's real OpenAI client against this server
over real HTTP. It speaks the OpenAI wire format for `POST /v1/chat/completions` and `POST /v1/embeddings`
(plus `GET /v1/models`), answers chat requests from a script, and records every request it receives.

    from tests.support.scripted_openai import Reply, ScriptedOpenAI

    async def test_it(scripted_openai: ScriptedOpenAI) -> None:
        scripted_openai.chat.reply("hello", Reply.tool_call("save_learning", {"text": "..."}))
        scripted_openai.chat.on("weather", Reply.json({"answer": 42}))  # last user message contains
        scripted_openai.chat.respond(lambda request: None)  # a callable rule; None passes
        llm = resolve_llm("openai:gpt-test", scripted_openai.settings())
        ...
        assert scripted_openai.chat_requests[0]["messages"][-1]["content"] == "..."

A chat request is answered by the first matching rule (`on`, `respond`, in the order added), else by the
next queued reply (`reply`), else by the script's default: HTTP 501 naming the request, so an unscripted
call fails loudly and is not retried. Embedding requests get deterministic hashed bag-of-words vectors
(texts sharing words have a positive cosine) unless their own script (`server.embeddings`) says otherwise.

Use it as the `scripted_openai` pytest fixture (this module is a pytest plugin) or as a context manager:
`with ScriptedOpenAI() as server: ...`.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

import pytest

from learnloop.config import Settings

__all__ = [
    "RecordedRequest",
    "Reply",
    "Script",
    "ScriptedOpenAI",
    "hash_embedding",
    "scripted_openai",
]

Request = dict[str, Any]
Producer = Callable[[Request], Any]  # returns Reply | str | dict | None

_CHAT_PATH = "/v1/chat/completions"
_EMBEDDINGS_PATH = "/v1/embeddings"
_MODELS_PATH = "/v1/models"


@dataclass(frozen=True)
class Reply:
    """One scripted answer. Build it with the class methods; `.after(seconds)` delays it."""

    status: int = 200
    message: Mapping[str, Any] | None = None  # chat: the assistant message, wrapped in a completion
    finish_reason: str = "stop"
    vectors: tuple[tuple[float, ...], ...] | None = None  # embeddings: rows in input order
    body: Any = None  # any JSON body, sent as-is
    raw: bytes | None = None  # any bytes, sent as-is
    content_type: str = "application/json"
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    disconnect: bool = False

    @classmethod
    def text(cls, content: str) -> Reply:
        return cls(message={"role": "assistant", "content": content})

    @classmethod
    def json(cls, value: Any) -> Reply:
        """A JSON value serialised as the message content (what a `json_output` call expects)."""
        return cls.text(json.dumps(value))

    @classmethod
    def tool_call(cls, name: str, arguments: Mapping[str, Any] | str | None = None, *, id: str | None = None) -> Reply:
        """One tool call; `arguments` as a str is sent verbatim (to script invalid JSON)."""
        return cls.tool_calls((name, {} if arguments is None else arguments, id))

    @classmethod
    def tool_calls(cls, *calls: tuple[Any, ...], content: str | None = None) -> Reply:
        """Several tool calls, each `(name, arguments)` or `(name, arguments, id)`."""
        wire = []
        for call in calls:
            name, arguments, call_id = (*call, None)[:3]
            text = arguments if isinstance(arguments, str) else json.dumps(arguments)
            wire.append({"id": call_id, "type": "function", "function": {"name": name, "arguments": text}})
        return cls(message={"role": "assistant", "content": content, "tool_calls": wire}, finish_reason="tool_calls")

    @classmethod
    def error(
        cls,
        status: int,
        message: str = "scripted error",
        *,
        type: str = "server_error",
        code: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        """An HTTP error with OpenAI's error body `{"error": {"message", "type", "param", "code"}}`."""
        error = {"message": message, "type": type, "param": None, "code": code}
        return cls(status=status, body={"error": error}, headers=dict(headers or {}))

    @classmethod
    def json_body(cls, body: Any, *, status: int = 200) -> Reply:
        """Any JSON body instead of a completion (malformed shapes, custom embeddings responses)."""
        return cls(status=status, body=body)

    @classmethod
    def raw_body(cls, raw: str | bytes, *, status: int = 200, content_type: str = "text/plain") -> Reply:
        return cls(status=status, raw=raw.encode() if isinstance(raw, str) else raw, content_type=content_type)

    @classmethod
    def embeddings(cls, vectors: list[list[float]]) -> Reply:
        return cls(vectors=tuple(tuple(row) for row in vectors))

    @classmethod
    def hang_up(cls) -> Reply:
        """Close the connection without answering (a dropped connection, as seen by the client)."""
        return cls(disconnect=True)

    def after(self, seconds: float) -> Reply:
        return replace(self, delay=seconds)


def _as_reply(value: Any) -> Reply:
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply.text(value)
    if isinstance(value, dict):
        return Reply.json(value)
    raise TypeError(f"a scripted reply must be a Reply, str or dict, got {type(value).__name__}")


@dataclass
class _Rule:
    matches: Callable[[Request], bool]
    produce: Producer
    remaining: int | None


class Script:
    """What one endpoint answers: rules first, then queued replies, then the default."""

    def __init__(self, default: Producer) -> None:
        self._lock = threading.RLock()  # re-entrant: a rule's callable may script further replies
        self._rules: list[_Rule] = []
        self._queue: deque[Any] = deque()
        self._default = default

    def reply(self, *replies: Any) -> Script:
        """Queue replies (Reply, str = text, dict = JSON content, or a callable of the request) in order."""
        with self._lock:
            self._queue.extend(replies)
        return self

    def on(self, match: str | Callable[[Request], bool], reply: Any, *, times: int | None = None) -> Script:
        """Answer requests whose last user message contains `match` (or for which `match(request)` holds)."""
        matches = match if callable(match) else (lambda request: match in last_user_message(request))
        produce: Producer = reply if callable(reply) else (lambda _request: reply)
        with self._lock:
            self._rules.append(_Rule(matches, produce, times))
        return self

    def respond(self, handler: Callable[[Request], Any]) -> Script:
        """A rule that computes the reply from the request; returning None passes to the next rule."""
        return self.on(lambda _request: True, handler)

    def default(self, reply: Any) -> Script:
        """What to answer when no rule matches and the queue is empty."""
        with self._lock:
            self._default = reply if callable(reply) else (lambda _request: reply)
        return self

    @property
    def pending(self) -> int:
        """Queued replies not yet used."""
        with self._lock:
            return len(self._queue)

    def next_reply(self, request: Request) -> Reply:
        with self._lock:
            for rule in self._rules:
                if rule.remaining == 0 or not rule.matches(request):
                    continue
                produced = rule.produce(request)
                if produced is None:
                    continue
                if rule.remaining is not None:
                    rule.remaining -= 1
                return _as_reply(produced)
            if self._queue:
                queued = self._queue.popleft()
                return _as_reply(queued(request) if callable(queued) else queued)
            return _as_reply(self._default(request))


def last_user_message(request: Request) -> str:
    for message in reversed(request.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


def hash_embedding(text: str, dimension: int) -> list[float]:
    """A deterministic stand-in for a remote embedding: feature-hashed words, unit length.

    Texts sharing words point in similar directions, which is enough for dedupe and recall tests; it is
    not a language model and must never be used outside tests.
    """
    vector = [0.0] * dimension
    for token in re.findall(r"\w+", text.lower()) or [text]:
        digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
        index = int.from_bytes(digest[:4], "little") % dimension
        vector[index] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: Mapping[str, str]  # lower-case names
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


class ScriptedOpenAI:
    """The server. `base_url` ends in `/v1`; `chat` and `embeddings` are the two endpoints' scripts."""

    def __init__(self, *, embedding_dimension: int = 64, model: str = "scripted-model") -> None:
        self.embedding_dimension = embedding_dimension
        self.model = model
        self.chat = Script(self._unscripted)
        self.embeddings = Script(self._hashed_embeddings)
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._ids = 0
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle -------------------------------------------------------------------------------------

    def start(self) -> ScriptedOpenAI:
        handler = type("_Handler", (_Handler,), {"owner": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False  # delayed replies must not hold up stop()
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.01},
            daemon=True,
            name="scripted-openai",
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping on a scripted delay
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> ScriptedOpenAI:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # ---- what tests use --------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the scripted server is not running")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def reply(self, *replies: Any) -> ScriptedOpenAI:
        """Shorthand for `chat.reply(...)`."""
        self.chat.reply(*replies)
        return self

    def settings(self, **changes: Any) -> Settings:
        """Settings pointing learnloop's OpenAI clients at this server."""
        values: dict[str, Any] = {"openai_base_url": self.base_url, "openai_api_key": "sk-scripted-test"}
        return Settings(**(values | changes))

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[Request]:
        """JSON bodies of the chat completion requests, in arrival order."""
        return [r.json for r in self.requests if r.path == _CHAT_PATH]

    @property
    def embedding_requests(self) -> list[Request]:
        return [r.json for r in self.requests if r.path == _EMBEDDINGS_PATH]

    # ---- serving -----------------------------------------------------------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            self._ids += 1
            return f"{prefix}{self._ids}"

    def _unscripted(self, request: Request) -> Reply:
        return Reply.error(
            501,
            f"scripted_openai: no reply scripted for this request (last user message: "
            f"{last_user_message(request)[:200]!r})",
            type="unscripted",
        )

    def _hashed_embeddings(self, request: Request) -> Reply:
        texts = request.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts) or not texts:
            return Reply.error(400, "'input' must be a string or a non-empty list of strings", type="invalid")
        dimension = int(request.get("dimensions") or self.embedding_dimension)
        return Reply.embeddings([hash_embedding(t, dimension) for t in texts])

    def render(self, path: str, request: Request, reply: Reply) -> tuple[int, dict[str, str], bytes]:
        """Status, headers and body bytes for a reply to a request on `path`."""
        headers = {"Content-Type": reply.content_type, **reply.headers}
        if reply.raw is not None:
            return reply.status, headers, reply.raw
        if reply.body is not None:
            body: Any = reply.body
        elif reply.message is not None and path == _CHAT_PATH:
            body = self._completion(request, reply)
        elif reply.vectors is not None and path == _EMBEDDINGS_PATH:
            body = self._embeddings(request, reply.vectors)
        else:
            body = {"error": {"message": f"scripted_openai: {reply!r} cannot answer {path}", "type": "script"}}
            return 500, {"Content-Type": "application/json"}, json.dumps(body).encode()
        return reply.status, headers, json.dumps(body).encode()

    def _completion(self, request: Request, reply: Reply) -> dict[str, Any]:
        assert reply.message is not None
        message = dict(reply.message)
        if message.get("tool_calls"):
            message["tool_calls"] = [
                {**call, "id": call["id"] or self._next_id("call_")} for call in message["tool_calls"]
            ]
        prompt_tokens = sum(len(str(m.get("content") or "").split()) for m in request.get("messages") or [])
        completion_tokens = len(str(message.get("content") or "").split())
        return {
            "id": self._next_id("chatcmpl-"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", self.model),
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason, "logprobs": None}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def _embeddings(self, request: Request, vectors: tuple[tuple[float, ...], ...]) -> dict[str, Any]:
        data = [{"object": "embedding", "index": i, "embedding": list(v)} for i, v in enumerate(vectors)]
        return {
            "object": "list",
            "data": data,
            "model": request.get("model", self.model),
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        }


class _Handler(BaseHTTPRequestHandler):
    owner: ScriptedOpenAI
    protocol_version = "HTTP/1.1"  # keep-alive, like the real API; httpx pools connections
    timeout = 5  # idle keep-alive connections end instead of holding a thread forever
    # Headers and body go out in two writes; with Nagle on, the body waits ~40 ms for the client's ACK.
    disable_nagle_algorithm = True

    def do_GET(self) -> None:
        if self.path.split("?")[0] == _MODELS_PATH:
            models = {"object": "list", "data": [{"id": self.owner.model, "object": "model"}]}
            self._send(200, {"Content-Type": "application/json"}, json.dumps(models).encode())
        else:
            self._not_found()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?")[0]
        self.owner._record(RecordedRequest("POST", path, {k.lower(): v for k, v in self.headers.items()}, raw))
        scripts = {_CHAT_PATH: self.owner.chat, _EMBEDDINGS_PATH: self.owner.embeddings}
        if path not in scripts:
            self._not_found()
            return
        try:
            request = json.loads(raw)
        except ValueError:
            error = {"error": {"message": "request body is not JSON", "type": "invalid_request_error"}}
            self._send(400, {"Content-Type": "application/json"}, json.dumps(error).encode())
            return
        try:
            reply = scripts[path].next_reply(request)
            status, headers, body = self.owner.render(path, request, reply)
        except Exception as exc:  # a broken script must fail the test loudly, and without retries (501)
            message = f"scripted_openai: the script raised {type(exc).__name__}: {exc}"
            error = {"error": {"message": message, "type": "script_error"}}
            self._send(501, {"Content-Type": "application/json"}, json.dumps(error).encode())
            return
        if reply.delay and self.owner._stopping.wait(reply.delay):
            self.close_connection = True
            return
        if reply.disconnect:
            self.close_connection = True  # the server closes the socket without a response
            return
        self._send(status, headers, body)

    def _not_found(self) -> None:
        error = {"error": {"message": f"no route {self.command} {self.path}", "type": "invalid_request_error"}}
        self._send(404, {"Content-Type": "application/json"}, json.dumps(error).encode())

    def _send(self, status: int, headers: Mapping[str, str], body: bytes) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean; requests are recorded on the server instead


@pytest.fixture
def scripted_openai() -> Iterator[ScriptedOpenAI]:
    """A running scripted server, stopped after the test."""
    with ScriptedOpenAI() as server:
        yield server
