"""One person on two channels: a web chat and a Telegram bot share what they learn, once linked.

    pip install 'learnloop[server]'
    python examples/channels_two_channels.py --db channels.db

It serves learnloop on loopback with a stand-in for the Telegram Bot API (nothing leaves 127.0.0.1), then:
the web visitor says what they like; on Telegram the same person, not yet known as such, asks for ideas;
Telegram's `/link` gives a code, the web chat redeems it, and Telegram's next question is answered with what
the web chat taught. The "agent" here answers with what memory hands it; yours would call its model.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import uvicorn

import learnloop
from learnloop.channels import ChannelSettings, InboundMessage
from learnloop.server import ServiceOptions, create_app
from learnloop.server.keys import Role, issue_key
from learnloop.server.state import service_store_for
from learnloop.turns import Turn

SECRET = "webhook-secret"
sent_to_telegram: list[dict[str, Any]] = []


class FakeTelegram(BaseHTTPRequestHandler):
    """Answers `sendMessage` as the Bot API does, and keeps what the bot sent."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        sent_to_telegram.append(body)
        data = json.dumps({"ok": True, "result": {"message_id": len(sent_to_telegram)}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


async def agent(turn: Turn, message: InboundMessage) -> str:
    """The app's agent: here it only says what memory gave it for this person."""
    known = [item.learning.text for item in turn.retrieval.items] if turn.retrieval else []
    return f"Ideas coming up. What I know about you: {'; '.join(known) or 'nothing yet'}."


def telegram_update(text: str, update_id: int) -> dict[str, Any]:
    chat = {"id": 5550001, "type": "private"}
    sender = {"id": 5550001, "is_bot": False, "first_name": "Ana", "username": "ana_cooks"}
    return {"update_id": update_id, "message": {"message_id": update_id, "from": sender, "chat": chat, "text": text}}


async def main(db: str) -> None:
    telegram_api = ThreadingHTTPServer(("127.0.0.1", 0), FakeTelegram)
    threading.Thread(target=telegram_api.serve_forever, daemon=True).start()
    channels = ChannelSettings(
        telegram_bot_token="123:example",
        telegram_webhook_secret=SECRET,
        telegram_api_base=f"http://127.0.0.1:{telegram_api.server_address[1]}",
    )
    loop = learnloop.open(db)
    await loop.engine.ensure_started()
    app_key = issue_key(loop.tenant, Role.APP, name="web chat")
    await service_store_for(loop).create_key(app_key.record)
    app = create_app(loop, options=ServiceOptions(channels=channels, responder=agent))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    for _ in range(3000):  # up to a minute for the server to bind and start
        if server.started:
            break
        await asyncio.sleep(0.02)
    base = f"http://127.0.0.1:{sock.getsockname()[1]}/api/channels"
    web = httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {app_key.key}"}, timeout=60)
    telegram = httpx.AsyncClient(base_url=base, headers={"X-Telegram-Bot-Api-Secret-Token": SECRET}, timeout=60)
    try:
        said = await web.post(
            "/web/messages",
            json={"channel_user_id": "browser-7f3a", "text": "I prefer vegetarian recipes; I never eat meat."},
        )
        print("web      >", said.json()["parts"][0])
        await loop.turns.drain()  # the turn's learning runs in the background; here we wait for it

        await telegram.post("/telegram/webhook", json=telegram_update("Can you suggest some recipes for dinner?", 1))
        print("telegram >", sent_to_telegram[-1]["text"])

        await telegram.post("/telegram/webhook", json=telegram_update("/link", 2))
        print("telegram >", sent_to_telegram[-1]["text"])
        code = sent_to_telegram[-1]["text"].split("<b>")[1].split("</b>")[0]
        linked = await web.post("/web/messages", json={"channel_user_id": "browser-7f3a", "text": f"/link {code}"})
        print("web      >", linked.json()["parts"][0])

        await telegram.post(
            "/telegram/webhook", json=telegram_update("Can you suggest some recipes for dinner tonight?", 3)
        )
        answer = sent_to_telegram[-1]["text"]
        print("telegram >", answer)
        assert "vegetarian" in answer, "the web chat's learning should reach Telegram after linking"
    finally:
        await web.aclose()
        await telegram.aclose()
        server.should_exit = True
        await serving
        await loop.aclose()
        telegram_api.shutdown()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", default="channels.db", help="the SQLite file learnloop keeps its memory in")
    asyncio.run(main(parser.parse_args().db))
