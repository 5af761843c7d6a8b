"""``memory-chains bench serve``: concurrent conversations against a real uvicorn.

Starts the chat app (``memory_chains.web``) in a child process on 127.0.0.1, over the sample
knowledge base and a fresh SQLite store (or ``--store URL``), with a scripted model that
answers every question with "Réponse à : <question>" (no model cost: the figures are the
app's and its memory's). Then ``--sessions`` conversations run at once, each sending
``--turns`` messages one after the other through ``POST /chat`` (server-sent events), as
many browsers would. A 503 is retried after its ``Retry-After``.

Checked afterwards, in the store itself: every session holds exactly its turns, in order,
none lost, none duplicated; every streamed answer is the answer to its own question.
Reported: requests per second, the client's latency, and p50 / p95 of the **memory work**
per request (the session touched, the context built from every memory, the exchange
recorded; the app measures it and sends it in the final event), next to an anchor measured
in the same run: the same memory work done in-process, one request at a time, without
server or concurrency. With ``--json`` the last line printed is one JSON object; the exit
status is 1 if a check failed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import signal
import socket
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["register"]

_START_TIMEOUT = 120.0  # seconds for the child to index the sample knowledge base and listen
_REQUEST_TIMEOUT = 120.0
_MAX_RETRIES = 50  # 503s retried per request before giving up


def register(sub: Any) -> None:
    """Add ``serve`` to the ``bench`` sub-commands."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "serve", help="N concurrent chat sessions x M turns against a real uvicorn"
    )
    parser.add_argument("--sessions", type=int, default=50, help="concurrent sessions")
    parser.add_argument("--turns", type=int, default=20, help="messages per session")
    parser.add_argument("--users", type=int, default=10, help="users owning the sessions")
    parser.add_argument(
        "--store", default=None, help="store URL (default: a fresh temporary SQLite file)"
    )
    parser.add_argument(
        "--embeddings",
        choices=("hash", "e5"),
        default="hash",
        help="embeddings of the facts and the recall index: deterministic hashing (default, "
        "the memory's own cost) or the real e5 model (its vectors included)",
    )
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    parser.set_defaults(run=run)


def scripted_answer(messages: Sequence[Any]) -> str:
    """The benchmark's model: answers the question at the end of the answer prompt."""
    prompt = str(messages[-1].content)
    if "Context documents:" not in prompt:
        return '{"referent": "none"}'  # a rewriter call
    return "Réponse à : " + prompt.rsplit("Question:", 1)[-1].strip()


def _embeddings(kind: str) -> Any:
    if kind == "e5":
        from memory_chains.providers import get_embeddings

        return get_embeddings()
    from memory_chains.testing import HashEmbeddings

    return HashEmbeddings()


def _service(store_url: str, workdir: str, embeddings: str, max_waiting: int) -> Any:
    from memory_chains.knowledge import sample_kb_path
    from memory_chains.stores import open_store
    from memory_chains.testing import ScriptedChatModel
    from memory_chains.web import ChatService, WebConfig

    return ChatService.from_folder(
        sample_kb_path(),
        llm=ScriptedChatModel(default=scripted_answer),
        embeddings=_embeddings(embeddings),
        store=open_store(store_url, resilient=True),
        index_dir=Path(workdir) / "kb-index",
        config=WebConfig(max_waiting=max_waiting),
    )


def serve_scripted(
    port: int, store_url: str, workdir: str, embeddings: str, max_waiting: int
) -> None:
    """The child process: the app with the scripted model, on uvicorn, until terminated."""
    import uvicorn

    from memory_chains.web import create_app

    app = create_app(_service(store_url, workdir, embeddings, max_waiting))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


@dataclass
class _Session:
    user: str
    session: str
    sent: list[str] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)
    work_ms: list[float] = field(default_factory=list)
    stages_ms: dict[str, list[float]] = field(
        default_factory=lambda: {"session": [], "load": [], "save": [], "cpu": []}
    )
    mismatched: int = 0
    retried: int = 0
    failed: list[str] = field(default_factory=list)


async def _one_turn(http: Any, state: _Session, message: str) -> None:
    from httpx_sse import aconnect_sse

    body = {"session": state.session, "message": message, "user": state.user}
    for _attempt in range(_MAX_RETRIES):
        started = time.perf_counter()
        async with aconnect_sse(http, "POST", "/chat", json=body) as source:
            if source.response.status_code == 503:
                state.retried += 1
                await asyncio.sleep(float(source.response.headers.get("retry-after", "1")))
                continue
            if source.response.status_code != 200:
                state.failed.append(f"HTTP {source.response.status_code}")
                return
            tokens: list[str] = []
            final: dict[str, Any] | None = None
            async for event in source.aiter_sse():
                if event.event == "token":
                    tokens.append(event.json()["text"])
                elif event.event == "final":
                    final = event.json()
                elif event.event == "error":
                    state.failed.append(event.json()["message"])
        state.latencies_ms.append(1000 * (time.perf_counter() - started))
        if final is None:
            return
        state.sent.append(message)
        measured = final["memory"]["work_ms"]
        state.work_ms.append(float(measured["total"]))
        for stage, values in state.stages_ms.items():
            values.append(float(measured[stage]))
        expected = f"Réponse à : {message}"
        if final["answer"] != expected or "".join(tokens).strip() != expected:
            state.mismatched += 1
        return
    state.failed.append(f"503 after {_MAX_RETRIES} tries")


