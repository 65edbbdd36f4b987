"""Requests over one kept-alive HTTP/1.1 connection, to show that a bad request does not break the next one.

`http.client` reconnects silently when a server closes the connection; `OneConnection` refuses to, so a
connection the server reset or closed after an error fails the test instead of hiding behind a new socket.
"""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

__all__ = ["Answer", "OneConnection"]


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class OneConnection:
    def __init__(self, base_url: str, key: str | None = None, timeout: float = 30.0) -> None:
        parts = urlsplit(base_url)
        assert parts.hostname is not None and parts.port is not None
        self._conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
        self._conn.auto_open = 0  # a closed connection raises instead of being reopened
        self._conn.connect()
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> Answer:
        self._conn.request(method, path, body=body, headers=self._headers | (headers or {}))
        response = self._conn.getresponse()
        data = response.read()
        assert not response.will_close, f"the server closed the connection after {method} {path}"
        return Answer(response.status, data)

    def post_json(self, path: str, raw: str | bytes) -> Answer:
        """POST raw JSON text: lone surrogates and other hostile escapes go out exactly as written."""
        body = raw.encode("utf-8") if isinstance(raw, str) else raw
        return self.request("POST", path, body, {"Content-Type": "application/json"})

    def get(self, path: str) -> Answer:
        return self.request("GET", path)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> OneConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
