"""LoCoMo loader, recall@k and the ``eval locomo`` command, on a tiny hand-made file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memory_chains.cli import main
from memory_chains.errors import InvalidInputError
from memory_chains.evaluation.locomo import (
    evaluate_locomo,
    load_locomo,
    recall_at_k,
    select_conversations,
)
from memory_chains.recall import TurnIndex
from memory_chains.testing import HashEmbeddings


def _sample(sample_id: str) -> dict[str, Any]:
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy named Luna."},
                {
                    "speaker": "Bob",
                    "dia_id": "D1:2",
                    "text": "Lovely! I bought a red kayak.",
                    "blip_caption": "a photo of a red kayak on a lake",
                },
            ],
            "session_2_date_time": "10:00 am on 3 June, 2023",
            "session_2": [
                {"speaker": "Ann", "dia_id": "D2:1", "text": "Luna passed her training."},
                {"speaker": "Bob", "dia_id": "D2:2", "text": "I paddled my kayak at Lake Tahoe."},
            ],
        },
        "qa": [
            {
                "question": "What is the name of Ann's puppy?",
                "answer": "Luna",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {
                "question": "Where did Bob use the kayak he bought?",
                "answer": "Lake Tahoe",
                "evidence": ["D1:2; D2:2"],
                "category": 1,
            },
            {
                "question": "When did Luna pass her training?",
                "answer": "June 2023",
                "evidence": ["D:2:1"],
                "category": 2,
            },
            {
                "question": "What does Bob hate?",
                "adversarial_answer": "x",
                "evidence": ["D1:2"],
                "category": 5,
            },
            {"question": "No evidence?", "answer": "-", "evidence": [], "category": 4},
        ],
    }


@pytest.fixture
def locomo_file(tmp_path: Path) -> Path:
    path = tmp_path / "locomo10.json"
    path.write_text(json.dumps([_sample("conv-a"), _sample("conv-b")]), encoding="utf-8")
    return path


def test_loader_normalises_evidence_dates_and_captions(locomo_file: Path) -> None:
    conv = load_locomo(locomo_file)[0]
    assert conv.speakers == ("Ann", "Bob")
    assert [s.number for s in conv.sessions] == [1, 2]
    assert conv.sessions[1].when is not None and conv.sessions[1].when.month == 6
    assert (
        conv.sessions[0]
        .turns[1]
        .text.endswith("[shares a photo: a photo of a red kayak on a lake]")
    )
    assert conv.questions[1].evidence == ("D1:2", "D2:2")
    assert conv.questions[2].evidence == ("D2:1",)
    assert conv.n_turns == 4


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "does not exist"),
        ("{not json", "not JSON"),
        ('{"a": 1}', "non-empty list"),
        ('[{"conversation": {}, "qa": []}]', "no session_N"),
        ('[{"conversation": {"session_1": [{"text": "hi", "dia_id": "?"}]}, "qa": []}]', "D1:3"),
    ],
)
def test_loader_errors_say_what_file_is_expected(
    tmp_path: Path, content: str | None, message: str
) -> None:
    path = tmp_path / "x.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(InvalidInputError, match=message):
        load_locomo(path)


def test_recall_at_k_and_conversation_selection() -> None:
    assert recall_at_k(["a", "b", "c"], ["c", "d"], k=3) == 0.5
    assert recall_at_k(["a", "b", "c"], ["c"], k=2) == 0.0
    with pytest.raises(InvalidInputError):
        recall_at_k(["a"], [])
    assert select_conversations("2-3,0", 5) == [0, 2, 3]
    for bad in ("x", "9", "3-1"):
        with pytest.raises(InvalidInputError):
            select_conversations(bad, 5)


def test_evaluation_scores_categories_1_to_4_with_evidence_only(locomo_file: Path) -> None:
    conversations = load_locomo(locomo_file)
    report = evaluate_locomo(
        conversations, lambda: TurnIndex(HashEmbeddings()), k=1, max_tokens=60, indices=[1]
    )
    assert report["n"] == 3
    assert (report["n_single_hop"], report["n_multi_hop"], report["n_temporal"]) == (1, 1, 1)
    assert report["recall@1_single_hop"] == 1.0
    assert report["recall@1_multi_hop"] == 0.5  # two evidence turns, one slot
    assert report["context_recall"] == 1.0  # the whole conversation fits in 60 tokens
    assert 0 < report["mean_context_tokens"] <= 60
    assert report["conversations"][0]["sample_id"] == "conv-b"
    tight = evaluate_locomo(conversations, TurnIndex, k=1, max_tokens=12, indices=[0])
    assert tight["max_context_tokens"] <= 12 and tight["context_recall"] < 1.0


def test_cli_json_last_line(locomo_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "eval",
            "locomo",
            "--dataset",
            str(locomo_file),
            "--lexical-only",
            "--json",
            "--conversations",
            "0",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out.strip().splitlines()
    report = json.loads(out[-1])
    for key in (
        "n",
        "recall@10",
        "recall@10_multi_hop",
        "recall@10_temporal",
        "recall@10_single_hop",
        "mean_context_tokens",
    ):
        assert key in report
    assert report["n"] == 3 and report["recall@10"] == 1.0
    assert any(line.startswith("BM25 (reference)") for line in out)


def test_cli_refuses_a_missing_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "locomo", "--dataset", str(tmp_path / "nope.json"), "--lexical-only"])
    assert code != 0
    assert "pass --dataset PATH/TO/locomo10.json" in capsys.readouterr().err


def test_cli_requires_the_dataset_whatever_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "work").mkdir()
    locomo = tmp_path / "shared" / "datasets" / "locomo"
    locomo.mkdir(parents=True)
    (locomo / "locomo10.json").write_text(json.dumps([]), encoding="utf-8")
    monkeypatch.chdir(tmp_path / "work")  # a file at ../shared/… is no default
    with pytest.raises(SystemExit) as exc:
        main(["eval", "locomo", "--lexical-only"])
    assert exc.value.code == 2
    assert "the following arguments are required: --dataset" in capsys.readouterr().err


def test_cli_help_says_no_chat_model_is_ever_called(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["eval", "locomo", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--dataset PATH" in help_text
    assert (
        "--no-model accepted for compatibility, changes nothing: this evaluation never "
        "calls a chat model"
    ) in help_text