async def _conversations(port: int, sessions: int, turns: int, users: int) -> list[_Session]:
    import httpx

    states = [_Session(f"bench-u{i % users}", f"bench-s{i}") for i in range(sessions)]
    limits = httpx.Limits(max_connections=sessions, max_keepalive_connections=sessions)
    timeout = httpx.Timeout(_REQUEST_TIMEOUT)
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", limits=limits, timeout=timeout
    ) as http:

        async def converse(state: _Session, index: int) -> None:
            for turn in range(turns):
                await _one_turn(http, state, _message(index, turn))

        await asyncio.gather(*(converse(s, i) for i, s in enumerate(states)))
    return states


async def _wait_until_up(port: int, child: Any) -> None:
    import httpx

    deadline = time.monotonic() + _START_TIMEOUT
    async with httpx.AsyncClient() as http:
        while time.monotonic() < deadline:
            if not child.is_alive():
                raise RuntimeError(f"the server process exited (code {child.exitcode})")
            try:
                if (await http.get(f"http://127.0.0.1:{port}/healthz")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.2)
    raise RuntimeError(f"the server did not answer within {_START_TIMEOUT:.0f} s")


def _verify(store_url: str, states: Sequence[_Session], turns: int) -> dict[str, int]:
    """Lost, duplicated and reordered turns per the store, against what each session sent."""
    from memory_chains.stores import open_store

    store = open_store(store_url)
    counts = {"lost": 0, "duplicated": 0, "reordered": 0}
    try:
        for state in states:
            stored = store.turns_after(state.user, state.session, 0)
            humans = [t.human for t in stored]
            counts["duplicated"] += len(humans) - len(set(humans))
            counts["lost"] += len(set(state.sent) - set(humans)) + (turns - len(state.sent))
            first_seen = list(dict.fromkeys(humans))
            kept = [m for m in state.sent if m in set(humans)]
            seqs = [t.seq for t in stored]
            counts["reordered"] += int(first_seen != kept or seqs != sorted(set(seqs)))
    finally:
        store.close()
    return counts


def _anchor(
    workdir: str, embeddings: str, sessions: int, turns: int, users: int
) -> tuple[list[float], list[float]]:
    """The same memory work in-process, one request at a time: no server, no concurrency.

    The same sessions, users and messages as the run (the work grows with a user's history).
    Returns the wall-clock and the CPU milliseconds of each request.
    """
    from memory_chains.stores import open_store
    from memory_chains.web import MemoryParts, SessionMemory

    store = open_store(f"sqlite:///{Path(workdir) / 'anchor.sqlite3'}", resilient=True)
    parts = MemoryParts(store, _embeddings(embeddings))
    times: list[float] = []
    cpu: list[float] = []
    try:
        for turn in range(turns):
            for index in range(sessions):
                user, session = f"bench-u{index % users}", f"bench-s{index}"
                message = _message(index, turn)
                started, cpu_started = time.perf_counter(), time.thread_time()
                memory = SessionMemory(parts, user, session)
                memory.memory.load_memory_variables({"question": message})
                answer = {"answer": f"Réponse à : {message}"}
                memory.memory.save_context({"question": message}, answer)
                times.append(1000 * (time.perf_counter() - started))
                cpu.append(1000 * (time.thread_time() - cpu_started))
    finally:
        store.close()
    return times, cpu


def _message(index: int, turn: int) -> str:
    return f"Session {index}, message {turn + 1} : quels sont les horaires du yoga ?"


@dataclass(frozen=True)
class ServeBenchResult:
    """The figures of one run (``ok``: every check passed)."""

    sessions: int
    turns_per_session: int
    requests: int
    seconds: float
    requests_per_s: float
    latency_p50_ms: float
    latency_p95_ms: float
    memory_work_p50_ms: float
    memory_work_p95_ms: float
    memory_cpu_p50_ms: float
    memory_cpu_p95_ms: float
    stages_p95_ms: dict[str, float]
    anchor_in_process_p50_ms: float
    anchor_in_process_p95_ms: float
    anchor_cpu_p95_ms: float
    ratio_p95_to_anchor: float
    ratio_cpu_p95_to_anchor: float
    retried_503: int
    lost: int
    duplicated: int
    reordered: int
    mismatched_answers: int
    failed: int
    store: str
    embeddings: str
    ok: bool
    problems: tuple[str, ...] = ()


