"""Choosing an OpenAI-compatible endpoint by configuration: settings, selection, the
``models`` command's description, and the pieces of ``--check`` that need no server."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from memory_chains.config import Settings
from memory_chains.errors import ConfigurationError
from memory_chains.providers import (
    ChatOpenAICompatible,
    E5Embeddings,
    OpenAICompatibleEmbeddings,
    check_endpoint,
    describe_providers,
    get_chat_model,
    get_embeddings,
)
from memory_chains.providers._check import Check, EndpointReport, _listed

LOCAL = {
    "OPENAI_API_KEY": "not-needed",
    "OPENAI_BASE_URL": "http://127.0.0.1:8080/v1/",
    "MEMORY_CHAINS_OPENAI_MODEL": "qwen2.5-coder-1.5b",
}


def test_endpoint_settings_are_read_from_the_environment() -> None:
    s = Settings.from_env(
        {
            **LOCAL,
            "MEMORY_CHAINS_EMBEDDINGS": "E5",
            "MEMORY_CHAINS_OPENAI_TIMEOUT": "300",
            "MEMORY_CHAINS_OPENAI_MAX_RETRIES": "0",
            "MEMORY_CHAINS_OPENAI_STRUCTURED": "prompt",
        }
    )
    assert s.openai_base_url == "http://127.0.0.1:8080/v1"  # trailing slash dropped
    assert (s.openai_timeout, s.openai_max_retries, s.openai_structured) == (300.0, 0, "prompt")
    assert s.use_openai and not s.use_openai_embeddings
    defaults = Settings.from_env(LOCAL)
    assert defaults.use_openai_embeddings and defaults.embeddings_base_url == s.openai_base_url
    assert (defaults.openai_timeout, defaults.openai_max_retries) == (120.0, 2)
    assert defaults.openai_structured == "auto"


def test_a_separate_embeddings_endpoint() -> None:
    s = Settings.from_env(
        {**LOCAL, "MEMORY_CHAINS_OPENAI_EMBEDDINGS_BASE_URL": "http://127.0.0.1:8081/v1"}
    )
    assert s.embeddings_base_url == "http://127.0.0.1:8081/v1"
    embeddings = get_embeddings(s)
    assert isinstance(embeddings, OpenAICompatibleEmbeddings)
    assert embeddings.openai_api_base == "http://127.0.0.1:8081/v1"


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"MEMORY_CHAINS_EMBEDDINGS": "bert"}, "MEMORY_CHAINS_EMBEDDINGS"),
        ({"MEMORY_CHAINS_OPENAI_STRUCTURED": "xml"}, "MEMORY_CHAINS_OPENAI_STRUCTURED"),
        ({"MEMORY_CHAINS_OPENAI_TIMEOUT": "soon"}, "MEMORY_CHAINS_OPENAI_TIMEOUT"),
        ({"MEMORY_CHAINS_OPENAI_TIMEOUT": "0"}, "MEMORY_CHAINS_OPENAI_TIMEOUT"),
        ({"MEMORY_CHAINS_OPENAI_MAX_RETRIES": "-1"}, "MEMORY_CHAINS_OPENAI_MAX_RETRIES"),
        ({"OPENAI_BASE_URL": "127.0.0.1:8080/v1"}, "OPENAI_BASE_URL"),
        ({"OPENAI_API_KEY": "", "MEMORY_CHAINS_EMBEDDINGS": "openai"}, "OPENAI_API_KEY"),
    ],
)
def test_bad_endpoint_settings_name_the_variable(env: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigurationError, match=named):
        Settings.from_env({**LOCAL, **env})


def test_the_key_is_not_in_the_settings_repr() -> None:
    assert "not-needed" not in repr(Settings.from_env(LOCAL))


def test_chat_model_gets_the_endpoint_settings(tmp_path: Path) -> None:
    s = Settings.from_env(
        {
            **LOCAL,
            "MEMORY_CHAINS_HOME": str(tmp_path),
            "MEMORY_CHAINS_OPENAI_TIMEOUT": "45",
            "MEMORY_CHAINS_OPENAI_MAX_RETRIES": "5",
            "MEMORY_CHAINS_OPENAI_STRUCTURED": "json_object",
        }
    )
    chat = get_chat_model(s, max_tokens=99)
    assert isinstance(chat, ChatOpenAICompatible)
    assert chat.openai_api_base == "http://127.0.0.1:8080/v1"
    assert chat.model_name == "qwen2.5-coder-1.5b"
    assert (chat.request_timeout, chat.max_retries, chat.structured) == (45.0, 5, "json_object")
    assert chat.max_tokens == 99 and chat.stream_usage is True
    assert chat.stream_chunk_timeout == 45.0  # not langchain-openai's 120 s


def test_the_mixed_setup_keeps_embeddings_local() -> None:
    s = Settings.from_env({**LOCAL, "MEMORY_CHAINS_EMBEDDINGS": "e5"})
    assert isinstance(get_chat_model(s), ChatOpenAICompatible)
    assert isinstance(get_embeddings(s), E5Embeddings)
    line = describe_providers(s)
    assert line.startswith("chat: OpenAI-compatible qwen2.5-coder-1.5b at http://127.0.0.1:8080")
    assert "embeddings: multilingual-e5-small" in line


def test_openai_itself_is_named_openai() -> None:
    hosted = Settings(openai_api_key="sk", openai_base_url="https://api.openai.com/v1")
    assert describe_providers(hosted).startswith("chat: OpenAI gpt-4o-mini;")


def test_summarizer_sends_a_schema_to_the_endpoint_model() -> None:
    from memory_chains.memory import LLMSummarizer

    assert LLMSummarizer(get_chat_model(Settings.from_env(LOCAL))).structured


@pytest.mark.parametrize(
    ("name", "served", "listed"),
    [
        ("qwen", ["qwen"], True),
        ("llama3.2", ["llama3.2:latest", "nomic-embed-text:latest"], True),  # Ollama
        ("qwen2.5-coder", ["/models/qwen2.5-coder.gguf"], True),  # llama.cpp, no alias
        ("gpt-4o-mini", ["qwen"], False),
        ("qwen", [], False),
    ],
)
def test_model_names_are_matched_as_servers_list_them(
    name: str, served: list[str], listed: bool
) -> None:
    assert _listed(name, served) is listed


def test_report_fails_only_on_a_failed_check() -> None:
    warned = EndpointReport((Check("a", "ok", "x"), Check("b", "warning", "y")))
    failed = EndpointReport((*warned.checks, Check("c", "failed", "z")))
    assert warned.ok and not failed.ok
    assert failed.lines()[-1] == "[failed] c: z"


def test_no_endpoint_nothing_to_check() -> None:
    report = check_endpoint(Settings(openai_api_key=""))
    assert report.ok and "in-process" in report.checks[0].detail


def test_models_command_describes_the_endpoint(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from memory_chains.cli import _models

    monkeypatch.chdir(tmp_path)  # no .env of the developer
    for name, value in {**LOCAL, "MEMORY_CHAINS_EMBEDDINGS": "e5"}.items():
        monkeypatch.setenv(name, value)
    parser = argparse.ArgumentParser()
    _models.register(parser.add_subparsers())
    args = parser.parse_args(["models"])
    assert args.run(args) == 0
    out = capsys.readouterr().out
    assert "provider: OpenAI-compatible endpoint" in out
    assert "base URL: http://127.0.0.1:8080/v1 (OPENAI_BASE_URL)" in out
    assert "chat model: qwen2.5-coder-1.5b (MEMORY_CHAINS_OPENAI_MODEL)" in out
    assert "embeddings: multilingual-e5-small, local" in out
    assert "not-needed" not in out


def test_every_variable_read_is_documented_in_env_example() -> None:
    import re

    import memory_chains.config as config

    root = Path(__file__).resolve().parents[2]
    read = set(
        re.findall(r'"((?:OPENAI|MEMORY_CHAINS)_[A-Z_]+)"', Path(config.__file__).read_text())
    )
    documented = set(
        re.findall(
            r"^((?:OPENAI|MEMORY_CHAINS)_[A-Z_]+)=", (root / ".env.example").read_text(), re.M
        )
    )
    assert {"OPENAI_BASE_URL", "MEMORY_CHAINS_OPENAI_STRUCTURED"} <= read
    read -= set(config.__all__)  # the module's own names
    assert read <= documented, read - documented
