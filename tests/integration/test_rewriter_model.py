"""The rewriter with the real embedded model on the product's demo follow-ups.

Runs the embedded Qwen model through :func:`memory_chains.providers.get_chat_model`
(``MEMORY_CHAINS_MODEL_PATH`` may point at an already assembled GGUF).
"""

from __future__ import annotations

import pytest

from memory_chains.evaluation.metrics import fold
from memory_chains.rewrite import QueryRewriter

pytestmark = pytest.mark.integration

DEMOS = [
    (
        [
            ("user", "Je cherche un laptop pour le gaming"),
            (
                "assistant",
                "Je vous recommande le ASUS ROG Strix G15, excellent rapport qualité-prix.",
            ),
            ("user", "Il a combien de RAM ?"),
            ("assistant", "Il a 16 Go de RAM."),
        ],
        "Et la carte graphique ?",
        ["rog strix", "graphique"],
    ),
    (
        [
            ("user", "Je cherche le Dell XPS 15"),
            ("assistant", "Le Dell XPS 15 est un excellent laptop."),
        ],
        "Quelle est sa garantie ?",
        ["xps 15", "garantie"],
    ),
    (
        [
            ("user", "Je cherche le Dell XPS 15"),
            ("assistant", "Le Dell XPS 15 est un excellent laptop."),
            ("user", "Quelle est sa garantie ?"),
            (
                "assistant",
                "La garantie du Dell XPS 15 est de 2 ans. Le Lenovo ThinkPad X1 a 3 ans.",
            ),
        ],
        "Et celle du Lenovo ?",
        ["lenovo", "garantie"],
    ),
    (
        [
            ("user", "Quelle est votre politique de retour ?"),
            ("assistant", "Vous avez 30 jours pour retourner un produit."),
        ],
        "Et pour les produits électroniques ?",
        ["retour", "electronique"],
    ),
]


@pytest.fixture(scope="module")
def rewriter() -> QueryRewriter:
    from memory_chains.providers import get_chat_model

    return QueryRewriter(get_chat_model())


@pytest.mark.parametrize(("history", "question", "mentions"), DEMOS)
def test_demo_follow_ups_name_their_referent(
    rewriter: QueryRewriter, history: list[tuple[str, str]], question: str, mentions: list[str]
) -> None:
    result = rewriter.rewrite(question, history)
    # Rules settle some of them without the model ("template"); the others take one call
    # (the referent choice) or two (choice, then the free rewrite).
    assert result.method in ("template", "model"), (result.method, result.error)
    assert result.model_calls <= 2
    folded = fold(result.standalone)
    assert all(m in folded for m in mentions), (result.standalone, result.error)
    assert fold(result.standalone) != fold(question)


def test_standalone_question_skips_the_model(rewriter: QueryRewriter) -> None:
    result = rewriter.rewrite(
        "Quel est le prix du Lenovo ThinkPad X1 ?",
        [("user", "Bonjour"), ("assistant", "Bonjour !")],
    )
    assert (result.method, result.model_calls) == ("unchanged", 0)


async def test_async_rewrite_with_the_real_model(rewriter: QueryRewriter) -> None:
    history, question, mentions = DEMOS[1]
    result = await rewriter.arewrite(question, history)
    assert all(m in fold(result.standalone) for m in mentions), (result.standalone, result.error)


def test_the_model_picks_a_referent_two_exchanges_back(rewriter: QueryRewriter) -> None:
    history = [
        ("user", "Je regarde le Lenovo ThinkPad X1 Carbon pour le travail."),
        ("assistant", "C'est un ultraportable très léger."),
        ("user", "Vous livrez à Marseille ?"),
        ("assistant", "Oui, avec Chronopost en 48 heures."),
    ]
    result = rewriter.rewrite("Quelle est sa garantie ?", history)
    assert result.model_calls == 1 and result.output_tokens <= 20, result
    assert "thinkpad" in fold(result.standalone), (result.standalone, result.error)
