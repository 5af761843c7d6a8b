"""The summary fidelity evaluation: its matching rules, its loader and its report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_chains.cli import main
from memory_chains.errors import InvalidInputError
from memory_chains.evaluation.summary import (
    SummaryCase,
    SummaryFact,
    evaluate_summary,
    load_summary_cases,
    misattributed_numbers,
    states,
)
from memory_chains.memory import LLMSummarizer, SummaryCore, WindowCore
from memory_chains.testing import ScriptedChatModel, word_counter

CASE = SummaryCase(
    "laptops",
    "fr",
    (
        ("Et le Lenovo ?", "Le Lenovo est garanti 3 ans."),
        ("Et l'ASUS ?", "L'ASUS coûte 1 349 €."),
        ("Merci", "Avec plaisir"),
        ("Au revoir", "Au revoir"),
    ),
    (SummaryFact("Lenovo", "3", 1), SummaryFact("ASUS", "1 349", 2)),
)


def summary_memory(reply: str, max_turns: int = 2) -> SummaryCore:
    return SummaryCore(
        summarizer=LLMSummarizer(ScriptedChatModel(default=reply)),
        max_turns=max_turns,
        keep_last=1,
        background=False,
        token_counter=word_counter,
    )


def test_a_fact_needs_its_entity_and_its_value_together() -> None:
    fact = SummaryFact("ASUS", "1 349", 2)
    assert states("L'ASUS coûte 1349 €.", fact)  # digit groups are joined
    assert not states("L'ASUS coûte 1 399 €.", fact)
    assert not states("Le Lenovo coûte 1 349 €.", fact)
    assert states("Prénom : Inès", SummaryFact(None, "ines", 1))  # accents folded
    assert not states("Inèsa", SummaryFact(None, "Inès", 1))  # whole words only


def test_a_number_of_another_entity_is_misattributed_only_when_its_owner_is_absent() -> None:
    facts = [*CASE.facts, SummaryFact(None, "48", 3)]
    assert misattributed_numbers("L'ASUS est garanti 3 ans.", facts) == ["3"]
    assert misattributed_numbers("L'ASUS et le Lenovo : 3 ans.", facts) == []
    assert misattributed_numbers("Garantie de 3 ans.", facts) == []  # names nothing
    assert misattributed_numbers("L'ASUS arrive en 48 h.", facts) == []  # nobody's number


def test_report_counts_kept_facts_and_misattributed_items() -> None:
    invented = json.dumps({"add_facts": ["Le Lenovo est garanti 3 ans.", "L'ASUS coûte 1 349 €."]})
    good = evaluate_summary([CASE], lambda: summary_memory(invented))
    assert good["fact_recall"] == 1.0 and good["summary_recall"] == 1.0
    assert good["misattributed_items"] == 0 and good["compactions"] >= 1
    # no summary at all: the window keeps the last turn only
    window = evaluate_summary([CASE], lambda: WindowCore(k=1, token_counter=word_counter))
    assert window["fact_recall"] == 0.0 and window["summary_items"] == 0
    assert window["folded_facts"] == 2 and window["summary_recall"] == 0.0


def test_a_misattributed_item_the_support_check_lets_through_is_reported() -> None:
    # "3 ans" answers "Et sa garantie ?", a turn naming nothing, so the support check
    # cannot tell it was the Lenovo's: the evaluation, which knows, reports it
    case = SummaryCase(
        "pronoun",
        "fr",
        (
            ("Parle-moi de l'ASUS.", "L'ASUS coûte 1 349 €."),
            ("Et le Lenovo ?", "Il coûte 1 500 €."),
            ("Et sa garantie ?", "3 ans."),
            ("Merci", "Avec plaisir"),
        ),
        (SummaryFact("ASUS", "1 349", 1), SummaryFact("Lenovo", "3", 3)),
    )
    reply = json.dumps({"add_facts": ["L'ASUS coûte 1 349 €.", "L'ASUS est garanti 3 ans."]})
    report = evaluate_summary([case], lambda: summary_memory(reply, max_turns=3))
    # the other two are turn 2 kept verbatim for its name and number: "Et le Lenovo ?",
    # "Il coûte 1 500 €."
    assert report["misattributed_items"] == 1 and report["summary_items"] == 4
    assert report["per_case"][0]["misattributed"] == [
        {"item": "L'ASUS est garanti 3 ans.", "numbers": ["3"]}
    ]
    assert report["misattribution_rate"] == 0.25


def test_loader_reports_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    good = {"id": "a", "turns": [["q", "a"]], "facts": [{"entity": None, "value": "1", "turn": 1}]}
    path.write_text(json.dumps(good) + "\n\n" + json.dumps({**good, "facts": [{"turn": 1}]}))
    with pytest.raises(InvalidInputError, match=r"cases.jsonl:3"):
        load_summary_cases(path)
    path.write_text(json.dumps({**good, "facts": [{"entity": "x", "value": "1", "turn": 5}]}))
    with pytest.raises(InvalidInputError, match="outside the conversation"):
        load_summary_cases(path)


@pytest.mark.parametrize(("name", "n_cases", "n_facts"), [("dev", 4, 49), ("heldout", 3, 29)])
def test_packaged_sets_load_and_every_fact_is_stated_by_its_turn(
    name: str, n_cases: int, n_facts: int
) -> None:
    from memory_chains.cli._eval_common import packaged_set

    cases = load_summary_cases(packaged_set("summary", name))
    assert len(cases) == n_cases and sum(len(c.facts) for c in cases) == n_facts
    for case in cases:
        for fact in case.facts:
            human, ai = case.turns[fact.turn - 1]
            assert states(f"{human}\n{ai}", fact) or states(ai, SummaryFact(None, fact.value, 1))


def test_cli_without_model_prints_the_code_only_and_window_rows(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["eval", "summary", "--no-model", "--limit", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(report) == {"dataset", "max_turns", "keep_last", "summary_code_only", "window_2"}
    assert report["summary_code_only"]["fact_recall"] > report["window_2"]["fact_recall"]
    assert main(["eval", "summary", "--no-model", "--keep-last", "6"]) == 1
    assert "--keep-last" in capsys.readouterr().err
