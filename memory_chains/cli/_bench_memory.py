"""``memory-chains bench memory``: upkeep cost of our memories vs LangChain classic's.

Every contender plays the same synthetic conversation of N turns; each turn is one
``load_memory_variables`` plus one ``save_context``, timed together. Ours persist in a
SQLite file (:class:`~memory_chains.stores.SQLiteStore`); the anchors are LangChain
classic's ``ConversationBufferMemory`` and ``ConversationBufferWindowMemory`` over
``SQLChatMessageHistory`` (SQLite), and its in-memory ``ConversationBufferWindowMemory`` and
``ConversationSummaryBufferMemory``. Every summarising memory gets the same instant stub
model, so only memory upkeep is measured. Reported per contender: mean ms per turn over
the last 100 turns (wall clock; CPU time of the process alongside, since the machine may be
shared), tokens the memory adds to the prompt at the last turn, model calls per turn. With
``--json`` the last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["register"]

_WORDS = [
    "laptop",
    "garantie",
    "livraison",
    "commande",
    "client",
    "order",
    "delivery",
    "warranty",
    "price",
    "prix",
    "écran",
    "screen",
    "battery",
    "batterie",
    "Dell",
    "XPS",
    "ASUS",
    "ROG",
    "Lenovo",
    "ThinkPad",
    "Lyon",
    "Paris",
    "Nantes",
    "mardi",
    "Tuesday",
    "samedi",
    "Saturday",
    "cours",
    "pilates",
    "yoga",
    "horaires",
    "schedule",
    "refund",
    "remboursement",
    "retour",
    "return",
    "support",
    "ticket",
    "mémoire",
    "memory",
    "carte",
    "graphique",
    "GPU",
    "RTX",
    "processeur",
    "CPU",
    "the",
    "a",
    "le",
    "la",
    "des",
    "and",
    "et",
    "with",
    "avec",
    "pour",
    "for",
    "mais",
    "but",
    "quand",
    "when",
    "est",
    "is",
    "sont",
    "are",
]


def register(sub: Any) -> None:
    """Add ``memory`` to the ``bench`` sub-commands."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "memory", help="memory upkeep cost per turn, ours vs LangChain classic"
    )
    parser.add_argument("--turns", type=int, default=1000, help="conversation length (N)")
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    parser.add_argument(
        "--only",
        choices=("ours", "anchors"),
        default=None,
        help="run only our memories or only LangChain's",
    )
    parser.add_argument("--seed", type=int, default=7, help="seed of the synthetic dialogue")
    parser.set_defaults(run=run)


@dataclass(frozen=True)
class BenchResult:
    """One contender's figures."""

    name: str
    kind: str
    ms_per_turn_last100: float
    prompt_tokens_last: int
    llm_calls_per_turn: float
    cpu_ms_per_turn_last100: float


def _dialogue(n: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)

    def sentence(words: int) -> str:
        text = " ".join(rng.choice(_WORDS) for _ in range(words))
        return f"{text} {rng.randint(1, 9999)}."

    return [(sentence(rng.randint(12, 30)), sentence(rng.randint(30, 70))) for _ in range(n)]


def _stub_model(counter: Callable[[str], int]) -> Any:
    """An instant chat model: a JSON change set with one new fact per call (the first
    folded user message).

    LangChain's summary memory reads the reply as prose; ours parses it. Token counting
    uses ``counter`` (LangChain's default would try to download GPT-2's tokenizer).
    """
    from langchain_core.messages import BaseMessage, get_buffer_string

    from memory_chains.testing import ScriptedChatModel

    class _Stub(ScriptedChatModel):
        def get_num_tokens(self, text: str) -> int:
            return counter(text)

        def get_num_tokens_from_messages(
            self, messages: list[BaseMessage], tools: Sequence[Any] | None = None
        ) -> int:
            return counter(get_buffer_string(messages))

        def _next_text(self, messages: list[BaseMessage], options: dict[str, Any]) -> str:
            self.calls.append(list(messages))
            prompt = str(messages[-1].content) if messages else ""
            folded = [line for line in prompt.splitlines() if line.startswith("Human (turn")]
            # a fact the folded turns state (ours drops a new item they do not support)
            said = folded[0].split(": ", 1)[1] if folded else f"call {len(self.calls)}"
            return json.dumps({"add_facts": [f"The user said: {said}"]})

    return _Stub()


