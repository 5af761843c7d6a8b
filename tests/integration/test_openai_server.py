"""The whole library over a real OpenAI-compatible server: llama.cpp's, serving the GGUF.

The module's fixture starts ``scripts/llama_server.py`` (``xllamacpp.Server``, i.e.
llama.cpp's own HTTP server, the one ``llama-server`` runs) on a free port of 127.0.0.1
with an API key and ``/v1/embeddings``, and stops it at the end. Everything else is chosen
by configuration only: ``OPENAI_API_KEY``, ``OPENAI_BASE_URL`` and the model names, in a
``.env`` for the commands run as subprocesses.

Cost: the server loads in about 5 s; the tests make about 30 calls, most of a few tokens;
the demo's seed scenarios (9 answers) are most of the time, as in the in-process path.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel

from memory_chains.config import Settings, load_settings
from memory_chains.errors import (
    EndpointAuthenticationError,
    EndpointUnreachableError,
    ModelTimeoutError,
)
from memory_chains.providers import (
    ChatLlamaCpp,
    ChatOpenAICompatible,
    check_endpoint,
    ensure_embedded_model,
    get_chat_model,
    get_embeddings,
)

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
ALIAS = "qwen2.5-coder-1.5b-instruct"
KEY = "integration-secret"
# Generous: this machine is shared; a retry would only queue the same request again.
SLOW = {"MEMORY_CHAINS_OPENAI_TIMEOUT": "900", "MEMORY_CHAINS_OPENAI_MAX_RETRIES": "0"}


@dataclasses.dataclass(frozen=True)
class Server:
    url: str
    model_path: Path

    def env(self, **extra: str) -> dict[str, str]:
        """The variables that point the library at this server."""
        base = {
            "OPENAI_API_KEY": KEY,
            "OPENAI_BASE_URL": self.url,
            "MEMORY_CHAINS_OPENAI_MODEL": ALIAS,
            "MEMORY_CHAINS_OPENAI_EMBEDDINGS_MODEL": ALIAS,
            **SLOW,
        }
        return {**base, **extra}

    def settings(self, **extra: str) -> Settings:
        return Settings.from_env({**os.environ, **self.env(**extra)})


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    model = ensure_embedded_model(load_settings())
    log = tmp_path_factory.mktemp("llama-server") / "stderr.log"
    command = [
        sys.executable,
        str(ROOT / "scripts" / "llama_server.py"),
        "--model",
        str(model),
        "--alias",
        ALIAS,
        "--api-key",
        KEY,
        "--embeddings",
        "--until-stdin-closes",
    ]
    with log.open("w") as stderr:
        proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True
        )
    assert proc.stdin is not None and proc.stdout is not None
    stdout, ready = proc.stdout, []
    reader = threading.Thread(target=lambda: ready.append(stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout=300)
    try:
        if not ready or not ready[0].strip():
            pytest.fail(f"llama.cpp's server did not start: {log.read_text()[-2000:]}")
        yield Server(json.loads(ready[0])["url"], model)
    finally:
        proc.terminate()  # at once, even mid-answer (closing stdin waits for the answer)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdin.close()
        stdout.close()


def run_cli(server: Server, tmp_path: Path, args: list[str], **extra: str) -> Any:
    """``memory-chains ARGS`` in a directory whose ``.env`` points at the server."""
    dotenv = "".join(f"{name}={value}\n" for name, value in server.env(**extra).items())
    (tmp_path / ".env").write_text(dotenv)
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("OPENAI_", "MEMORY_CHAINS_OPENAI_", "MEMORY_CHAINS_EMBEDDINGS"))
    }
    env["MEMORY_CHAINS_HOME"] = str(tmp_path / "home")  # indexes of this test only
    return subprocess.run(
        [sys.executable, "-m", "memory_chains", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )


# ---------------------------------------------------------------- the chat model


def test_configuration_alone_selects_the_server(server: Server) -> None:
    model = get_chat_model(server.settings())
    assert isinstance(model, ChatOpenAICompatible)
    assert model.openai_api_base == server.url and model.model_name == ALIAS


def test_usage_is_the_servers_count_which_is_the_gguf_tokenizers(server: Server) -> None:
    model = get_chat_model(server.settings(), max_tokens=4)
    messages = [SystemMessage("Tu réponds en français."), HumanMessage("Compte jusqu'à dix.")]
    reply = model.invoke(messages)
    usage = reply.usage_metadata
    assert usage is not None
    offline = ChatLlamaCpp(model_path=server.model_path).get_num_tokens_from_messages(messages)
    assert usage["input_tokens"] == offline  # same model: exact agreement
    assert usage["output_tokens"] == 4 and reply.response_metadata["finish_reason"] == "length"


async def test_streaming_sync_and_async_with_usage(server: Server) -> None:
    model = get_chat_model(server.settings(), max_tokens=6)
    chunks = list(model.stream("Dis bonjour."))
    assert len([c for c in chunks if c.text]) >= 2  # token by token, not one block
    assert any(c.usage_metadata and c.usage_metadata["output_tokens"] > 0 for c in chunks)
    streamed = [c.text async for c in model.astream("Dis bonjour.")]
    assert "".join(streamed) == "".join(c.text for c in chunks)  # temperature 0
    assert (await model.ainvoke("Dis bonjour.")).text == "".join(streamed)


class City(BaseModel):
    name: str
    country: str


def test_with_structured_output_over_the_server(server: Server) -> None:
    model = get_chat_model(server.settings(), max_tokens=40)
    city = model.with_structured_output(City).invoke("Quelle est la capitale de l'Italie ?")
    assert isinstance(city, City) and city.name


# ---------------------------------------------------------------- embeddings


def test_embeddings_over_the_servers_endpoint(server: Server) -> None:
    embeddings = get_embeddings(server.settings())
    docs = embeddings.embed_documents(["Le Dell XPS 15 a deux ans de garantie.", "Pilates"])
    query = embeddings.embed_query("Le Dell XPS 15 a deux ans de garantie.")
    assert len(docs) == 2 and len(docs[0]) == len(query) == 1536  # Qwen2.5-1.5B's width
    assert math.isclose(sum(x * x for x in query), 1.0, rel_tol=1e-3)  # normalised
    assert sum(a * b for a, b in zip(query, docs[0], strict=True)) > 0.999


# ---------------------------------------------------------------- errors


def test_a_wrong_key_is_a_typed_error(server: Server) -> None:
    settings = server.settings(OPENAI_API_KEY="wrong")
    with pytest.raises(EndpointAuthenticationError, match="OPENAI_API_KEY"):
        get_chat_model(settings).invoke("bonjour")
    with pytest.raises(EndpointAuthenticationError):
        get_embeddings(settings).embed_query("bonjour")


def test_an_unreachable_server_is_a_typed_error(server: Server) -> None:
    with socket.socket() as sock:  # a port of 127.0.0.1 nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = server.settings(OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1")
    with pytest.raises(EndpointUnreachableError, match="is the server running"):
        get_chat_model(settings).invoke("bonjour")


def test_a_slow_answer_is_a_timeout(server: Server) -> None:
    settings = server.settings(MEMORY_CHAINS_OPENAI_TIMEOUT="0.05")
    with pytest.raises(ModelTimeoutError, match="MEMORY_CHAINS_OPENAI_TIMEOUT"):
        get_chat_model(settings, max_tokens=16).invoke("Raconte une histoire.")


def test_check_reports_a_model_name_the_server_does_not_serve(server: Server) -> None:
    # llama.cpp answers whatever name it is sent: only the check can tell
    report = check_endpoint(server.settings(MEMORY_CHAINS_OPENAI_MODEL="gpt-4o-mini"))
    assert not report.ok
    assert [(c.name, c.status) for c in report.checks] == [
        ("endpoint", "ok"),
        ("chat model", "failed"),
        ("chat", "ok"),
        ("streaming", "ok"),
        ("structured output", "ok"),
        ("embeddings model", "ok"),
        ("embeddings", "ok"),
    ], report.lines()
    assert f"it serves: {ALIAS}" in report.checks[1].detail
    assert "dimension 1536" in report.checks[-1].detail


def test_models_check_command(server: Server, tmp_path: Path) -> None:
    done = run_cli(server, tmp_path, ["models", "--check"], MEMORY_CHAINS_EMBEDDINGS="e5")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"base URL: {server.url} (OPENAI_BASE_URL)" in done.stdout
    assert f"chat model: {ALIAS} (MEMORY_CHAINS_OPENAI_MODEL)" in done.stdout
    assert "[ok] structured output: response_format json_schema is honoured" in done.stdout
    assert "[failed]" not in done.stdout and KEY not in done.stdout
    wrong = run_cli(server, tmp_path, ["models", "--check"], OPENAI_API_KEY="wrong")
    assert wrong.returncode == 1
    assert "[failed] endpoint:" in wrong.stdout and "refused the API key" in wrong.stdout


# ---------------------------------------------------------------- the library's modules


def test_the_rewriter_gets_a_structured_choice_from_the_server(server: Server) -> None:
    from memory_chains.rewrite import QueryRewriter

    history = [
        ("human", "Je regarde le Dell XPS 15 et le HP Pavilion 14."),
        ("ai", "Bon choix, ce sont deux bons portables."),
    ]
    result = QueryRewriter(get_chat_model(server.settings())).rewrite(
        "Quelle est sa garantie ?", history
    )
    # Whether the model picks the right referent is the rewriter's business (its own
    # tests); here: the calls went through, their JSON parsed, a rewrite came back.
    assert result.model_calls >= 1 and result.output_tokens > 0, result  # usage counted
    assert "JSON" not in (result.error or ""), result
    assert result.standalone != "Quelle est sa garantie ?"


def test_the_summary_folds_turns_over_the_server(server: Server) -> None:
    from memory_chains.memory import LLMSummarizer, SummaryCore

    llm = get_chat_model(server.settings())
    summarizer = LLMSummarizer(llm, max_output_tokens=160)
    assert summarizer.structured  # the endpoint model gets the JSON schema
    memory = SummaryCore(summarizer=summarizer, max_turns=1, keep_last=0, background=False)
    memory.add_exchange(
        "Mon numéro de client est 48213, livraison à Lyon le 14 mars.",
        "C'est noté : client 48213, livraison à Lyon le 14 mars.",
    )
    memory.add_exchange("Merci.", "Avec plaisir.")
    assert memory.stats().compactions == 1 and memory.last_error is None
    assert "48213" in memory.context().summary


@pytest.mark.parametrize("structured", ["auto", "prompt"])
def test_entity_extraction_over_the_server(server: Server, structured: str) -> None:
    """``prompt``: no response_format at all, as for a server without JSON support; the
    extractor's repair and retry make do with what the model writes."""
    from memory_chains.entities import LLMEntityExtractor

    llm = get_chat_model(server.settings(MEMORY_CHAINS_OPENAI_STRUCTURED=structured))
    extraction = LLMEntityExtractor(llm, max_tokens=160).extract(
        "User: Je cherche le Dell XPS 15.\nAssistant: Le Dell XPS 15 est à 1599 euros.",
        ["PRODUCT", "MONEY"],
    )
    assert extraction.ok, extraction.error
    assert extraction.model_calls in (1, 2)
    assert any("xps 15" in m.name.lower() for m in extraction.mentions), extraction.mentions


