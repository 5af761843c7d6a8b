"""The ``memory-chains eval entities`` command, with the rule extractor and fake models."""

from __future__ import annotations

import json

from memory_chains.cli import main
from memory_chains.testing import ScriptedChatModel

LINE = {
    "id": "t1",
    "turns": [
        ["user", "Je cherche le Dell XPS 15"],
        ["assistant", "Le Dell XPS 15 coûte 1599 €."],
        ["user", "Et sa garantie ?"],
        ["assistant", "2 ans."],
    ],
    "entities": [{"name": "Dell XPS 15", "type": "PRODUCT"}, {"name": "1599 €", "type": "MONEY"}],
}


def test_eval_entities_rules_json_last_line(tmp_path, capsys):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(LINE) + "\n")
    assert main(["eval", "entities", "--dataset", str(data), "--extractor", "rules", "--json"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    result = json.loads(last)
    assert result["types"] == ["MONEY", "PRODUCT"]  # configured from the gold types
    assert (result["precision"], result["recall"], result["f1"]) == (1.0, 1.0, 1.0)
    assert result["type_accuracy"] == 1.0 and result["llm_calls_per_turn"] == 0.0
    assert result["turns"] == 2 and result["messages"] == 4


def test_eval_entities_explicit_types_and_bad_input(tmp_path, capsys):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(LINE) + "\n")
    args = ["eval", "entities", "--dataset", str(data), "--extractor", "rules", "--json"]
    assert main([*args, "--types", "product"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["types"] == ["PRODUCT"] and result["recall"] == 0.5
    assert main([*args, "--types", "bad type"]) == 1
    assert main(["eval", "entities", "--dataset", str(tmp_path / "missing.jsonl")]) == 1
    assert "cannot read dataset" in capsys.readouterr().err


def test_compare_langchain_counts_its_calls(tmp_path):
    from memory_chains.cli._eval_entities import _run_langchain
    from memory_chains.evaluation.entities import load_dataset

    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(LINE) + "\n")
    model = ScriptedChatModel(default="Dell XPS 15")
    out = _run_langchain(load_dataset(data), model)
    # ConversationEntityMemory: one extraction call per load, plus one summary per entity.
    assert out["llm_calls_per_turn"] >= 2.0
    assert out["tp"] == 1 and out["fn"] == 1


def test_eval_entities_packaged_legacy_heldout_set(capsys):
    """The older held-out set: 16 dialogues, French and English, four domains."""
    args = ["eval", "entities", "--set", "legacy-heldout", "--extractor", "rules", "--json"]
    assert main([*args, "--spacy", "off"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["dataset"].endswith("entities/legacy_heldout.jsonl")
    assert result["dialogues"] == 16 and result["llm_calls_per_turn"] == 0.0
    assert {"PERSON", "PRODUCT", "LOCATION", "TICKET_ID", "SKILL"} <= set(result["types"])


def test_relations_and_aliases_are_scored(tmp_path, capsys):
    line = {
        "id": "r1",
        "turns": [
            ["user", "J'habite à Quistrel, je compare le Velto Pro et le Velto Max."],
            ["assistant", "Ici Albane Vireau, conseillère chez Lotrix. Le Velto Pro est à 12 €."],
        ],
        "entities": [
            {"name": "Quistrel", "type": "LOCATION"},
            {"name": "Velto Pro", "type": "PRODUCT", "aliases": ["le Velto Pro"]},
            {"name": "Velto Max", "type": "PRODUCT"},
            {"name": "Albane Vireau", "type": "PERSON"},
            {"name": "Lotrix", "type": "ORGANIZATION"},
            {"name": "12 €", "type": "MONEY"},
        ],
        "relations": [
            ["USER", "LOCATED_IN", "Quistrel"],
            ["Velto Max", "COMPARES_TO", "Velto Pro"],  # either way round
            ["Albane Vireau", "WORKS_AT", "Lotrix"],
            ["Velto Pro", "MADE_BY", "Lotrix"],
        ],
    }
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(line, ensure_ascii=False) + "\n", encoding="utf-8")
    args = ["eval", "entities", "--dataset", str(data), "--extractor", "rules", "--json"]
    assert main([*args, "--verbose"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out.strip().splitlines()[-1])
    assert result["f1"] == 1.0 and result["alias_recall"] == 1.0
    assert (result["rel_tp"], result["rel_fn"]) == (3, 1)
    assert result["relation_recall"] == 0.75 and result["relation_precision"] == 1.0
    assert "relation missed: Velto Pro MADE_BY Lotrix" in captured.err


def test_a_second_entity_for_an_alias_is_unresolved_and_spurious():
    from memory_chains.entities._types import Entity
    from memory_chains.evaluation.entities import GoldEntity, score_entities

    gold = [GoldEntity("Gaëlle Le Dantec", "PERSON", ("Mme Le Dantec",))]
    one = score_entities(gold, [Entity("e1", "Gaëlle Le Dantec", "PERSON", ("Mme Le Dantec",))])
    two = score_entities(
        gold, [Entity("e1", "Gaëlle Le Dantec", "PERSON"), Entity("e2", "Mme Le Dantec", "PERSON")]
    )
    assert (one.aliases, one.aliases_resolved, one.fp) == (1, 1, 0)
    assert (two.aliases, two.aliases_resolved, two.fp) == (1, 0, 1)


def test_ids_filter_and_the_test_split_reminder(capsys):
    # The test split is never scored here: the filter leaves nothing to run.
    assert main(["eval", "entities", "--set", "test", "--ids", "no-such-id"]) == 1
    assert "report it once" in capsys.readouterr().err
    args = ["eval", "entities", "--set", "dev", "--extractor", "rules", "--json"]
    assert main([*args, "--ids", "fr-bank-02,en-bank-03"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["dialogues"] == 2
