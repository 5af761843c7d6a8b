"""ConversationMetrics: clarification patterns, memory usage, coherence, store and CLI."""

from __future__ import annotations

import asyncio
import json

import pytest
from langchain_core.embeddings import Embeddings

from memory_chains.cli import main
from memory_chains.errors import InvalidInputError, MalformedOutputError, ModelCallError
from memory_chains.metrics import (
    MEMORY_CONTEXT_KEY,
    ConversationMetrics,
    content_words,
    is_clarification_request,
    memory_usage,
)
from memory_chains.stores import InMemoryStore, Turn, open_store
from memory_chains.testing import HashEmbeddings, word_counter


class TopicEmbeddings(Embeddings):
    """2-d vectors: laptop messages point one way, gym messages the other."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def _vec(self, text: str) -> list[float]:
        return [0.0, 1.0] if "pilates" in text.lower() else [1.0, 0.0]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)


class BrokenEmbeddings(TopicEmbeddings):
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise RuntimeError("backend down")


class ShortEmbeddings(TopicEmbeddings):
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0]]


@pytest.mark.parametrize(
    "text",
    [
        "Pouvez-vous préciser le modèle qui vous intéresse ?",
        "Pourriez-vous me préciser la date de commande ?",
        "Que voulez-vous savoir sur les produits électroniques ?",
        "De quel ordinateur parlez-vous ?",
        "Voulez-vous dire le Dell XPS 15 ou le Lenovo ?",
        "Merci de préciser votre question.",
        "Je ne suis pas sûr de comprendre votre question.",
        "Qu'entendez-vous par « rapide » ?",
        "Lequel des deux ?",
        "Could you clarify which laptop you mean?",
        "Which one do you mean?",
        "I'm not sure what you are asking.",
        "Please specify the order number.",
        "What would you like to know about the warranty?",
        "Do you mean the Lenovo?",
    ],
)
def test_clarification_requests_are_detected(text: str) -> None:
    assert is_clarification_request(text)


@pytest.mark.parametrize(
    "text",
    [
        "Vous avez 30 jours pour retourner un produit.",
        "Le cours de Pilates n'existe pas le samedi.",
        "La carte graphique du ASUS ROG Strix G15 est une RTX 4060.",
        "Lequel est le moins cher : le Lenovo.",  # an answer, not a question back
        "Which one is cheaper: the Lenovo, at 1,099 €.",
        "The warranty lasts two years.",
        "Avez-vous d'autres questions ?",
    ],
)
def test_answers_are_not_clarification_requests(text: str) -> None:
    assert not is_clarification_request(text)


def test_content_words_fold_and_drop_stop_words() -> None:
    assert content_words("Les horaires du cours de Pilates, le SAMEDI à 10 h") == {
        "horai",
        "cours",
        "pilat",
        "samed",
        "10",
    }
    # prefix stemming: inflections meet, numbers stay whole
    assert content_words("débutante Pilates 1599") == content_words("débutants pilater 1599")
    assert content_words("1599") != content_words("15999")
    assert content_words("Human: AI: the and les") == frozenset()


def test_memory_usage_ignores_words_the_question_already_has() -> None:
    context = "Human: Je compare le Dell XPS 15 et le Lenovo Yoga"
    # "dell" is in the question: the memory did not bring it
    used, offered = memory_usage(context, "Et la garantie du Dell ?", "Le Lenovo Yoga : 2 ans.")
    assert (used, offered) == (2, 5)  # lenovo, yoga of {compare, xps, 15, lenovo, yoga}


def test_measure_lengths_tokens_and_clarifications() -> None:
    metrics = ConversationMetrics(coherence=False, token_counter=word_counter)
    report = metrics.measure(
        [
            ("Quelle est votre politique de retour ?", "Vous avez 30 jours."),
            ("Et pour les produits électroniques ?", "De quels produits parlez-vous ?"),
        ]
    )
    assert report.turns == 2
    assert report.user_chars_mean == (38 + 36) / 2
    assert report.assistant_tokens_mean == (4 + 5) / 2
    assert report.clarification_requests == 1
    assert report.clarification_turns == (2,)
    assert report.topic_coherence is None
    assert report.memory_usage is None and report.turns_with_memory == 0


def test_topic_coherence_is_mean_cosine_of_consecutive_messages() -> None:
    emb = TopicEmbeddings()
    metrics = ConversationMetrics(embeddings=emb, token_counter=word_counter)
    report = metrics.measure(
        [("Le Dell XPS ?", "Il coûte 1599 €."), ("Et le Pilates ?", "Le cours de Pilates.")]
    )
    # messages: laptop, laptop, gym, gym -> similarities 1, 0, 1
    assert report.topic_coherence == pytest.approx(2 / 3)
    assert report.min_coherence == pytest.approx(0.0)
    assert emb.calls == [
        ["Le Dell XPS ?", "Il coûte 1599 €.", "Et le Pilates ?", "Le cours de Pilates."]
    ]


def test_empty_answers_are_not_embedded() -> None:
    emb = TopicEmbeddings()
    ConversationMetrics(embeddings=emb, token_counter=word_counter).measure([("q", ""), ("r", "s")])
    assert emb.calls == [["q", "r", "s"]]


def test_memory_context_from_triples_turn_metadata_and_contexts() -> None:
    metrics = ConversationMetrics(coherence=False, token_counter=word_counter)
    ctx = "Human: Je cherche un Dell XPS 15"
    answer = "La garantie du Dell XPS 15 est de 2 ans."
    by_triple = metrics.measure([("Et sa garantie ?", answer, ctx)])
    by_turn = metrics.measure(
        [Turn(1, "Et sa garantie ?", answer, metadata={MEMORY_CONTEXT_KEY: ctx})]
    )
    by_arg = metrics.measure([("Et sa garantie ?", answer)], contexts=[ctx])
    for report in (by_triple, by_turn, by_arg):
        assert report.memory_usage == pytest.approx(3 / 4)  # dell xps 15 of + cherche
        assert report.answers_using_memory == 1.0
        assert report.turns_with_memory == 1


def test_history_window_assumes_previous_exchanges() -> None:
    turns = [
        ("Je cherche un laptop gamer", "Je vous recommande le ASUS ROG Strix G15."),
        ("Il a combien de RAM ?", "16 Go."),
        ("Et la carte graphique ?", "Le ASUS ROG Strix G15 a une RTX 4060."),
    ]
    none = ConversationMetrics(coherence=False, token_counter=word_counter).measure(turns)
    window = ConversationMetrics(
        coherence=False, token_counter=word_counter, history_window=1
    ).measure(turns)
    wide = ConversationMetrics(
        coherence=False, token_counter=word_counter, history_window=2
    ).measure(turns)
    assert none.turns_with_memory == 0
    # window 1: turn 3 sees only "RAM / 16 Go", which its answer does not use
    assert window.turns_with_memory == 2
    assert window.answers_using_memory == pytest.approx(0.0)
    # window 2: turn 3 also sees the ASUS ROG Strix G15, which its answer repeats
    assert wide.answers_using_memory == pytest.approx(0.5)


def test_inputs_are_not_mutated() -> None:
    turns = [("a b", "c d")]
    contexts = ["Human: x"]
    ConversationMetrics(coherence=False, token_counter=word_counter).measure(turns, contexts)
    assert turns == [("a b", "c d")] and contexts == ["Human: x"]


@pytest.mark.parametrize(
    ("turns", "contexts", "match"),
    [
        ([], None, "no turns"),
        ("hello", None, "list of Turn"),
        ([("only one",)], None, "turn 1"),
        ([("q", 3)], None, "turn 1"),
        ([("q", "a")], ["x", "y"], "one context"),
        ([("q", "a")], [3], "contexts\\[0\\]"),
    ],
)
def test_bad_input_is_refused(turns: object, contexts: object, match: str) -> None:
    metrics = ConversationMetrics(coherence=False, token_counter=word_counter)
    with pytest.raises(InvalidInputError, match=match):
        metrics.measure(turns, contexts)  # type: ignore[arg-type]


@pytest.mark.parametrize("window", [-1, 1.5, True])
def test_bad_history_window_is_refused(window: object) -> None:
    with pytest.raises(InvalidInputError, match="history_window"):
        ConversationMetrics(history_window=window)  # type: ignore[arg-type]


def test_embedding_failures_are_typed() -> None:
    turns = [("q", "a"), ("r", "b")]
    with pytest.raises(ModelCallError, match="coherence=False"):
        ConversationMetrics(embeddings=BrokenEmbeddings(), token_counter=word_counter).measure(
            turns
        )
    with pytest.raises(MalformedOutputError, match="1 vectors for 4 messages"):
        ConversationMetrics(embeddings=ShortEmbeddings(), token_counter=word_counter).measure(turns)


def test_measure_session_reads_the_store() -> None:
    store = InMemoryStore()
    store.append_turn("alice", "s1", "Horaires du Pilates ?", "Le mardi à 18 h.")
    store.append_turn(
        "alice",
        "s1",
        "Et le samedi ?",
        "Pas de Pilates le samedi.",
        {MEMORY_CONTEXT_KEY: "Human: Horaires du Pilates ?\nAI: Le mardi à 18 h."},
    )
    store.append_turn("alice", "other", "x", "y")
    report = ConversationMetrics(
        embeddings=HashEmbeddings(), token_counter=word_counter
    ).measure_session(store, "alice", "s1")
    assert report.turns == 2
    assert report.turns_with_memory == 1
    assert report.memory_usage == pytest.approx(1 / 4)  # pilates of {horaires, pilates, mardi, 18}
    with pytest.raises(InvalidInputError, match="sessions of this user: other, s1"):
        ConversationMetrics(coherence=False).measure_session(store, "alice", "nope")
    with pytest.raises(InvalidInputError, match="user_id"):
        ConversationMetrics(coherence=False).measure_session(store, "bad id!", "s1")


def test_measure_session_opens_a_store_url(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'm.sqlite3'}"
    with open_store(url) as store:
        store.append_turn("alice", "s1", "Bonjour", "Bonjour Alice.")
    report = ConversationMetrics(coherence=False).measure_session(url, "alice", "s1")
    assert report.turns == 1
    with pytest.raises(InvalidInputError, match="BaseStore or a store URL"):
        ConversationMetrics(coherence=False).measure_session(42, "alice", "s1")  # type: ignore[arg-type]


def test_async_flavours_match_sync() -> None:
    store = InMemoryStore()
    store.append_turn("bob", "s", "Le Dell ?", "Le Dell XPS 15.")
    store.append_turn("bob", "s", "Et le Pilates ?", "Pouvez-vous préciser ?")
    metrics = ConversationMetrics(embeddings=TopicEmbeddings(), token_counter=word_counter)
    sync = metrics.measure_session(store, "bob", "s")
    assert asyncio.run(metrics.ameasure_session(store, "bob", "s")) == sync
    with pytest.raises(ModelCallError):
        asyncio.run(
            ConversationMetrics(embeddings=BrokenEmbeddings(), token_counter=word_counter).ameasure(
                [("q", "a")]
            )
        )


def test_report_as_dict_is_json() -> None:
    report = ConversationMetrics(coherence=False, token_counter=word_counter).measure(
        [("q", "Pouvez-vous préciser ?")]
    )
    data = json.loads(json.dumps(report.as_dict()))
    assert data["clarification_turns"] == [1]
    assert data["turns"] == 1


def test_cli_metrics_json(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'm.sqlite3'}"
    store = open_store(url)
    store.append_turn("alice", "s1", "Quelle est votre politique de retour ?", "30 jours.")
    store.append_turn("alice", "s1", "Et pour l'électronique ?", "Que voulez-vous dire ?")
    store.close()
    args = ["metrics", "--store", url, "--user", "alice", "--session", "s1"]
    assert main([*args, "--no-coherence", "--json"]) == 0
    out = capsys.readouterr().out
    data = json.loads(out.strip().splitlines()[-1])
    assert data["turns"] == 2 and data["clarification_requests"] == 1
    assert data["turns_with_memory"] == 1  # --assume-window 5 by default
    assert data["topic_coherence"] is None
    assert "clarification_turns" in out
    assert main([*args[:-1], "missing", "--no-coherence"]) == 1
    assert "no turns in session 'missing'" in capsys.readouterr().err


def test_cli_metrics_help_describes_the_command_like_the_other_store_commands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["metrics", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "Conversation metrics of one stored session" in help_text
    assert "--store URL" in help_text and "--user U" in help_text