def test_long_term_extraction_over_the_server(server: Server) -> None:
    from memory_chains.longterm import LongTermExtractor

    llm = get_chat_model(server.settings())
    extraction = LongTermExtractor(llm, max_tokens=200).extract(
        "Je m'appelle Camille et je préfère le Pilates le samedi matin.", "Bienvenue Camille !"
    )
    assert extraction.model_calls == 1
    assert extraction.facts or extraction.profile, extraction


# ---------------------------------------------------------------- the commands


def test_chat_once_streams_over_the_server(server: Server, tmp_path: Path) -> None:
    done = run_cli(
        server,
        tmp_path,
        ["chat", "--once", "Quels sont les horaires du cours de Pilates ?"],
        MEMORY_CHAINS_EMBEDDINGS="e5",
    )
    assert done.returncode == 0, done.stderr
    assert f"OpenAI-compatible {ALIAS} at {server.url}" in done.stderr
    assert "sources : salle_de_sport/pilates.md" in done.stdout


def test_demo_seed_scenarios_over_the_server(server: Server, tmp_path: Path) -> None:
    """``memory-chains demo`` over the server, remote chat with local e5 embeddings (the
    mixed setup: retrieval is the in-process path's, so the answers can be compared)."""
    done = run_cli(server, tmp_path, ["demo", "--memory-only"], MEMORY_CHAINS_EMBEDDINGS="e5")
    print(done.stdout)  # the answers, for the record (pytest -s)
    print(done.stderr)
    assert done.returncode == 0, done.stderr
    assert "embeddings: multilingual-e5-small" in done.stderr
    summary = done.stdout.split("Dernière réponse de chaque scénario")[1]
    for name in ("retours", "pilates", "dell", "gamer"):
        line = next(row for row in summary.splitlines() if row.startswith(name))
        assert "avec mémoire" in line and line.rstrip()[-3:] != "''", line
    assert done.stdout.count("question réécrite") >= 4  # every follow-up was rewritten
