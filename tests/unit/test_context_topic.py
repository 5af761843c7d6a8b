"""Topic changes: detection (French and English, the seeds' conversations), the history cut
for a rewriter, and what the context builder does when the subject changes."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from memory_chains.context import (
    ContextBuilder,
    EntitySource,
    TopicPolicy,
    TopicTracker,
    detect_topic_change,
    history_since_topic_start,
    short_term_sources,
    to_exchanges,
)
from memory_chains.entities import EntityTracker, RuleEntityExtractor
from memory_chains.errors import InvalidInputError
from memory_chains.memory import WindowCore
from memory_chains.testing import HashEmbeddings, word_counter

# the seeds' conversations (seed 000: returns, laptop; seed 003: Dell/Lenovo; 004: Pilates)
RETURNS = [
    ("Quelle est votre politique de retour ?", "Vous avez 30 jours pour retourner un produit.")
]
PILATES = [
    (
        "Quels sont les horaires du cours de Pilates ?",
        "Les cours de Pilates ont lieu le mardi à 12h30 et le jeudi à 19h.",
    )
]
LAPTOP = [
    (
        "Je cherche un laptop pour le gaming",
        "Je vous recommande le ASUS ROG Strix G15, excellent rapport qualité-prix.",
    ),
    ("Il a combien de RAM ?", "16 Go."),
]
DELL = [
    ("Je cherche le Dell XPS 15", "Le Dell XPS 15 est un excellent laptop."),
    ("Quelle est sa garantie ?", "La garantie du Dell XPS 15 est de 2 ans."),
]
EN_RETURNS = [("What is your return policy?", "You have 30 days to return a product.")]
EN_YOGA = [("When are the yoga classes?", "Yoga is on Monday at 7pm and Wednesday at 6pm.")]

SAME_TOPIC = [
    (RETURNS, "Et pour les produits électroniques ?"),
    (RETURNS, "Combien de temps pour retourner un ordinateur ?"),
    (PILATES, "Et pour le samedi ?"),
    (PILATES, "Le cours de Pilates a-t-il lieu le samedi ?"),
    (LAPTOP, "Et la carte graphique ?"),
    (LAPTOP, "Quelle est la carte graphique de l'ASUS ROG Strix G15 ?"),
    (DELL, "Et compare à celui de Lenovo ?"),
    (DELL[:1], "Quelle est la garantie ?"),
    (EN_RETURNS, "What about electronics?"),
    (EN_RETURNS, "Can electronics be returned after 30 days?"),
    (EN_YOGA, "Is there a yoga class on Saturday?"),
    (EN_YOGA, "And on Saturday?"),
    (EN_YOGA, "Does it cost extra?"),
]
NEW_TOPIC = [
    (RETURNS, "Quels sont les horaires du cours de Pilates ?"),
    (PILATES, "Quelle est la garantie du Dell XPS 15 ?"),
    (PILATES, "Sinon, livrez-vous en Belgique ?"),
    (LAPTOP, "Combien coûte l'abonnement annuel à la salle de sport ?"),
    (DELL, "Changeons de sujet : quels sont vos horaires d'ouverture ?"),
    (DELL, "J'ai une autre question : acceptez-vous PayPal ?"),
    (EN_RETURNS, "When are the yoga classes?"),
    (EN_YOGA, "How much does the Dell XPS 15 cost?"),
    (EN_YOGA, "By the way, do you ship to Belgium?"),
]


@pytest.mark.parametrize(("turns", "question"), SAME_TOPIC)
def test_follow_ups_and_related_questions_stay_on_topic(
    turns: list[tuple[str, str]], question: str
) -> None:
    change = detect_topic_change(turns, question)
    assert not change.changed, change.reasons


@pytest.mark.parametrize(("turns", "question"), NEW_TOPIC)
def test_new_subjects_are_detected(turns: list[tuple[str, str]], question: str) -> None:
    change = detect_topic_change(turns, question)
    assert change.changed, change.reasons


def test_going_back_to_an_earlier_subject_is_a_change_and_says_so() -> None:
    shop_then_gym = RETURNS + PILATES
    fr = detect_topic_change(shop_then_gym, "Revenons à la politique de retour : et un PC ?")
    en = detect_topic_change(EN_RETURNS + EN_YOGA, "Going back to returns, do laptops count?")
    assert fr.changed and fr.returning
    assert en.changed and en.returning


def test_a_weak_opener_is_not_a_change_when_the_question_continues() -> None:
    change = detect_topic_change(PILATES, "Sinon, le cours de Pilates du jeudi est-il complet ?")
    assert not change.changed


def test_no_history_means_no_change() -> None:
    assert not detect_topic_change([], "Quels sont vos horaires ?").changed


def test_topic_start_finds_the_last_boundary_shop_gym_back() -> None:
    history = [
        *RETURNS,
        ("Et pour les produits électroniques ?", "Non ouverts, sauf défaut."),
        *PILATES,
        ("Et pour le samedi ?", "Pas de Pilates le samedi."),
        ("Revenons aux retours : et pour un ordinateur portable ?", "30 jours aussi."),
        ("Et s'il est ouvert ?", "Seulement en cas de défaut."),
    ]
    tracker = TopicTracker()
    assert tracker.topic_start(history[:4]) == 2
    assert tracker.topic_start(history) == 4
    assert tracker.topic_start(history, "Et si l'écran est rayé ?") == 4
    assert tracker.topic_start(history, "Quel est le prix du cours de yoga ?") == len(history)


def test_history_since_topic_start_keeps_the_shape_of_the_history() -> None:
    messages = [
        HumanMessage("Quelle est votre politique de retour ?"),
        AIMessage("30 jours."),
        HumanMessage("Quels sont les horaires du cours de Pilates ?"),
        AIMessage("Mardi et jeudi."),
    ]
    assert history_since_topic_start(messages, "Et pour le samedi ?") == messages[2:]
    roles = [("human", m.content) if m.type == "human" else ("ai", m.content) for m in messages]
    assert history_since_topic_start(roles) == roles[2:]
    assert history_since_topic_start(roles, "Livrez-vous en Belgique ?") == []
    pairs = [(h, a) for h, a in to_exchanges(messages)]
    assert history_since_topic_start(pairs, "Et le jeudi ?") == pairs[1:]
    original = list(messages)
    history_since_topic_start(messages, "Quelle est la garantie du Dell XPS 15 ?")
    assert messages == original  # the input is never modified


def test_to_exchanges_reads_every_history_shape() -> None:
    assert to_exchanges([("user", "q"), ("assistant", "a"), ("user", "q2")]) == [
        ("q", "a"),
        ("q2", ""),
    ]
    assert to_exchanges([("q", "a")]) == [("q", "a")]
    with pytest.raises(InvalidInputError, match="not a string"):
        to_exchanges("Human: q")
    with pytest.raises(InvalidInputError, match="got int"):
        to_exchanges([3])


def test_embeddings_decide_only_when_words_are_not_shared() -> None:
    class Fixed:
        """Similarity 1.0 between any two texts: never a change by embeddings."""

        calls = 0
        topic_similarity_threshold = 0.9

        def embed_query(self, text: str) -> list[float]:
            Fixed.calls += 1
            return [1.0, 0.0]

    tracker = TopicTracker(Fixed())
    assert not tracker.detect(PILATES, "Quelle est la garantie du Dell XPS 15 ?").changed
    assert tracker.detect(PILATES, "Changeons de sujet : et le Dell ?").changed  # marker wins
    calls = Fixed.calls
    tracker.detect(PILATES, "Le cours de Pilates du samedi ?")  # shares words: no embedding
    assert Fixed.calls == calls


def test_embeddings_below_the_threshold_confirm_a_change() -> None:
    tracker = TopicTracker(HashEmbeddings(), similarity_threshold=0.99)
    change = tracker.detect(PILATES, "Quelle est la garantie du Dell XPS 15 ?")
    assert change.changed and change.similarity is not None and change.similarity < 0.99


def test_tracker_validates_its_options() -> None:
    with pytest.raises(InvalidInputError, match="window"):
        TopicTracker(window=0)
    with pytest.raises(InvalidInputError, match="embed_query"):
        TopicTracker(embeddings=object())
    with pytest.raises(InvalidInputError, match="question must be a string"):
        TopicTracker().detect(PILATES, None)  # type: ignore[arg-type]


# -- the builder's topic policy --------------------------------------------------------


def conversation(turns: list[tuple[str, str]]) -> tuple[WindowCore, EntityTracker]:
    mem = WindowCore(k=10)
    tracker = EntityTracker(RuleEntityExtractor(use_spacy=False))
    for human, ai in turns:
        mem.add_exchange(human, ai)
        tracker.observe(human, ai)
    return mem, tracker


def test_a_new_subject_drops_the_old_turns_and_demotes_the_entities() -> None:
    mem, entities = conversation(DELL)
    sources = [*short_term_sources(mem), EntitySource(entities)]
    builder = ContextBuilder(sources, 200, word_counter, topic=True)

    same = builder.build("Et compare à celui de Lenovo ?")
    assert same.topic is not None and not same.topic.changed
    assert same.get("recent") is not None and same.get("entities") is not None

    new = builder.build("Quels sont les horaires du cours de Pilates ?")
    assert new.topic is not None and new.topic.changed
    assert "recent" in new.dropped and new.turns == ()
    report = {r.name: r for r in new.reports}
    assert report["recent"].reason == "topic change" and report["recent"].need > 0
    assert report["recent"].tokens == 0
    assert report["entities"].reason.startswith("demoted")
    assert report["entities"].priority < min(s.priority for s in sources)
    assert mem.stats().turns == 2  # nothing was deleted: only this prompt leaves it out


def test_demoted_blocks_are_the_first_to_go_when_the_budget_is_short() -> None:
    mem, entities = conversation(DELL)
    sources = [*short_term_sources(mem), EntitySource(entities)]
    policy = TopicPolicy(on_change={"recent": "demote", "entities": "demote"})
    builder = ContextBuilder(sources, 40, word_counter, topic=policy)
    ctx = builder.build("Combien coûte l'abonnement annuel à la salle de sport ?")
    assert ctx.topic is not None and ctx.topic.changed
    assert "recent" in ctx.kept + ctx.shrunk  # demoted, not dropped
    keep = ContextBuilder(sources, 40, word_counter).build("Combien coûte l'abonnement ?")
    assert keep.topic is None


def test_within_a_topic_the_turns_start_where_the_topic_began() -> None:
    mem, _ = conversation([*RETURNS, *PILATES, ("Et pour le samedi ?", "Pas le samedi.")])
    builder = ContextBuilder(short_term_sources(mem), 200, word_counter, topic=True)
    ctx = builder.build("Et le jeudi soir ?")
    assert [h for h, _ in ctx.turns] == [PILATES[0][0], "Et pour le samedi ?"]
    assert "cut at topic start" in {r.name: r for r in ctx.reports}["recent"].reason
    off = ContextBuilder(
        short_term_sources(mem), 200, word_counter, topic=TopicPolicy(cut_history=False)
    )
    assert len(off.build("Et le jeudi soir ?").turns) == 3


def test_policy_rejects_unknown_actions() -> None:
    with pytest.raises(InvalidInputError, match="on_change"):
        TopicPolicy(on_change={"recent": "forget"})  # type: ignore[dict-item]


# -- the evaluation behind `memory-chains eval topics` ----------------------------------


def test_topic_evaluation_scores_decisions_and_reads_the_threshold(tmp_path: Path) -> None:
    from memory_chains.evaluation.topics import evaluate_topics, load_topic_cases

    path = tmp_path / "cases.jsonl"
    path.write_text(
        '{"turns": [["Horaires du Pilates ?", "Mardi."]], "question": "Et le samedi ?", '
        '"changed": false}\n'
        '{"turns": [["Horaires du Pilates ?", "Mardi."]], "question": "Livrez-vous en '
        'Belgique ?", "changed": false}\n',
        encoding="utf-8",
    )
    cases = load_topic_cases(path)
    report = evaluate_topics(cases, TopicTracker())
    assert report.accuracy == 0.5 and report.precision == 0.0
    assert report.errors[0][0] == "Livrez-vous en Belgique ?"
    with_embeddings = evaluate_topics(cases, TopicTracker(HashEmbeddings()))
    assert len(with_embeddings.similarities) == 2
    assert "best_threshold" in with_embeddings.as_dict()
    path.write_text('{"question": "q"}\n', encoding="utf-8")
    with pytest.raises(InvalidInputError, match=":1: expected"):
        load_topic_cases(path)


def test_packaged_topic_cases_are_decided_well_without_embeddings() -> None:
    from memory_chains.cli._eval_topics import _DEFAULT_DATASET
    from memory_chains.evaluation.topics import evaluate_topics, load_topic_cases

    report = evaluate_topics(load_topic_cases(_DEFAULT_DATASET), TopicTracker())
    assert report.cases == 42
    assert report.accuracy >= 0.9, report.errors


def test_eval_topics_command_prints_one_json_line(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from memory_chains.cli import main

    assert main(["eval", "topics", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["cases"] == 42 and summary["embeddings"] is None
    assert 0.9 <= summary["accuracy"] <= 1.0


def test_embeddings_without_a_threshold_are_not_asked() -> None:
    class Uncalibrated:
        calls = 0

        def embed_query(self, text: str) -> list[float]:
            Uncalibrated.calls += 1
            return [1.0, 0.0]

    change = TopicTracker(Uncalibrated()).detect(PILATES, "Quelle est la garantie du Dell ?")
    assert change.changed and change.similarity is None and Uncalibrated.calls == 0
    assert "no similarity threshold for these embeddings" in change.reasons
    given = TopicTracker(Uncalibrated(), similarity_threshold=0.5)
    assert not given.detect(PILATES, "Quelle est la garantie du Dell ?").changed
    assert Uncalibrated.calls > 0


def test_the_threshold_belongs_to_the_embeddings() -> None:
    from memory_chains.context import DEFAULT_SIMILARITY_THRESHOLD, similarity_threshold_of
    from memory_chains.evaluation.vector_cache import CachedEmbeddings
    from memory_chains.providers import E5Embeddings

    assert similarity_threshold_of(E5Embeddings()) == DEFAULT_SIMILARITY_THRESHOLD
    assert similarity_threshold_of(CachedEmbeddings(E5Embeddings())) == DEFAULT_SIMILARITY_THRESHOLD
    assert similarity_threshold_of(HashEmbeddings()) is None
    assert similarity_threshold_of(None) is None
    assert TopicTracker(E5Embeddings()).similarity_threshold == DEFAULT_SIMILARITY_THRESHOLD
    assert TopicTracker(HashEmbeddings()).similarity_threshold is None
    with pytest.raises(InvalidInputError, match="between -1 and 1"):
        TopicTracker(HashEmbeddings(), similarity_threshold=1.5)