def _prompt_text(value: Any) -> str:
    from langchain_core.messages import get_buffer_string

    if isinstance(value, str):
        return value
    return get_buffer_string(list(value))


def _play(
    name: str,
    kind: str,
    memory: Any,
    llm: Any,
    dialogue: list[tuple[str, str]],
    counter: Callable[[str], int],
) -> BenchResult:
    times: list[float] = []
    cpu: list[float] = []
    loaded: dict[str, Any] = {}
    wait = getattr(memory, "wait_idle", None)
    for question, answer in dialogue:
        start, start_cpu = time.perf_counter(), time.process_time()
        loaded = memory.load_memory_variables({"question": question})
        memory.save_context({"question": question}, {"answer": answer})
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        if wait is not None:
            # a background compaction runs while the assistant writes its next reply
            # (seconds); let it finish outside the timed region, as it would in real use
            wait(60)
    last = times[-100:]
    calls = len(llm.calls) if llm is not None else 0
    return BenchResult(
        name=name,
        kind=kind,
        ms_per_turn_last100=round(1000 * sum(last) / max(1, len(last)), 3),
        prompt_tokens_last=counter(_prompt_text(loaded.get("chat_history", ""))),
        llm_calls_per_turn=round(calls / max(1, len(dialogue)), 4),
        cpu_ms_per_turn_last100=round(1000 * sum(cpu[-100:]) / max(1, len(last)), 3),
    )


def _ours(tmp: Path, counter: Callable[[str], int]) -> list[tuple[str, Any, Any]]:
    from memory_chains.memory import BufferMemory, SummaryMemory, TokenBudgetMemory, WindowMemory
    from memory_chains.stores import SQLiteStore

    def store(name: str) -> SQLiteStore:
        s = SQLiteStore(tmp / f"{name}.sqlite3")
        s.setup()
        return s

    common: dict[str, Any] = {"token_counter": counter}
    llm, llm2 = _stub_model(counter), _stub_model(counter)
    summary: dict[str, Any] = {
        "max_tokens": 1000,
        "keep_last": 2,
        "max_summary_tokens": 400,
        **common,
    }
    return [
        ("ours_buffer_sqlite", BufferMemory(store=store("buffer"), **common), None),
        ("ours_window5_sqlite", WindowMemory(store=store("window"), k=5, **common), None),
        (
            "ours_token1000_sqlite",
            TokenBudgetMemory(store=store("token"), max_tokens=1000, **common),
            None,
        ),
        (
            "ours_summary_sqlite",
            # the default: compaction in a background thread, off the reply's path
            SummaryMemory(store=store("summary"), llm=llm, **summary),
            llm,
        ),
        (
            "ours_summary_inline_sqlite",
            # compaction inside save_context: its upkeep is inside the measured turn
            SummaryMemory(store=store("summary_inline"), llm=llm2, background=False, **summary),
            llm2,
        ),
    ]


