"""``memory-chains bench endpoint``: seconds per answer over the endpoint vs in-process.

Plays the demo's seed scenarios with memory (buffer memory, the follow-up rewriter, the
sample knowledge base with local e5 embeddings for both, so retrieval is identical) on two
chat models: the **anchor**, the embedded model in this process (``ChatLlamaCpp``), and the
OpenAI-compatible endpoint of the settings (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``,
``MEMORY_CHAINS_OPENAI_MODEL``). Scenarios alternate between the two (anchor first, then
endpoint first), so that a machine shared with other work slows both alike. Reported per
path: answers, wall-clock seconds per answer (rewrite, retrieval and answer), and the ratio
endpoint / anchor; then whether the two paths gave the same final answers. With ``--json``
the last line printed is one JSON object.

Example (a llama.cpp server on the same GGUF; see docs/providers.md)::

    .venv/bin/python scripts/llama_server.py --port 8080 --alias qwen &
    OPENAI_API_KEY=none OPENAI_BASE_URL=http://127.0.0.1:8080/v1 \\
    MEMORY_CHAINS_OPENAI_MODEL=qwen memory-chains bench endpoint
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add ``bench endpoint``."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "endpoint",
        help="seconds per answer: the OpenAI-compatible endpoint vs the in-process model",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--scenario",
        action="append",
        help="only this demo scenario (repeatable); default: all four",
    )
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    parser.set_defaults(run=run)


def _play(llm: Any, retriever: Any, questions: tuple[str, ...]) -> tuple[float, list[str]]:
    from memory_chains.memory import BufferMemory
    from memory_chains.rag import ConversationalRAG, build_chain
    from memory_chains.rewrite import QueryRewriter

    rag = ConversationalRAG(
        build_chain(retriever, llm=llm, memory=BufferMemory(), rewriter=QueryRewriter(llm))
    )
    start = time.perf_counter()
    answers = [rag.ask(question).answer for question in questions]
    return time.perf_counter() - start, answers


def run(args: argparse.Namespace) -> int:
    """Run the benchmark; 2 when no endpoint is configured."""
    from memory_chains.cli._demo import SCENARIOS
    from memory_chains.config import load_settings
    from memory_chains.knowledge import KnowledgeBase, sample_kb_path
    from memory_chains.providers import E5Embeddings, describe_providers, get_chat_model

    settings = load_settings()
    if not settings.use_openai:
        print("bench endpoint: set OPENAI_API_KEY and OPENAI_BASE_URL first", file=sys.stderr)
        return 2
    paths = {
        "in-process (anchor)": get_chat_model(dataclasses.replace(settings, openai_api_key="")),
        "endpoint": get_chat_model(settings),
    }
    print(f"[endpoint: {describe_providers(settings)}]", file=sys.stderr)
    with tempfile.TemporaryDirectory() as index_dir:
        kb = KnowledgeBase.from_folder(sample_kb_path(), E5Embeddings(), index_dir=Path(index_dir))
        retriever = kb.as_retriever(k=3)
        chosen = [s for s in SCENARIOS if not args.scenario or s.name in args.scenario]
        seconds = dict.fromkeys(paths, 0.0)
        answers: dict[str, list[str]] = {name: [] for name in paths}
        for i, scenario in enumerate(chosen):
            order = list(paths) if i % 2 == 0 else list(reversed(paths))
            for name in order:
                elapsed, said = _play(paths[name], retriever, scenario.questions)
                seconds[name] += elapsed
                answers[name] += said
                print(f"{scenario.name:8} {name:20} {elapsed / len(said):6.1f} s/answer")
    count = len(answers["endpoint"])
    per_answer = {name: seconds[name] / count for name in paths}
    ratio = per_answer["endpoint"] / per_answer["in-process (anchor)"]
    same = sum(a == b for a, b in zip(*answers.values(), strict=True))
    for name in paths:
        print(f"{name:20} {count} answers, {per_answer[name]:.1f} s/answer")
    print(f"endpoint / in-process: {ratio:.2f}x; identical answers: {same}/{count}")
    if args.json:
        report = {"answers": count, "s_per_answer": per_answer, "ratio": ratio, "same": same}
        print(json.dumps(report))
    return 0
