"""ROUGE-1 recall, corpus BLEU-4 and folding, on hand-computed cases."""

from __future__ import annotations

import math

import pytest

from memory_chains.evaluation.metrics import bleu4, fold, rouge1_recall, tokens


def test_tokens_lowercase_and_strip_punctuation() -> None:
    assert tokens("Et la Carte-graphique ?!") == ["et", "la", "carte", "graphique"]


def test_rouge1_recall_clips_repeated_words() -> None:
    # reference: the(2) cat(1) sat(1) -> candidate has "the" x3, "cat" x1: 3 of 4 matched.
    assert rouge1_recall("the the the cat", "the cat sat the") == pytest.approx(0.75)


def test_rouge1_recall_ignores_case_and_punctuation() -> None:
    assert rouge1_recall("WHEN did Zappa disband", "when did zappa disband?") == 1.0


def test_rouge1_recall_empty_reference_is_zero() -> None:
    assert rouge1_recall("anything", "?!") == 0.0


def test_bleu4_identical_is_100() -> None:
    assert bleu4(["a b c d e"], ["a b c d e"]) == pytest.approx(100.0)


def test_bleu4_hand_computed_with_brevity_penalty() -> None:
    # candidate "a b c d" vs reference "a b c d e f": precisions 1,1,1,1; c=4, r=6.
    assert bleu4(["a b c d"], ["a b c d e f"]) == pytest.approx(100 * math.exp(1 - 6 / 4))


def test_bleu4_is_corpus_level_not_average() -> None:
    # Pair 1 has no 4-gram match on its own, but corpus counts are summed first.
    cands = ["a b c d", "x y z"]
    refs = ["a b c d", "x y w"]
    # 1-grams 6/7, 2-grams 4/5, 3-grams 2/3, 4-grams 1/1; lengths c=7, r=7.
    expected = 100 * math.exp((math.log(6 / 7) + math.log(4 / 5) + math.log(2 / 3)) / 4)
    assert bleu4(cands, refs) == pytest.approx(expected)


def test_bleu4_no_four_gram_match_is_zero() -> None:
    assert bleu4(["a b c"], ["a b c"]) == 0.0


def test_bleu4_rejects_unequal_lengths() -> None:
    with pytest.raises(ValueError, match="one reference per candidate"):
        bleu4(["a"], [])


def test_fold_removes_accents_and_case() -> None:
    assert fold("Édimbourg  SÉVILLE") == "edimbourg seville"
    assert fold("électronique") in fold("Produits ÉLECTRONIQUES")
