"""The OpenAI-compatible chat client against a scripted server over real HTTP on loopback."""

from __future__ import annotations

import asyncio
import gc
import socket
import time
from collections.abc import AsyncIterator

import pytest

from learnloop.config import Settings
from learnloop.errors import ConfigurationError, LLMError
from learnloop.llms import ChatModel, Message, ToolCall, ToolSpec, resolve_llm
from learnloop.llms.openai import OpenAIChat, from_spec
from tests.support.scripted_openai import Reply, ScriptedOpenAI

API_KEY = "sk-test-0123456789abcdef"
SAVE_LEARNING = ToolSpec(
    name="save_learning",
    description="Save one reusable learning.",
    parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
)


def chat_model(server: ScriptedOpenAI, **overrides: object) -> OpenAIChat:
    options: dict[str, object] = {"api_key": API_KEY, "timeout": 5.0, "backoff_base": 0.01} | overrides
    return OpenAIChat("gpt-test", base_url=server.base_url, **options)  # type: ignore[arg-type]


@pytest.fixture
async def llm(scripted_openai: ScriptedOpenAI) -> AsyncIterator[OpenAIChat]:
    model = chat_model(scripted_openai)
    yield model
    await model.aclose()


def user(text: str) -> Message:
    return Message(role="user", content=text)


async def test_text_reply_round_trip(llm: OpenAIChat, scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.reply("Hello there")

    response = await llm.chat([Message(role="system", content="Be brief."), user("Hi")])

    assert response.message == Message(role="assistant", content="Hello there")
    assert response.finish_reason == "stop"
    assert response.model == "gpt-test"
    assert response.usage["total_tokens"] == response.usage["prompt_tokens"] + 2
    assert scripted_openai.chat_requests == [
        {
            "model": "gpt-test",
            "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
        }
    ]
    assert isinstance(llm, ChatModel)
    assert llm.model_id == "openai:gpt-test"


async def test_tool_call_arguments_are_parsed(llm: OpenAIChat, scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.reply(Reply.tool_call("save_learning", {"text": "Mash at 67 °C", "tags": ["mash"]}, id="c1"))

    response = await llm.chat([user("remember the mash temperature")], tools=[SAVE_LEARNING])

    assert response.finish_reason == "tool_calls"
    assert response.message.content is None
    [call] = response.message.tool_calls
    assert (call.id, call.name) == ("c1", "save_learning")
    assert call.arguments == {"text": "Mash at 67 °C", "tags": ["mash"]}
    assert scripted_openai.chat_requests[0]["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "save_learning",
                "description": "Save one reusable learning.",
                "parameters": SAVE_LEARNING.parameters,
            },
        }
    ]


