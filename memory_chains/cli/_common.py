"""Pieces shared by the interactive commands: settings, knowledge base, assistant."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

from memory_chains.config import Settings

__all__ = ["add_model_options", "answer_aloud", "open_knowledge_base", "print_answer_footer"]


def add_model_options(parser: Any) -> None:
    """Options shared by commands that run a knowledge-base assistant."""
    parser.add_argument("--k", type=int, default=3, help="documents retrieved per question")
    parser.add_argument(
        "--no-stream", action="store_true", help="print each answer at once instead of streaming"
    )


def index_dir_for(folder: Path, settings: Settings) -> Path:
    """Where the index of ``folder`` is kept: under the data directory, one per folder."""
    key = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:16]
    return settings.home / "indexes" / key


def open_knowledge_base(folder: Path, settings: Settings, embeddings: Any) -> Any:
    """Index ``folder`` (or reuse its unchanged index) and say which on stderr."""
    from memory_chains.knowledge import KnowledgeBase

    kb = KnowledgeBase.from_folder(
        folder,
        embeddings,
        index_dir=index_dir_for(folder, settings),
        progress=sys.stderr.isatty(),
    )
    state = "indexed" if getattr(kb, "rebuilt", True) else "reused the index of"
    print(f"[{state} {folder} — {len(kb)} chunks]", file=sys.stderr)
    return kb


def print_answer_footer(answer: Any) -> None:
    """Print the rewritten question and the sources under an answer."""
    if answer.was_rewritten:
        print(f"   ↳ question réécrite : {answer.rewritten}")
    names = ", ".join(answer.source_names()) or "aucune"
    print(f"   ↳ sources : {names}")


def answer_aloud(rag: Any, question: str, stream: bool) -> Any:
    """Ask ``rag``, printing the answer (token by token when ``stream``), then its footer."""
    answer = None
    if stream:
        for item in rag.stream(question):
            if isinstance(item, str):
                print(item, end="", flush=True)
            else:
                answer = item
        print()
    else:
        answer = rag.ask(question)
        print(answer.answer)
    print_answer_footer(answer)
    return answer
