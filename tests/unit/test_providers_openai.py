"""The OpenAI-compatible path without a server: the SDK's real HTTP stack on httpx mock
transports (``httpx2``, the transport library of the ``openai`` SDK), so that status codes,
retries, bodies and streams go through exactly the code a real endpoint exercises.

Covers the error mapping (401, 403, 404, 429, 5xx, 501, refused, timeout), the bounded
retries with backoff, the structured-output step down for servers without ``json_schema``,
streaming with usage, ``with_structured_output`` and the offline token counts.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx2
import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel

from memory_chains.errors import (
    ConfigurationError,
    EndpointAuthenticationError,
    EndpointUnreachableError,
    InvalidInputError,
    MalformedOutputError,
    ModelCallError,
    ModelNotServedError,
    ModelRateLimitError,
    ModelTimeoutError,
    ModelUnavailableError,
)
from memory_chains.providers import ChatOpenAICompatible, OpenAICompatibleEmbeddings

Reply = httpx2.Response | Exception | Callable[[dict[str, Any]], httpx2.Response]


class MockEndpoint:
    """Answers each request with the next scripted reply (the last one repeats)."""

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.bodies: list[dict[str, Any]] = []
        self.times: list[float] = []
        self.headers: list[httpx2.Headers] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content or b"{}")
        self.bodies.append(body)
        self.times.append(time.monotonic())
        self.headers.append(request.headers)
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, Exception):
            raise reply
        if not isinstance(reply, httpx2.Response):
            return reply(body)
        # a fresh response each time: one is read once, by one kind of client
        return httpx2.Response(reply.status_code, headers=reply.headers, content=reply.content)


def completion(
    text: str, finish: str = "stop", prompt: int = 12, answer: int = 3
) -> httpx2.Response:
    return httpx2.Response(
        200,
        json={
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "qwen",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": finish,
                    "message": {"role": "assistant", "content": text},
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": answer,
                "total_tokens": prompt + answer,
            },
        },
    )


def error(status: int, message: str, headers: dict[str, str] | None = None) -> httpx2.Response:
    return httpx2.Response(
        status, headers=headers, json={"error": {"message": message, "type": "error"}}
    )


def sse(*events: dict[str, Any]) -> httpx2.Response:
    text = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    return httpx2.Response(
        200, headers={"content-type": "text/event-stream"}, content=text.encode()
    )


def chunk(delta: dict[str, Any], finish: str | None = None, usage: Any = None) -> dict[str, Any]:
    choices = [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}]
    event = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "qwen"}
    return {**event, "choices": choices, "usage": usage}


def make_model(endpoint: MockEndpoint, **options: Any) -> ChatOpenAICompatible:
    # A model name of its own per test: the JSON level is remembered per endpoint + model.
    transport = httpx2.MockTransport(endpoint)
    params: dict[str, Any] = {
        "model": f"qwen-{uuid.uuid4().hex[:8]}",
        "api_key": "secret",
        "base_url": "http://127.0.0.1:9/v1",
        "max_retries": 0,
        "timeout": 5,
        "http_client": httpx2.Client(transport=transport),
        "http_async_client": httpx2.AsyncClient(transport=transport),
    }
    return ChatOpenAICompatible(**{**params, **options})


SCHEMA_FORMAT = {
    "type": "json_schema",
    "json_schema": {
        "name": "answer",
        "schema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
    },
}

# ---------------------------------------------------------------- the error mapping


@pytest.mark.parametrize(
    ("reply", "expected", "says"),
    [
        (error(401, "Invalid API Key"), EndpointAuthenticationError, "OPENAI_API_KEY"),
        (error(403, "forbidden"), EndpointAuthenticationError, "OPENAI_API_KEY"),
        (
            error(404, 'model "llama9" not found, try pulling it first'),  # Ollama
            ModelNotServedError,
            "MEMORY_CHAINS_OPENAI_MODEL",
        ),
        (error(404, "File Not Found"), ModelUnavailableError, "/v1"),  # base URL without /v1
        (error(400, "the request exceeds the available context size"), ModelCallError, "shorten"),
        (error(500, "boom"), ModelCallError, "500: boom"),
        (httpx2.ConnectError("[Errno 111] Connection refused"), EndpointUnreachableError, "111"),
        (httpx2.ReadTimeout("timed out"), ModelTimeoutError, "MEMORY_CHAINS_OPENAI_TIMEOUT"),
    ],
    ids=["401", "403", "404-model", "404-route", "400-context", "500", "refused", "timeout"],
)
def test_failures_become_typed_errors_that_say_what_to_do(
    reply: Reply, expected: type[Exception], says: str
) -> None:
    model = make_model(MockEndpoint(reply))
    with pytest.raises(expected, match=says) as caught:
        model.invoke("bonjour")
    assert "http://127.0.0.1:9/v1" in str(caught.value)
    assert caught.value.__cause__ is not None  # the SDK's error stays attached
    if expected is ModelUnavailableError:
        assert not isinstance(caught.value, ModelNotServedError)


def test_the_key_is_never_in_the_message() -> None:
    model = make_model(MockEndpoint(error(401, "Incorrect API key provided")))
    with pytest.raises(EndpointAuthenticationError) as caught:
        model.invoke("bonjour")
    assert "secret" not in str(caught.value)


async def test_async_calls_are_mapped_the_same_way() -> None:
    model = make_model(MockEndpoint(error(401, "Invalid API Key")))
    with pytest.raises(EndpointAuthenticationError):
        await model.ainvoke("bonjour")
    with pytest.raises(EndpointAuthenticationError):
        async for _ in model.astream("bonjour"):
            pass


def test_a_stream_that_fails_before_its_first_token_is_mapped() -> None:
    model = make_model(MockEndpoint(httpx2.ConnectError("refused")))
    with pytest.raises(EndpointUnreachableError):
        list(model.stream("bonjour"))


async def test_a_stream_that_goes_silent_is_a_timeout() -> None:
    # langchain-openai's stream_chunk_timeout (async streams), set from the same setting
    async def events() -> Any:
        await asyncio.sleep(0.5)  # the server computes the prompt for longer than allowed
        yield b"data: [DONE]\n\n"

    def silent(body: dict[str, Any]) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=events())

    model = make_model(MockEndpoint(silent), stream_chunk_timeout=0.1)
    with pytest.raises(ModelTimeoutError, match="MEMORY_CHAINS_OPENAI_TIMEOUT"):
        async for _ in model.astream("bonjour"):
            pass


# ---------------------------------------------------------------- dropped connections

DROPPED = "Server disconnected without sending a response."


async def test_a_connection_dropped_unanswered_is_sent_once_more_even_without_retries() -> None:
    # a kept-alive connection the server had closed: seen from llama.cpp's server after a
    # streamed answer. max_retries is 0 in make_model.
    for asynchronous in (False, True):
        endpoint = MockEndpoint(httpx2.RemoteProtocolError(DROPPED), completion("Paris."))
        model = make_model(endpoint)
        answer = await model.ainvoke("Capitale ?") if asynchronous else model.invoke("Capitale ?")
        assert answer.text == "Paris."
        assert len(endpoint.bodies) == 2
        assert endpoint.bodies[0] == endpoint.bodies[1]  # the same call, sent again


async def test_a_streamed_call_dropped_unanswered_is_sent_once_more() -> None:
    def endpoint() -> MockEndpoint:
        return MockEndpoint(
            httpx2.RemoteProtocolError(DROPPED),
            sse(chunk({"content": "Pa"}), chunk({"content": "ris."}, finish="stop")),
        )

    sync, asynchronous = endpoint(), endpoint()
    assert [c.text for c in make_model(sync).stream("Capitale ?") if c.text] == ["Pa", "ris."]
    streamed = [c.text async for c in make_model(asynchronous).astream("Capitale ?") if c.text]
    assert streamed == ["Pa", "ris."]
    assert len(sync.bodies) == len(asynchronous.bodies) == 2


def test_a_connection_dropped_twice_is_a_typed_error() -> None:
    endpoint = MockEndpoint(httpx2.RemoteProtocolError(DROPPED))
    with pytest.raises(EndpointUnreachableError, match="without sending a response"):
        make_model(endpoint).invoke("bonjour")
    assert len(endpoint.bodies) == 2  # one more send, not a loop


def test_other_connection_errors_are_not_sent_again_without_retries() -> None:
    for failure in (
        httpx2.ConnectError("[Errno 111] Connection refused"),
        httpx2.RemoteProtocolError("peer closed connection without sending complete body"),
    ):
        endpoint = MockEndpoint(failure, completion("Paris."))
        with pytest.raises(EndpointUnreachableError):
            make_model(endpoint).invoke("bonjour")
        assert len(endpoint.bodies) == 1


# ---------------------------------------------------------------- rate limiting


def test_429_is_retried_with_the_servers_delay_then_succeeds() -> None:
    endpoint = MockEndpoint(
        error(429, "slow down", {"retry-after-ms": "60"}),
        error(429, "slow down", {"retry-after-ms": "60"}),
        completion("Paris."),
    )
    model = make_model(endpoint, max_retries=2)
    assert model.invoke("Capitale ?").content == "Paris."
    assert len(endpoint.bodies) == 3
    gaps = [b - a for a, b in zip(endpoint.times, endpoint.times[1:], strict=False)]
    assert min(gaps) >= 0.055  # the Retry-After of the server was waited for


def test_429_retries_are_bounded_then_a_typed_error() -> None:
    endpoint = MockEndpoint(error(429, "Rate limit reached", {"retry-after-ms": "1"}))
    model = make_model(endpoint, max_retries=2)
    with pytest.raises(ModelRateLimitError, match="after 2 retries") as caught:
        model.invoke("bonjour")
    assert len(endpoint.bodies) == 3  # one call + two retries, no more
    assert "Rate limit reached" in str(caught.value)
    assert isinstance(caught.value, ModelCallError)  # nothing memorised


def test_without_retry_after_the_backoff_grows() -> None:
    endpoint = MockEndpoint(
        error(503, "Loading model"), error(503, "Loading model"), completion("ok")
    )
    model = make_model(endpoint, max_retries=2)
    assert model.invoke("bonjour").content == "ok"
    first, second = (b - a for a, b in zip(endpoint.times, endpoint.times[1:], strict=False))
    # the SDK's exponential backoff: 0.5 s then 1 s, minus up to 25 % jitter
    assert first >= 0.37 and second >= 0.74


# ---------------------------------------------------------------- structured output


def _rejects_json_schema(body: dict[str, Any]) -> httpx2.Response:
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":  # what vLLM without guided decoding answers
        return error(400, "response_format json_schema is not supported by this server")
    return completion('{"q": "Et le prix du Dell XPS 15 ?"}')


def _rejects_any_format(body: dict[str, Any]) -> httpx2.Response:
    if "response_format" in body:
        return error(400, "Unrecognized request argument supplied: response_format")
    return completion('Voici : ```json\n{"q": "Et le prix ?"}\n```')


def test_response_format_is_sent_as_is_to_a_server_that_takes_it() -> None:
    endpoint = MockEndpoint(completion('{"q": "x"}'))
    make_model(endpoint).invoke("Et le prix ?", response_format=SCHEMA_FORMAT)
    assert endpoint.bodies[0]["response_format"] == SCHEMA_FORMAT
    assert endpoint.bodies[0]["messages"][-1]["content"] == "Et le prix ?"


def test_an_answer_cut_by_max_tokens_comes_back_for_repair() -> None:
    # The SDK's parse() raises LengthFinishReasonError; the library's parsers repair it.
    endpoint = MockEndpoint(completion('{"q": "Et le pr', finish="length"))
    reply = make_model(endpoint).invoke("Et le prix ?", response_format=SCHEMA_FORMAT)
    assert reply.content == '{"q": "Et le pr'
    assert reply.response_metadata["finish_reason"] == "length"


def test_json_schema_refused_steps_down_to_json_object_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    endpoint = MockEndpoint(_rejects_json_schema)
    model = make_model(endpoint)
    messages = [SystemMessage("Réécris la question."), HumanMessage("Et le prix ?")]
    before = [m.model_copy() for m in messages]
    with caplog.at_level(logging.WARNING, logger="memory_chains.providers"):
        first = model.invoke(messages, response_format=SCHEMA_FORMAT)
        second = model.invoke(messages, response_format=SCHEMA_FORMAT)
    assert first.content == second.content == '{"q": "Et le prix du Dell XPS 15 ?"}'
    assert [b.get("response_format", {}).get("type") for b in endpoint.bodies] == [
        "json_schema",
        "json_object",
        "json_object",  # remembered: no second probe
    ]
    retried = endpoint.bodies[1]["messages"]
    assert retried[0] == endpoint.bodies[0]["messages"][0]  # the cached prefix is unchanged
    assert retried[-1]["content"].startswith("Et le prix ?\n\nAnswer with one JSON object")
    assert '"required":["q"]' in retried[-1]["content"]
    warnings = [r for r in caplog.records if "refused response_format" in r.getMessage()]
    assert len(warnings) == 1 and "json_object" in warnings[0].getMessage()
    assert messages == before  # the caller's messages are not modified


def test_a_server_without_any_response_format_gets_the_schema_in_the_prompt(
    caplog: pytest.LogCaptureFixture,
) -> None:
    endpoint = MockEndpoint(_rejects_any_format)
    model = make_model(endpoint)
    with caplog.at_level(logging.WARNING, logger="memory_chains.providers"):
        reply = model.invoke("Et le prix ?", response_format=SCHEMA_FORMAT)
    assert [b.get("response_format", {}).get("type") for b in endpoint.bodies] == [
        "json_schema",
        "json_object",
        None,
    ]
    assert "JSON schema" in endpoint.bodies[-1]["messages"][-1]["content"]
    assert "```json" in str(reply.content)  # the callers' parsers repair this
    assert sum("refused response_format" in r.getMessage() for r in caplog.records) == 2


def test_a_fixed_json_schema_setting_never_steps_down() -> None:
    endpoint = MockEndpoint(_rejects_json_schema)
    with pytest.raises(ModelCallError, match="not supported"):
        make_model(endpoint, structured="json_schema").invoke(
            "Et le prix ?", response_format=SCHEMA_FORMAT
        )
    assert len(endpoint.bodies) == 1


def test_prompt_mode_sends_no_response_format() -> None:
    endpoint = MockEndpoint(completion('{"q": "x"}'))
    make_model(endpoint, structured="prompt").invoke("Et le prix ?", response_format=SCHEMA_FORMAT)
    assert "response_format" not in endpoint.bodies[0]
    assert "following this JSON schema" in endpoint.bodies[0]["messages"][-1]["content"]


def test_other_errors_of_a_structured_call_do_not_step_down() -> None:
    endpoint = MockEndpoint(error(401, "Invalid API Key"))
    with pytest.raises(EndpointAuthenticationError):
        make_model(endpoint).invoke("x", response_format=SCHEMA_FORMAT)
    assert len(endpoint.bodies) == 1


class Question(BaseModel):
    q: str


def test_with_structured_output_parses_fenced_json_into_the_model() -> None:
    endpoint = MockEndpoint(completion('```json\n{"q": "Et le prix ?"}\n```'))
    result = make_model(endpoint).with_structured_output(Question).invoke("Réécris.")
    assert result == Question(q="Et le prix ?")
    sent = endpoint.bodies[0]["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["name"] == "Question"


def test_with_structured_output_keeps_the_raw_text_of_a_bad_answer() -> None:
    model = make_model(MockEndpoint(completion("Je ne sais pas.")))
    with pytest.raises(MalformedOutputError) as caught:
        model.with_structured_output(Question).invoke("Réécris.")
    assert caught.value.raw == "Je ne sais pas."
    raw = model.with_structured_output(Question, include_raw=True).invoke("Réécris.")
    assert raw["parsed"] is None and isinstance(raw["parsing_error"], MalformedOutputError)


def test_with_structured_output_json_mode_and_bad_options() -> None:
    endpoint = MockEndpoint(completion('{"q": "x"}'))
    model = make_model(endpoint)
    assert model.with_structured_output(Question, method="json_mode").invoke("x").q == "x"
    assert endpoint.bodies[0]["response_format"] == {"type": "json_object"}
    with pytest.raises(InvalidInputError):
        model.with_structured_output(None)
    with pytest.raises(InvalidInputError):
        model.with_structured_output(Question, tools=[])


# ---------------------------------------------------------------- streaming and usage


def test_stream_yields_tokens_then_the_servers_usage() -> None:
    endpoint = MockEndpoint(
        sse(
            chunk({"role": "assistant", "content": "Pa"}),
            chunk({"content": "ris."}),
            chunk({}, finish="stop"),
            chunk({}, usage={"prompt_tokens": 21, "completion_tokens": 2, "total_tokens": 23}),
        )
    )
    chunks = list(make_model(endpoint).stream("Capitale ?"))
    assert "".join(c.text for c in chunks) == "Paris."
    usage = [c.usage_metadata for c in chunks if c.usage_metadata]
    assert usage and usage[-1]["input_tokens"] == 21 and usage[-1]["output_tokens"] == 2
    assert endpoint.bodies[0]["stream_options"] == {"include_usage": True}


def test_invoke_reports_the_servers_token_usage() -> None:
    reply = make_model(MockEndpoint(completion("ok", prompt=40, answer=1))).invoke("x")
    assert reply.usage_metadata is not None
    assert (reply.usage_metadata["input_tokens"], reply.usage_metadata["output_tokens"]) == (40, 1)


def test_max_tokens_of_a_call_is_sent() -> None:
    endpoint = MockEndpoint(completion("ok"))
    make_model(endpoint, max_completion_tokens=512).invoke("x", max_tokens=64)
    assert endpoint.bodies[0]["max_completion_tokens"] == 64


# ---------------------------------------------------------------- token counting


def test_token_counts_of_a_local_server_are_offline_estimates() -> None:
    model = make_model(MockEndpoint(completion("unused")))
    assert model.get_num_tokens("Bonjour, comment allez-vous ?") == 8
    messages = [SystemMessage("Tu aides."), HumanMessage("Bonjour")]
    assert model.get_num_tokens_from_messages(messages) == (3 + 5) + (2 + 5) + 3
    with pytest.raises(ConfigurationError, match="usage_metadata"):
        model.get_token_ids("Bonjour")


# ---------------------------------------------------------------- embeddings


def make_embeddings(endpoint: MockEndpoint, **options: Any) -> OpenAICompatibleEmbeddings:
    transport = httpx2.MockTransport(endpoint)
    params: dict[str, Any] = {
        "model": "nomic-embed-text",
        "api_key": "secret",
        "base_url": "http://127.0.0.1:9/v1",
        "max_retries": 0,
        "http_client": httpx2.Client(transport=transport),
        "http_async_client": httpx2.AsyncClient(transport=transport),
    }
    return OpenAICompatibleEmbeddings(**{**params, **options})


def _vectors(body: dict[str, Any]) -> httpx2.Response:
    data = [
        {"object": "embedding", "index": i, "embedding": [float(len(t)), 1.0, 0.0]}
        for i, t in enumerate(body["input"])
    ]
    usage = {"prompt_tokens": 3, "total_tokens": 3}
    return httpx2.Response(200, json={"object": "list", "data": data, "model": "m", "usage": usage})


async def test_embeddings_send_text_to_other_servers() -> None:
    endpoint = MockEndpoint(_vectors)
    embeddings = make_embeddings(endpoint)
    assert embeddings.embed_documents(["un", "deux"]) == [[2.0, 1.0, 0.0], [4.0, 1.0, 0.0]]
    assert embeddings.embed_query("trois") == [5.0, 1.0, 0.0]
    assert await embeddings.aembed_query("quatre") == [6.0, 1.0, 0.0]
    assert endpoint.bodies[0]["input"] == ["un", "deux"]  # text, not tiktoken's ids
    assert OpenAICompatibleEmbeddings(model="m", api_key="k").check_embedding_ctx_length


@pytest.mark.parametrize(
    ("reply", "expected", "says"),
    [
        (
            error(501, "This server does not support embeddings. Start it with `--embeddings`"),
            ModelUnavailableError,
            "MEMORY_CHAINS_EMBEDDINGS=e5",
        ),
        (
            error(404, "The model `nomic` does not exist."),  # vLLM
            ModelNotServedError,
            "MEMORY_CHAINS_OPENAI_EMBEDDINGS_MODEL",
        ),
        (error(401, "Invalid API Key"), EndpointAuthenticationError, "OPENAI_API_KEY"),
    ],
    ids=["501", "404-model", "401"],
)
async def test_embeddings_errors_are_typed(
    reply: Reply, expected: type[Exception], says: str
) -> None:
    embeddings = make_embeddings(MockEndpoint(reply))
    with pytest.raises(expected, match=says):
        embeddings.embed_query("x")
    with pytest.raises(expected):
        await embeddings.aembed_documents(["x"])
