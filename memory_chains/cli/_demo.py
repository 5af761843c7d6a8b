"""``memory-chains demo``: the seed scenarios, with memory and without, side by side.

Each scenario is a short French dialogue whose follow-up only makes sense with the previous
turns ("Et pour le samedi ?"). It is played twice over the sample knowledge base: once by an
assistant without memory, once by an assistant with a buffer memory and the follow-up
rewriter; the answers stream, and the rewritten question and the sources are shown.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from typing import Any

__all__ = ["SCENARIOS", "Scenario", "register"]


@dataclass(frozen=True)
class Scenario:
    """A demo dialogue: a name and the user's questions, in order."""

    name: str
    title: str
    questions: tuple[str, ...]


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "retours",
        "Politique de retour, puis les produits électroniques",
        ("Quelle est votre politique de retour ?", "Et pour les produits électroniques ?"),
    ),
    Scenario(
        "pilates",
        "Horaires du Pilates, puis le samedi",
        ("Quels sont les horaires du cours de Pilates ?", "Et pour le samedi ?"),
    ),
    Scenario(
        "dell",
        "Dell XPS 15, sa garantie, puis le Lenovo",
        (
            "Je cherche le Dell XPS 15, vous l'avez ?",
            "Quelle est sa garantie ?",
            "Et compare à celui de Lenovo ?",
        ),
    ),
    Scenario(
        "gamer",
        "PC portable gamer, puis la carte graphique",
        ("Parle-moi de l'ASUS ROG Strix G15.", "Et la carte graphique ?"),
    ),
)


def register(sub: Any) -> None:
    """Add ``demo`` to the parser."""
    from memory_chains.cli._common import add_model_options

    parser: argparse.ArgumentParser = sub.add_parser(
        "demo",
        help="play the seed scenarios with and without memory",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--scenario",
        choices=[s.name for s in SCENARIOS],
        action="append",
        help="play only this scenario (repeatable); default: all",
    )
    parser.add_argument("--memory-only", action="store_true", help="skip the runs without memory")
    add_model_options(parser)
    parser.set_defaults(run=run)


def _play(rag: Any, questions: tuple[str, ...], stream: bool) -> list[Any]:
    from memory_chains.cli._common import answer_aloud

    answers = []
    for question in questions:
        print(f"\n👤 {question}")
        print("🤖 ", end="", flush=True)
        answers.append(answer_aloud(rag, question, stream))
    return answers


def run(args: argparse.Namespace) -> int:
    """Play the chosen scenarios."""
    from memory_chains.cli._common import open_knowledge_base
    from memory_chains.config import load_settings
    from memory_chains.knowledge import sample_kb_path
    from memory_chains.memory import BufferMemory
    from memory_chains.providers import describe_providers, get_chat_model, get_embeddings
    from memory_chains.rag import ConversationalRAG, build_chain
    from memory_chains.rewrite import QueryRewriter

    settings = load_settings()
    print(f"[{describe_providers(settings)}]", file=sys.stderr)
    started = time.perf_counter()
    llm = get_chat_model(settings)
    kb = open_knowledge_base(sample_kb_path(), settings, get_embeddings(settings))
    retriever = kb.as_retriever(k=args.k)
    rewriter = QueryRewriter(llm)
    if rewriter.warm_in_background() is not None:
        print("[le modèle se charge en arrière-plan]", file=sys.stderr)
    chosen = [s for s in SCENARIOS if not args.scenario or s.name in args.scenario]
    summary = []
    for scenario in chosen:
        print(f"\n{'=' * 72}\n{scenario.title}\n{'=' * 72}")
        runs: list[tuple[str, Any]] = [("avec mémoire", BufferMemory())]
        if not args.memory_only:
            runs.insert(0, ("sans mémoire", None))
        for label, memory in runs:
            print(f"\n--- {label} ---")
            rag = ConversationalRAG(
                build_chain(retriever, llm=llm, memory=memory, rewriter=rewriter)
            )
            answers = _play(rag, scenario.questions, stream=not args.no_stream)
            summary.append((scenario.name, label, answers[-1]))
    print(f"\n{'=' * 72}\nDernière réponse de chaque scénario\n{'=' * 72}")
    for name, label, answer in summary:
        top = (answer.source_names() or ["—"])[0]
        print(f"{name:8} {label:13} source n°1 : {top:28} {answer.answer[:70]!r}")
    print(f"\n[{time.perf_counter() - started:.1f} s]", file=sys.stderr)
    return 0