def bench_serve(
    sessions: int, turns: int, users: int, store_url: str | None, embeddings: str, workdir: str
) -> ServeBenchResult:
    """Run the server, the conversations, the checks and the anchor
    (``tests/web/test_cli.py`` runs it on 3 sessions)."""
    url = store_url or f"sqlite:///{Path(workdir) / 'bench.sqlite3'}"
    port = _free_port()
    context = multiprocessing.get_context("spawn")
    child = context.Process(
        target=serve_scripted, args=(port, url, workdir, embeddings, sessions), daemon=True
    )
    child.start()
    try:
        asyncio.run(_wait_until_up(port, child))
        started = time.perf_counter()
        states = asyncio.run(_conversations(port, sessions, turns, users))
        seconds = time.perf_counter() - started
    finally:
        if child.pid is not None and child.is_alive():
            os.kill(child.pid, signal.SIGINT)  # uvicorn's graceful shutdown
        child.join(15)
        if child.is_alive():
            child.kill()
            child.join()
    checks = _verify(url, states, turns)
    latencies = [x for s in states for x in s.latencies_ms]
    work = [x for s in states for x in s.work_ms]
    anchor, anchor_cpu = _anchor(workdir, embeddings, sessions, turns, users)
    cpu = [x for s in states for x in s.stages_ms["cpu"]]
    cpu_p95, anchor_cpu_p95 = _percentile(cpu, 95), _percentile(anchor_cpu, 95)
    problems = tuple(f"{s.session}: {f}" for s in states for f in s.failed[:2])
    p95, anchor_p95 = _percentile(work, 95), _percentile(anchor, 95)
    mismatched = sum(s.mismatched for s in states)
    requests = len(work)
    return ServeBenchResult(
        sessions=sessions,
        turns_per_session=turns,
        requests=requests,
        seconds=round(seconds, 2),
        requests_per_s=round(requests / seconds, 1) if seconds else 0.0,
        latency_p50_ms=round(_percentile(latencies, 50), 1),
        latency_p95_ms=round(_percentile(latencies, 95), 1),
        memory_work_p50_ms=round(_percentile(work, 50), 3),
        memory_work_p95_ms=round(p95, 3),
        stages_p95_ms={
            stage: round(_percentile([x for st in states for x in st.stages_ms[stage]], 95), 3)
            for stage in ("session", "load", "save")
        },
        memory_cpu_p50_ms=round(_percentile(cpu, 50), 3),
        memory_cpu_p95_ms=round(cpu_p95, 3),
        anchor_cpu_p95_ms=round(anchor_cpu_p95, 3),
        ratio_cpu_p95_to_anchor=round(cpu_p95 / anchor_cpu_p95, 2) if anchor_cpu_p95 else 0.0,
        anchor_in_process_p50_ms=round(_percentile(anchor, 50), 3),
        anchor_in_process_p95_ms=round(anchor_p95, 3),
        ratio_p95_to_anchor=round(p95 / anchor_p95, 2) if anchor_p95 else 0.0,
        retried_503=sum(s.retried for s in states),
        failed=sum(len(s.failed) for s in states),
        mismatched_answers=mismatched,
        store=url.split("://", 1)[0],
        embeddings=embeddings,
        ok=not problems and not mismatched and not any(checks.values()),
        problems=problems,
        **checks,
    )


def run(args: argparse.Namespace) -> int:
    """Entry point of ``memory-chains bench serve``."""
    from memory_chains.cli._serve import _require_web
    from memory_chains.errors import InvalidInputError

    _require_web()
    for name in ("sessions", "turns", "users"):
        if getattr(args, name) < 1:
            raise InvalidInputError(f"--{name} must be at least 1")
    with tempfile.TemporaryDirectory(prefix="mc-bench-serve-") as workdir:
        result = bench_serve(
            args.sessions, args.turns, args.users, args.store, args.embeddings, workdir
        )
    r = result
    print(
        f"{r.sessions} concurrent sessions x {r.turns_per_session} turns, scripted model, "
        f"{r.store} store, {r.embeddings} embeddings: {r.requests} answers in {r.seconds} s "
        f"({r.requests_per_s} requests/s; client latency p50 {r.latency_p50_ms} ms, "
        f"p95 {r.latency_p95_ms} ms; {r.retried_503} retried after a 503)"
    )
    print(
        f"memory work per request: p50 {r.memory_work_p50_ms} ms, p95 {r.memory_work_p95_ms} ms"
        f" (anchor, same work in-process one at a time: p50 {r.anchor_in_process_p50_ms} ms, "
        f"p95 {r.anchor_in_process_p95_ms} ms; ratio {r.ratio_p95_to_anchor})"
    )
    stages = ", ".join(f"{k} {v} ms" for k, v in r.stages_p95_ms.items())
    print(f"  p95 by stage: {stages}")
    print(
        f"  CPU time of the memory work: p50 {r.memory_cpu_p50_ms} ms, p95 "
        f"{r.memory_cpu_p95_ms} ms (anchor p95 {r.anchor_cpu_p95_ms} ms; ratio "
        f"{r.ratio_cpu_p95_to_anchor})"
    )
    print(
        f"checks: {r.lost} lost, {r.duplicated} duplicated, {r.reordered} reordered, "
        f"{r.mismatched_answers} mismatched answers, {r.failed} failed: "
        f"{'ok' if r.ok else 'FAILED'}"
    )
    for problem in r.problems[:5]:
        print(f"  {problem}")
    if args.json:
        print(json.dumps(asdict(result)))
    return 0 if result.ok else 1