async def test_tool_results_go_back_in_the_openai_wire_format(llm: OpenAIChat, scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.reply(
        Reply.tool_calls(("save_learning", {"text": "a"}, "call_a"), ("lookup", {"q": "b"}, "call_b")),
        "Saved.",
    )
    history = [user("remember a, look up b")]
    first = await llm.chat(history, tools=[SAVE_LEARNING])
    history += [
        first.message,
        Message(role="tool", tool_call_id="call_a", name="save_learning", content='{"ok": true}'),
        Message(role="tool", tool_call_id="call_b", content="b is 2"),
    ]

    second = await llm.chat(history, tools=[SAVE_LEARNING])

    assert second.message.content == "Saved."
    assert scripted_openai.chat_requests[1]["messages"] == [
        {"role": "user", "content": "remember a, look up b"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "save_learning", "arguments": '{"text": "a"}'},
                },
                {
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"q": "b"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": '{"ok": true}'},
        {"role": "tool", "tool_call_id": "call_b", "content": "b is 2"},
    ]


async def test_tool_calls_built_by_the_caller_serialise_their_arguments(
    llm: OpenAIChat, scripted_openai: ScriptedOpenAI
) -> None:
    scripted_openai.reply("ok")
    call = ToolCall(id="x1", name="lookup", arguments={"q": "hops"})
    await llm.chat([user("q"), Message(role="assistant", tool_calls=[call]), Message(role="tool", tool_call_id="x1")])

    wire = scripted_openai.chat_requests[0]["messages"]
    assert wire[1]["tool_calls"][0]["function"]["arguments"] == '{"q": "hops"}'
    assert wire[2] == {"role": "tool", "tool_call_id": "x1", "content": ""}


@pytest.mark.parametrize("raw", ["{not json", "[1, 2]", ""])
async def test_unparseable_tool_arguments_are_kept_raw(
    llm: OpenAIChat, scripted_openai: ScriptedOpenAI, raw: str
) -> None:
    scripted_openai.reply(Reply.tool_call("lookup", raw))

    [call] = (await llm.chat([user("go")])).message.tool_calls

    assert call.name == "lookup"
    assert call.arguments == {}
    assert call.raw_arguments == raw


async def test_json_output_temperature_and_max_tokens_are_sent(
    llm: OpenAIChat, scripted_openai: ScriptedOpenAI
) -> None:
    scripted_openai.reply(Reply.json({"learnings": []}))

    response = await llm.chat([user("extract")], json_output=True, temperature=0.0, max_tokens=200)

    assert response.message.content == '{"learnings": []}'
    sent = scripted_openai.chat_requests[0]
    assert sent["response_format"] == {"type": "json_object"}
    assert (sent["temperature"], sent["max_tokens"]) == (0.0, 200)


async def test_rules_answer_by_last_user_message(llm: OpenAIChat, scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.chat.on("weather", "sunny").respond(
        lambda request: "echo: " + request["messages"][-1]["content"] if request.get("tools") is None else None
    )

    assert (await llm.chat([user("the weather?")])).message.content == "sunny"
    assert (await llm.chat([user("ping")])).message.content == "echo: ping"


async def test_retries_a_503_then_succeeds(llm: OpenAIChat, scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.reply(Reply.error(503, "overloaded"), "ok")

    assert (await llm.chat([user("hi")])).message.content == "ok"
    assert len(scripted_openai.chat_requests) == 2


async def test_retries_a_dropped_connection(llm: OpenAIChat, scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.reply(Reply.hang_up(), "ok")

    assert (await llm.chat([user("hi")])).message.content == "ok"
    assert len(scripted_openai.chat_requests) == 2


async def test_gives_up_after_three_attempts(llm: OpenAIChat, scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.reply(*[Reply.error(502, "bad gateway")] * 3, "never reached")

    with pytest.raises(LLMError, match="HTTP 502: bad gateway") as caught:
        await llm.chat([user("hi")])

    assert caught.value.details["status_code"] == 502
    assert len(scripted_openai.chat_requests) == 3


async def test_429_waits_for_retry_after(scripted_openai: ScriptedOpenAI) -> None:
    # A backoff this long would blow the time limit: only Retry-After can explain a ~1 s wait.
    llm = chat_model(scripted_openai, backoff_base=30.0)
    scripted_openai.reply(Reply.error(429, "slow down", headers={"Retry-After": "1"}), "ok")

    started = time.monotonic()
    assert (await llm.chat([user("hi")])).message.content == "ok"
    assert 0.9 <= time.monotonic() - started < 3
    await llm.aclose()


async def test_429_honours_retry_after_ms(scripted_openai: ScriptedOpenAI) -> None:
    llm = chat_model(scripted_openai, backoff_base=30.0)
    scripted_openai.reply(Reply.error(429, "slow down", headers={"retry-after-ms": "50"}), "ok")

    started = time.monotonic()
    assert (await llm.chat([user("hi")])).message.content == "ok"
    assert time.monotonic() - started < 1
    await llm.aclose()


async def test_a_long_retry_after_fails_at_once(llm: OpenAIChat, scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.reply(Reply.error(429, "quota exceeded", headers={"Retry-After": "3600"}), "ok")

    with pytest.raises(LLMError, match=r"retry after 3600 s.*quota exceeded") as caught:
        await llm.chat([user("hi")])

    assert caught.value.details["status_code"] == 429
    assert len(scripted_openai.chat_requests) == 1


async def test_a_400_is_not_retried_and_carries_the_provider_message(
    llm: OpenAIChat, scripted_openai: ScriptedOpenAI
) -> None:
    scripted_openai.reply(Reply.error(400, "Invalid value for 'temperature'", type="invalid_request_error"))

    with pytest.raises(LLMError) as caught:
        await llm.chat([user("hi")], temperature=9)

    assert "HTTP 400" in str(caught.value)
    assert caught.value.details == {"status_code": 400, "provider_message": "Invalid value for 'temperature'"}
    assert len(scripted_openai.chat_requests) == 1


async def test_a_read_timeout_becomes_llm_error_without_retry(scripted_openai: ScriptedOpenAI) -> None:
    llm = chat_model(scripted_openai, timeout=0.3)
    scripted_openai.reply(Reply.text("too late").after(3))

    started = time.monotonic()
    with pytest.raises(LLMError, match=r"timed out after 0\.3 s"):
        await llm.chat([user("hi")])

    assert time.monotonic() - started < 1.5
    assert len(scripted_openai.chat_requests) == 1
    await llm.aclose()


async def test_connection_refused_becomes_llm_error() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    llm = OpenAIChat("gpt-test", base_url=f"http://127.0.0.1:{port}/v1", backoff_base=0.01)

    with pytest.raises(LLMError, match="connection failed: ConnectError"):
        await llm.chat([user("hi")])
    await llm.aclose()


async def test_api_key_is_sent_as_bearer_and_never_in_errors(llm: OpenAIChat, scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.reply("ok", Reply.error(401, f"Incorrect API key provided: {API_KEY}.", type="auth"))

    await llm.chat([user("hi")])
    with pytest.raises(LLMError) as caught:
        await llm.chat([user("hi")])

    assert scripted_openai.requests[0].headers["authorization"] == f"Bearer {API_KEY}"
    error = caught.value
    assert "Incorrect API key provided: ***" in str(error)
    assert API_KEY not in str(error)
    assert API_KEY not in repr(error.to_dict())


async def test_no_authorization_header_without_a_key(scripted_openai: ScriptedOpenAI) -> None:
    llm = chat_model(scripted_openai, api_key=None)
    scripted_openai.reply("ok")

    await llm.chat([user("hi")])

    assert "authorization" not in scripted_openai.requests[0].headers
    await llm.aclose()


@pytest.mark.parametrize(
    "reply",
    [
        Reply.raw_body("<html>Bad gateway</html>", content_type="text/html"),
        Reply.json_body([1, 2]),
        Reply.json_body({"choices": []}),
        Reply.json_body({"choices": [{"message": "hi"}]}),
        Reply.json_body({"choices": [{"message": {"tool_calls": [{"function": {}}]}}]}),
    ],
    ids=["not-json", "not-an-object", "no-choices", "message-not-object", "tool-call-without-name"],
)
async def test_a_malformed_response_becomes_llm_error(
    llm: OpenAIChat, scripted_openai: ScriptedOpenAI, reply: Reply
) -> None:
    scripted_openai.reply(reply)

    with pytest.raises(LLMError, match="answered with"):
        await llm.chat([user("hi")])


async def test_an_unscripted_request_fails_loudly(llm: OpenAIChat, scripted_openai: ScriptedOpenAI) -> None:
    with pytest.raises(LLMError, match=r"no reply scripted.*'hello'"):
        await llm.chat([user("hello")])
    assert len(scripted_openai.chat_requests) == 1


async def test_the_client_reopens_after_aclose(llm: OpenAIChat, scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.reply("one", "two")
    assert (await llm.chat([user("hi")])).message.content == "one"
    await llm.aclose()
    assert (await llm.chat([user("hi")])).message.content == "two"


# The first loop's pooled connection cannot be closed once that loop is gone; it is dropped, and its
# socket's ResourceWarning is expected here (collected inside the test so it cannot land elsewhere).
@pytest.mark.filterwarnings("ignore::ResourceWarning")
def test_usable_from_successive_event_loops(scripted_openai: ScriptedOpenAI) -> None:
    llm = chat_model(scripted_openai)
    scripted_openai.reply("one", "two")

    assert asyncio.run(llm.chat([user("hi")])).message.content == "one"
    assert asyncio.run(llm.chat([user("hi")])).message.content == "two"
    asyncio.run(llm.aclose())
    gc.collect()


async def test_resolve_llm_builds_the_openai_client(scripted_openai: ScriptedOpenAI) -> None:
    llm = resolve_llm("openai:gpt-test", scripted_openai.settings(request_timeout=5.0))
    scripted_openai.reply("ok")

    assert llm.model_id == "openai:gpt-test"
    assert (await llm.chat([user("hi")])).message.content == "ok"
    assert scripted_openai.requests[0].headers["authorization"] == "Bearer sk-scripted-test"
    await llm.aclose()


def test_resolve_llm_rejects_an_unknown_provider() -> None:
    with pytest.raises(ConfigurationError, match=r"unknown LLM provider 'nope'.*known providers: .*openai"):
        resolve_llm("nope:some-model", Settings())


@pytest.mark.parametrize(
    ("spec", "settings", "message"),
    [
        ("openai", Settings(openai_api_key="k"), "needs a model name"),
        ("openai:gpt-4o-mini", Settings(), "needs a key"),
        ("", Settings(), "provider:model"),
    ],
)
def test_bad_configuration_is_a_configuration_error(spec: str, settings: Settings, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        resolve_llm(spec, settings)


def test_a_local_server_needs_no_key() -> None:
    llm = from_spec("qwen2.5", Settings(openai_base_url="http://127.0.0.1:8080/v1"))
    assert llm.model_id == "openai:qwen2.5"
