"""A loopback HTTP server standing in for the Telegram Bot API and the WhatsApp Cloud API.

It records every request (path, headers, JSON body) and answers from a script: queued answers first (a
status, a JSON body, headers), then the platform's usual success body. Tests point the real adapters at it
through their configurable base URL; nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Answer:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any


class FakePlatform:
    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.script: deque[Answer] = deque()
        self.always: Answer | None = None  # answer every request with this (after the script runs out)
        self._lock = threading.Lock()
        platform = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                answer = platform._record(Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                data = json.dumps(answer.body).encode()
                self.send_response(answer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> FakePlatform:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def then(self, *answers: Answer) -> FakePlatform:
        self.script.extend(answers)
        return self

    def _record(self, request: Recorded) -> Answer:
        with self._lock:
            self.requests.append(request)
            number = len(self.requests)
            if self.script:
                return self.script.popleft()
            if self.always is not None:
                return self.always
        if request.path.endswith("/sendMessage"):
            return Answer(body={"ok": True, "result": {"message_id": number, "chat": {"id": request.body["chat_id"]}}})
        to = request.body.get("to") if isinstance(request.body, dict) else None
        return Answer(
            body={
                "messaging_product": "whatsapp",
                "contacts": [{"input": to, "wa_id": to}],
                "messages": [{"id": f"wamid.{number}"}],
            }
        )
