"""The real embedded model (llama.cpp + Qwen GGUF), its tokenizer, and the e5 embeddings.

The model is the one the settings select: ``MEMORY_CHAINS_MODEL_PATH`` when set (fast for
development), otherwise the packaged model, assembled on first use under
``MEMORY_CHAINS_HOME``. Prompts are short and few: the machine is shared.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel

from memory_chains.config import Settings, load_settings
from memory_chains.providers import (
    ChatLlamaCpp,
    E5Embeddings,
    GGUFTokenizer,
    _model_files,
    get_chat_model,
    get_token_counter,
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def chat() -> ChatLlamaCpp:
    settings = load_settings()
    if settings.use_openai:
        settings = dataclasses.replace(settings, openai_api_key="")  # this file tests llama.cpp
    model = get_chat_model(settings, max_tokens=24)
    assert isinstance(model, ChatLlamaCpp)
    return model


def test_invoke_reports_usage_and_timings(chat: ChatLlamaCpp) -> None:
    answer = chat.invoke(
        [SystemMessage("Réponds en un seul mot."), HumanMessage("Capitale de la France ?")]
    )
    assert "paris" in str(answer.content).lower()
    usage = answer.usage_metadata
    assert usage is not None and usage["input_tokens"] > 10 and usage["output_tokens"] >= 1
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
    assert answer.response_metadata["finish_reason"] in {"stop", "length"}
    assert answer.response_metadata["timings"]["predicted_n"] == usage["output_tokens"]


def test_stream_yields_several_chunks(chat: ChatLlamaCpp) -> None:
    chunks = list(chat.stream("Count from 1 to 5, comma separated."))
    assert sum(1 for c in chunks if c.content) > 1
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    assert "3" in str(total.content)
    assert total.usage_metadata is not None and total.usage_metadata["output_tokens"] > 1


def test_stop_sequence_is_honoured(chat: ChatLlamaCpp) -> None:
    text = str(chat.invoke("Count from 1 to 10, comma separated.", stop=["5"]).content)
    assert "4" in text and "5" not in text and "6" not in text


class Capital(BaseModel):
    country: str
    city: str


def test_structured_output_pydantic(chat: ChatLlamaCpp) -> None:
    result = chat.with_structured_output(Capital).invoke("What is the capital of Italy?")
    assert isinstance(result, Capital)
    assert result.city.lower() == "rome"


async def test_ainvoke_and_astream(chat: ChatLlamaCpp) -> None:
    answer = await chat.ainvoke("Say hello in French, one word.")
    assert "bonjour" in str(answer.content).lower()
    chunks = [c async for c in chat.astream("Count from 1 to 4, comma separated.")]
    assert sum(1 for c in chunks if c.content) > 1


# Varied French/English strings: accents, apostrophes, digits, code, emoji, CJK, spaces.
TOKENIZER_SAMPLES = [
    "L'été dernier, j'ai visité Montréal et Québec.",
    "I'd say it's 42, isn't it? They'll know, we've checked.",
    "Prix : 1 299,99 € TTC (soit 1083,33 € HT).",
    "def add(a, b):\n    return a + b\n",
    "https://example.com/path?query=mémoire&lang=fr#section-2",
    "Multiple   spaces\tand\ttabs\n\n\nand newlines",
    "Emoji test 😀🎉 👍🏽 done, 日本語のテキスト",
    "C'est l'heure qu'il faut qu'on s'en aille, n'est-ce pas ?",
]


def test_tokenizer_matches_llamacpp_prompt_tokens(chat: ChatLlamaCpp) -> None:
    counter = get_token_counter(chat)
    tokenizer = GGUFTokenizer.for_file(chat.model_path)
    overhead = tokenizer.count_chat([{"role": "user", "content": ""}])
    for text in TOKENIZER_SAMPLES:
        answer = chat.invoke([HumanMessage(text)], max_tokens=1)
        reported = answer.usage_metadata["input_tokens"]  # type: ignore[index]
        assert chat.get_num_tokens_from_messages([HumanMessage(text)]) == reported, text
        assert counter(text) + overhead == reported, text


def test_e5_query_passage_asymmetry_ranks_the_right_passage() -> None:
    embeddings = E5Embeddings()
    passages = [
        "La garantie du Dell XPS 15 est de deux ans, extensible à quatre.",
        "The MacBook Air M3 has an 18-hour battery life.",
        "Le restaurant ouvre à midi et ferme à 23 heures.",
    ]
    doc_vectors = embeddings.embed_documents(passages)
    assert len(doc_vectors) == 3 and all(len(v) == 384 for v in doc_vectors)
    norm = sum(x * x for x in doc_vectors[0]) ** 0.5
    assert abs(norm - 1.0) < 1e-3
    for query, expected in [
        ("Combien de temps dure la garantie du portable Dell ?", 0),
        ("how long does the Apple laptop battery last", 1),
        ("à quelle heure ouvre le restaurant", 2),
    ]:
        q = embeddings.embed_query(query)
        scores = [sum(a * b for a, b in zip(q, d, strict=True)) for d in doc_vectors]
        assert max(range(3), key=scores.__getitem__) == expected, (query, scores)
    # the query side differs from the passage side for the same text
    assert embeddings.embed_query(passages[0]) != embeddings.embed_documents(passages[:1])[0]


@pytest.mark.skipif(
    os.environ.get("MEMORY_CHAINS_TEST_ASSEMBLY") != "1",
    reason="writes and hashes 1.1 GB; set MEMORY_CHAINS_TEST_ASSEMBLY=1 to run",
)
def test_real_parts_assemble_to_the_official_sha(tmp_path: Path) -> None:
    path = _model_files.ensure_embedded_model(Settings(home=tmp_path))
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 22):
            digest.update(chunk)
    assert digest.hexdigest() == _model_files.EMBEDDED_MODEL_SHA256
    assert path.with_name(path.name + ".json").is_file()