def _anchors(tmp: Path, counter: Callable[[str], int]) -> list[tuple[str, Any, Any]]:
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    from langchain_core._api.deprecation import LangChainDeprecationWarning

    warnings.filterwarnings("ignore", category=LangChainDeprecationWarning)
    try:
        from langchain_classic.memory import (
            ConversationBufferMemory,
            ConversationBufferWindowMemory,
            ConversationSummaryBufferMemory,
        )
        from langchain_community.chat_message_histories import SQLChatMessageHistory
    except ImportError as exc:
        from memory_chains.errors import ConfigurationError

        raise ConfigurationError(
            f"the LangChain anchors need extra packages ({exc}): "
            "pip install 'sqlalchemy[asyncio]' greenlet langchain-community"
        ) from exc

    keys: dict[str, Any] = {
        "memory_key": "chat_history",
        "input_key": "question",
        "output_key": "answer",
    }

    def history(name: str) -> Any:
        return SQLChatMessageHistory(
            session_id="bench", connection=f"sqlite:///{tmp / (name + '.sqlite3')}"
        )

    llm = _stub_model(counter)
    return [
        (
            "lc_buffer_sqlhistory",
            ConversationBufferMemory(
                chat_memory=history("lc_buffer"), return_messages=True, **keys
            ),
            None,
        ),
        (
            "lc_window5_sqlhistory",
            ConversationBufferWindowMemory(
                chat_memory=history("lc_window"), k=5, return_messages=True, **keys
            ),
            None,
        ),
        (
            "lc_window5_inmemory",
            ConversationBufferWindowMemory(k=5, return_messages=True, **keys),
            None,
        ),
        (
            "lc_summary_buffer1000_inmemory",
            ConversationSummaryBufferMemory(
                llm=llm, max_token_limit=1000, return_messages=True, **keys
            ),
            llm,
        ),
    ]


def run_bench(turns: int, *, only: str | None = None, seed: int = 7) -> list[BenchResult]:
    """Play every contender through the same dialogue; return their figures."""
    from memory_chains.memory import default_token_counter

    counter = default_token_counter()
    dialogue = _dialogue(turns, seed)
    results: list[BenchResult] = []
    with tempfile.TemporaryDirectory(prefix="mc-bench-") as tmpdir:
        tmp = Path(tmpdir)
        contenders: list[tuple[str, str, Any, Any]] = []
        if only in (None, "ours"):
            contenders += [(n, "ours", m, llm) for n, m, llm in _ours(tmp, counter)]
        if only in (None, "anchors"):
            contenders += [(n, "anchor", m, llm) for n, m, llm in _anchors(tmp, counter)]
        for name, kind, memory, llm in contenders:
            results.append(_play(name, kind, memory, llm, dialogue, counter))
            store = getattr(memory, "store", None)
            if store is not None and hasattr(store, "close"):
                store.close()
    return results


def run(args: argparse.Namespace) -> int:
    """Entry point of ``memory-chains bench memory``."""
    from memory_chains.errors import InvalidInputError

    if args.turns < 1:
        raise InvalidInputError("--turns must be at least 1")
    results = run_bench(args.turns, only=args.only, seed=args.seed)
    reference = next((r for r in results if r.name == "lc_buffer_sqlhistory"), None)
    print(f"memory upkeep over {args.turns} turns (load + save, mean of the last 100 turns)")
    header = ("name", "kind", "ms/turn", "vs lc_buffer", "prompt tok", "calls/turn", "cpu ms")
    widths = (-34, -7, 9, 12, 11, 10, 8)
    print(
        " ".join(
            f"{h:{'<' if w < 0 else '>'}{abs(w)}}" for h, w in zip(header, widths, strict=True)
        )
    )
    for r in results:
        speed = (
            f"{reference.ms_per_turn_last100 / r.ms_per_turn_last100:.1f}x"
            if reference and r.ms_per_turn_last100 > 0
            else "-"
        )
        print(
            f"{r.name:34} {r.kind:7} {r.ms_per_turn_last100:9.3f} {speed:>12} "
            f"{r.prompt_tokens_last:11d} {r.llm_calls_per_turn:10.4f} "
            f"{r.cpu_ms_per_turn_last100:8.3f}"
        )
    if args.json:
        print(json.dumps({"turns": args.turns, "results": [asdict(r) for r in results]}))
    return 0
