"""The rewrite evaluation harness and its CLI, with fakes (no real model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_chains.errors import InvalidInputError
from memory_chains.evaluation.references import cast_rows, evaluate_canard, evaluate_references
from memory_chains.evaluation.rewrite import (
    DEV_CORPUS,
    DEV_DATASET,
    FAR_DATASET,
    FOLLOWUP_CORPUS,
    FOLLOWUP_SETS,
    appended,
    evaluate_rewrites,
    read_jsonl,
    split_of,
)
from memory_chains.rewrite import QueryRewriter, analyse
from memory_chains.testing import HashEmbeddings, ScriptedChatModel


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[Path, Path]:
    corpus = write_jsonl(
        tmp_path / "corpus.jsonl",
        [
            {"id": "dell", "text": "garantie Dell XPS deux ans"},
            {"id": "lenovo", "text": "garantie Lenovo ThinkPad trois ans"},
        ],
    )
    dataset = write_jsonl(
        tmp_path / "dataset.jsonl",
        [
            {
                "id": "q1",
                "history": [["user", "Parlons du Lenovo ThinkPad"], ["assistant", "Volontiers."]],
                "question": "Quelle est sa garantie ?",
                "gold_doc": "lenovo",
                "must_mention": ["Lenovo"],
                "rewrite": "Quelle est la garantie du Lenovo ThinkPad ?",
            },
            {
                "id": "q2",
                "history": [["user", "Parlons du Lenovo ThinkPad"], ["assistant", "Volontiers."]],
                "question": "Quelle est la garantie du Dell XPS ?",
                "gold_doc": "dell",
                "must_mention": ["Dell"],
            },
        ],
    )
    return corpus, dataset


def test_evaluate_rewrites_metrics(tiny: tuple[Path, Path]) -> None:
    corpus, dataset = tiny
    llm = ScriptedChatModel(
        replies=[json.dumps({"question": "Quelle est la garantie du Lenovo ThinkPad ?"})]
    )
    report = evaluate_rewrites(corpus, dataset, QueryRewriter(llm), HashEmbeddings(), k=1)
    assert report["n"] == 2
    assert report["hit@1"] == 1.0 and report["mrr"] == 1.0
    assert report["mention_rate"] == 1.0
    assert report["model_calls_per_item"] == 0.5  # the standalone question made no call
    assert report["gold_hit@1"] == 1.0 and report["rouge1_recall"] == 1.0
    assert report["rouge1_f1"] == 1.0 and report["appended_rate"] == 0.0
    assert report["by_language"]["fr"]["n"] == 2
    assert [i["method"] for i in report["items"]] == ["model", "unchanged"]
    assert {"hit@1", "raw_hit@1", "median_secs", "p95_secs", "secs_per_item"} <= set(report)


def test_a_comparison_counts_every_gold_passage(tmp_path: Path, tiny: tuple[Path, Path]) -> None:
    corpus, _ = tiny
    dataset = write_jsonl(
        tmp_path / "cmp.jsonl",
        [
            {
                "id": "c1",
                "family": "comparison",
                "history": [["user", "La garantie du Dell XPS ?"], ["assistant", "Deux ans."]],
                "question": "Et comparé au Lenovo ?",
                "gold_docs": ["dell", "lenovo"],
                "rewrite": "Comparez la garantie du Dell XPS et du Lenovo ThinkPad.",
            }
        ],
    )
    written = "Quelle est la garantie du Dell XPS comparée à celle du Lenovo ?"
    llm = ScriptedChatModel(replies=[json.dumps({"question": written})])
    report = evaluate_rewrites(corpus, dataset, QueryRewriter(llm), HashEmbeddings(), k=2)
    assert report["all_gold@2"] == 1.0 and report["by_family"]["comparison"]["n"] == 1
    assert len(report["items"][0]["queries"]) == 3  # the rewrite, then one per thing


def test_unknown_gold_doc_is_rejected(tmp_path: Path, tiny: tuple[Path, Path]) -> None:
    corpus, _ = tiny
    bad = write_jsonl(
        tmp_path / "bad.jsonl",
        [{"id": "x", "history": [], "question": "Quoi ?", "gold_doc": "nope"}],
    )
    with pytest.raises(InvalidInputError, match="unknown gold_doc"):
        evaluate_rewrites(corpus, bad, QueryRewriter(use_model=False), HashEmbeddings())


def test_malformed_files_are_typed_errors(tmp_path: Path) -> None:
    (tmp_path / "broken.jsonl").write_text('{"id": 1}\nnot json\n', "utf-8")
    with pytest.raises(InvalidInputError, match=":2: not JSON"):
        read_jsonl(tmp_path / "broken.jsonl")
    with pytest.raises(InvalidInputError, match="no such file"):
        read_jsonl(tmp_path / "missing.jsonl")


def test_shipped_legacy_set_is_consistent() -> None:
    corpus_ids = {row["id"] for row in read_jsonl(DEV_CORPUS)}
    rows = read_jsonl(DEV_DATASET)
    assert len(rows) >= 40
    assert all(row["gold_doc"] in corpus_ids for row in rows)
    standalone = [row for row in rows if analyse(row["question"]).standalone]
    assert all(row["rewrite"] == row["question"] for row in standalone)


def test_the_follow_up_collection_is_split_by_the_hash_of_its_ids() -> None:
    corpus_ids = {row["id"] for row in read_jsonl(FOLLOWUP_CORPUS)}
    rows = []
    for name, path in FOLLOWUP_SETS.items():
        split = read_jsonl(path)
        assert all(split_of(row["id"]) == name for row in split), name
        rows.extend(split)
    assert len({row["id"] for row in rows}) == len(rows) >= 300
    assert sum(row["lang"] == "fr" for row in rows) >= 200
    assert sum(row["lang"] == "en" for row in rows) >= 100
    assert len({row["domain"] for row in rows}) >= 8
    for row in rows:
        assert row["gold_docs"] and set(row["gold_docs"]) <= corpus_ids, row["id"]
        assert all(m.lower() in row["rewrite"].lower() for m in row["must_mention"]), row["id"]
        assert appended(row["rewrite"], row["question"], row["history"]) is None, row["id"]


def test_few_shot_examples_do_not_leak_into_any_evaluation_set() -> None:
    from memory_chains.rewrite._prompt import example_texts

    examples = {" ".join(text.split()).lower() for text in example_texts()}
    paths = [DEV_DATASET, FAR_DATASET, *FOLLOWUP_SETS.values()]
    for row in (row for path in paths for row in read_jsonl(path)):
        texts = [row["question"], row.get("rewrite", ""), *(t for _, t in row["history"])]
        assert not examples & {" ".join(t.split()).lower() for t in texts}, row["id"]


def test_evaluate_canard_on_a_small_file(tmp_path: Path) -> None:
    data = [
        {
            "History": ["Frank Zappa", "Bands"],
            "Question": "Who was he?",
            "Rewrite": "Who was Frank Zappa?",
        },
        {
            "History": [
                "Frank Zappa",
                "Bands",
                "What band did he form?",
                "The Mothers of Invention",
            ],
            "Question": "When did they disband?",
            "Rewrite": "When did the Mothers of Invention disband?",
        },
    ]
    path = tmp_path / "canard.json"
    path.write_text(json.dumps(data), "utf-8")
    llm = ScriptedChatModel(
        replies=[json.dumps({"question": "When did the Mothers of Invention disband?"})]
    )
    report = evaluate_canard(path, QueryRewriter(llm))
    assert report["n"] == 1  # the first-turn question is skipped
    assert report["rouge1_recall"] == 1.0 and report["bleu4"] == pytest.approx(100.0)
    assert report["rouge1_f1"] == 1.0
    assert report["unchanged_rouge1_recall"] == pytest.approx(3 / 7, abs=1e-4)
    with pytest.raises(InvalidInputError):
        evaluate_canard(path, QueryRewriter(llm), limit=0)


def test_evaluate_cast_rows_charge_for_appended_words(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "cast.jsonl",
        [
            {
                "id": "t_2",
                "history": [["user", "What is throat cancer?"]],
                "question": "Is it treatable?",
                "rewrite": "Is throat cancer treatable?",
            }
        ],
    )
    rows = cast_rows(path)
    pasted = "Is it treatable? (What is throat cancer?)"
    report = evaluate_references(rows, QueryRewriter(ScriptedChatModel(replies=[pasted])))
    # The verifier cuts the parenthesis off: nothing appended reaches the report.
    assert report["appended_rate"] == 0.0
    assert report["rouge1_f1"] == pytest.approx(report["unchanged_rouge1_f1"])


def test_cli_json_last_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import memory_chains.providers as providers
    from memory_chains.cli._eval_rewrite import register

    monkeypatch.setattr(providers, "get_embeddings", lambda settings=None: HashEmbeddings())
    import argparse

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["rewrite", "--no-model", "--json", "--set", "legacy"])
    assert args.run(args) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    report = json.loads(last)
    for key in ("n", "hit@1", "hit@3", "mrr", "mention_rate", "raw_hit@1", "median_secs"):
        assert key in report
    assert report["model_calls_per_item"] == 0.0
