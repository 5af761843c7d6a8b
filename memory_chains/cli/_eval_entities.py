"""``memory-chains eval entities``: names, types, aliases and relations of entity memory.

Runs :class:`~memory_chains.entities.EntityTracker` with the LLM extractor (one model call
per turn, the default chat model) or the rule extractor (no model call) over a JSONL
dataset and prints precision, recall, F1, type accuracy, alias resolution and relation
precision / recall / F1; with ``--json`` the last line is one JSON object.
``--compare-langchain`` also runs LangChain's ``ConversationEntityMemory`` with the same
model on the same dialogues.

Packaged sets (``--set``): ``dev`` and ``test`` (64 dialogues written by annotators who saw
neither the code nor the older sets, split by a hash of each id when written: tune on
``dev``, report ``test`` once), and the older ``legacy`` / ``legacy-heldout`` sets.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from memory_chains.evaluation import DATA_DIR

SETS = {
    "dev": "dev.jsonl",
    "test": "test.jsonl",
    "legacy": "legacy_dev.jsonl",
    "legacy-heldout": "legacy_heldout.jsonl",
    "heldout": "legacy_heldout.jsonl",  # the older name of legacy-heldout
}
ENTITY_DATA = DATA_DIR / "entities"


def packaged_entity_set(name: str) -> Path:
    """The packaged entity set ``name`` (a key of :data:`SETS`).

    Example:
        >>> packaged_entity_set("test").name
        'test.jsonl'
    """
    return ENTITY_DATA / SETS[name]


def register(sub: Any) -> None:
    """Add ``eval entities`` to the ``eval`` sub-parser."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "entities", help="evaluate entity memory (names, types, aliases, relations, calls)"
    )
    parser.add_argument("--dataset", type=Path, help="a JSONL file (default: see --set)")
    parser.add_argument(
        "--set",
        choices=tuple(SETS),
        default="dev",
        help="a packaged set: dev (default; tune on it), test (report it once), legacy, "
        "legacy-heldout (the older sets; heldout is its old name)",
    )
    parser.add_argument(
        "--types",
        default="",
        help="comma-separated entity types (default: the set of gold types of the dataset)",
    )
    parser.add_argument("--extractor", choices=("llm", "rules"), default="llm")
    parser.add_argument(
        "--spacy",
        choices=("auto", "on", "off"),
        default="off",
        help="the rules' spaCy French pipeline vote (the nlp extra): off (default), on, or "
        "auto (when installed)",
    )
    parser.add_argument(
        "--name-typer",
        choices=("on", "off"),
        default="on",
        help="type names with no sentence evidence by their nearest example names "
        "(embeddings): on (default), or off (a guess from the name's shape)",
    )
    parser.add_argument("--limit", type=int, default=0, help="only the first N dialogues")
    parser.add_argument(
        "--ids", default="", help="only dialogues whose id contains one of these (comma list)"
    )
    parser.add_argument("--verbose", action="store_true", help="print misses per dialogue")
    parser.add_argument(
        "--compare-langchain",
        action="store_true",
        help="also run LangChain's ConversationEntityMemory with the same model",
    )
    parser.add_argument("--json", action="store_true", help="last line: one JSON object")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the evaluation; returns the process exit code."""
    from memory_chains.entities import (
        EntityTracker,
        LLMEntityExtractor,
        RuleEntityExtractor,
        resolve_types,
        shared_name_typer,
    )
    from memory_chains.errors import InvalidInputError
    from memory_chains.evaluation.entities import evaluate, load_dataset

    path: Path = args.dataset or packaged_entity_set(args.set)
    if args.dataset is None and args.set == "test":
        print("test split: report it once; tune on --set dev", file=sys.stderr)
    dataset = load_dataset(path)
    if args.limit < 0:
        raise InvalidInputError("--limit must be >= 0")
    wanted = [w.strip() for w in args.ids.split(",") if w.strip()]
    if wanted:
        dataset = [d for d in dataset if any(w in d.id for w in wanted)]
    if args.limit:
        dataset = dataset[: args.limit]
    if not dataset:
        raise InvalidInputError("no dialogue left after --ids / --limit")
    if args.types.strip():
        types = resolve_types([t for t in args.types.split(",") if t.strip()])
    else:
        types = resolve_types(sorted({g.type for d in dataset for g in d.entities}))

    use_spacy = {"auto": None, "on": True, "off": False}[args.spacy]
    typer = shared_name_typer() if args.name_typer == "on" else None
    rules = RuleEntityExtractor(use_spacy=use_spacy, name_typer=typer)
    model = None
    if args.extractor == "llm" or args.compare_langchain:
        from memory_chains.providers import get_chat_model

        model = get_chat_model(max_tokens=256)
    extractor: Any = (
        rules if args.extractor == "rules" else LLMEntityExtractor(model, patterns=rules)
    )

    started = [time.perf_counter()]

    def make_tracker(d: Any) -> Any:
        started[0] = time.perf_counter()
        return EntityTracker(extractor, types=types)

    def on_dialogue(d: Any, s: Any, tracker: Any) -> None:
        # One line per dialogue, enough to add up a run that had to be stopped.
        line = (
            f"{d.id:28s} tp={s.tp:2d} fp={s.fp:2d} fn={s.fn:2d} type_ok={s.type_ok:2d} "
            f"rel_tp={s.rel_tp} rel_fp={s.rel_fp} rel_fn={s.rel_fn} "
            f"calls={tracker.model_calls} secs={time.perf_counter() - started[0]:.1f}"
        )
        print(line, file=sys.stderr)
        if args.verbose:
            for label, items in (
                ("missed", s.missed),
                ("spurious", s.spurious),
                ("mistyped", s.mistyped),
                ("relation missed", s.rel_missed),
                ("relation spurious", s.rel_spurious),
            ):
                if items:
                    print(f"    {label}: {'; '.join(items)}", file=sys.stderr)

    report = evaluate(dataset, make_tracker, on_dialogue=on_dialogue)
    result: dict[str, Any] = {
        "dataset": str(path),
        "extractor": args.extractor,
        "spacy": rules.uses_spacy,
        "name_typer": typer is not None,
        "types": list(types),
        **report.to_dict(),
    }
    if args.compare_langchain:
        result["langchain"] = _run_langchain(dataset, model)
    _print(result)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    return 0


def _print(result: dict[str, Any]) -> None:
    print(
        f"extractor={result['extractor']} spacy={result['spacy']} "
        f"dialogues={result['dialogues']} turns={result['turns']}\n"
        f"precision={result['precision']:.3f} recall={result['recall']:.3f} "
        f"f1={result['f1']:.3f} type_accuracy={result['type_accuracy']:.3f}"
        + (f" alias_recall={result['alias_recall']:.3f}" if "alias_recall" in result else "")
    )
    if "relation_f1" in result:
        print(
            f"relations: precision={result['relation_precision']:.3f} "
            f"recall={result['relation_recall']:.3f} f1={result['relation_f1']:.3f}"
        )
    print(
        f"llm_calls_per_turn={result['llm_calls_per_turn']:.2f} "
        f"secs_per_turn={result['secs_per_turn']:.2f} "
        f"extraction_failures={result['extraction_failures']}"
    )
    lc = result.get("langchain")
    if lc:
        print(
            f"langchain ConversationEntityMemory: precision={lc['precision']:.3f} "
            f"recall={lc['recall']:.3f} f1={lc['f1']:.3f} "
            f"llm_calls_per_turn={lc['llm_calls_per_turn']:.2f} "
            f"secs_per_turn={lc['secs_per_turn']:.2f}"
        )


def _run_langchain(dataset: Any, model: Any) -> dict[str, Any]:
    """LangChain's ConversationEntityMemory on the same dialogues (names only, no types)."""
    from langchain_classic.memory import ConversationEntityMemory
    from langchain_core.callbacks import BaseCallbackHandler

    from memory_chains.entities import Entity
    from memory_chains.evaluation.entities import EvalReport, Score, exchanges, score_entities

    class _Count(BaseCallbackHandler):
        calls = 0

        def on_chat_model_start(self, *args: Any, **kwargs: Any) -> None:
            _Count.calls += 1

        def on_llm_start(self, *args: Any, **kwargs: Any) -> None:
            _Count.calls += 1

    counted = model.model_copy(update={"callbacks": [_Count()]})
    total, n_ex, n_msg, seconds = Score(), 0, 0, 0.0
    for d in dataset:
        memory = ConversationEntityMemory(llm=counted)
        for human, ai in exchanges(d.turns):
            start = time.perf_counter()
            memory.load_memory_variables({"input": human})
            memory.save_context({"input": human}, {"output": ai})
            seconds += time.perf_counter() - start
            n_ex += 1
        n_msg += len(d.turns)
        names = list(getattr(memory.entity_store, "store", {}).keys())
        predicted = [Entity(id=f"lc{i}", name=n, type="") for i, n in enumerate(names)]
        total += score_entities(d.entities, predicted)
    report = EvalReport(total, len(dataset), n_ex, n_msg, _Count.calls, 0, seconds)
    out = report.to_dict()
    out.pop("type_accuracy", None)  # LangChain's entity memory has no types
    return out
