"""What the app does, without HTTP: :class:`ChatService`.

One service holds the shared pieces (store, knowledge-base retriever, chat model, rewriter,
recall index, the :class:`~memory_chains.web.ModelWorker`) and answers per request:

* :meth:`ChatService.chat` — an async stream of ``(event, data)`` pairs: ``start``, then
  ``token`` pieces of the answer, then ``final`` (the rewritten question, the sources, what
  memory gave and stored) or ``error``;
* :meth:`~ChatService.memory_view` — what each memory holds for a session;
* :meth:`~ChatService.forget`, :meth:`~ChatService.forget_user`,
  :meth:`~ChatService.export`, :meth:`~ChatService.health`.

The answer runs through :class:`~memory_chains.rag.ConversationalRAG` (``astream``) over a
chain whose memory is the session's :class:`~memory_chains.web.WebMemory`; the exchange is
memorised by the chain only after a complete answer. Requests of one session are
serialised (a forget waits for the answer being written), and every answer waits for the
single model lane.

Example:
    >>> import asyncio
    >>> from langchain_core.documents import Document
    >>> from langchain_core.retrievers import BaseRetriever
    >>> from memory_chains.stores import InMemoryStore
    >>> from memory_chains.testing import HashEmbeddings, ScriptedChatModel
    >>> class Fixed(BaseRetriever):
    ...     def _get_relevant_documents(self, query, *, run_manager):
    ...         meta = {"source": "pilates.md"}
    ...         return [Document(page_content="Pilates : mardi 12h30.", metadata=meta)]
    >>> service = ChatService(Fixed(), llm=ScriptedChatModel(default="Le mardi à 12h30."),
    ...                       store=InMemoryStore(), embeddings=HashEmbeddings())
    >>> async def ask():
    ...     return [e async for e in service.chat(service.admit(), "alice", "s1", "Pilates ?")]
    >>> events = asyncio.run(ask())
    >>> [kind for kind, _ in events][-1], events[-1][1]["answer"], events[-1][1]["memory"]["stored"]
    ('final', 'Le mardi à 12h30.', True)
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever

from memory_chains.context import build_context_chain
from memory_chains.errors import (
    ConfigurationError,
    MemoryChainsError,
    ModelCallError,
)
from memory_chains.providers import get_token_counter
from memory_chains.rag import ConversationalRAG, RAGAnswer
from memory_chains.stores import (
    BaseStore,
    ResilientStore,
    export_user,
    forget_session,
    forget_user,
    readmit_user,
)
from memory_chains.web._config import WebConfig
from memory_chains.web._memory import MemoryParts, MemoryWork, SessionMemory
from memory_chains.web._worker import ModelWorker, Ticket

__all__ = ["ChatService"]

Event = tuple[str, dict[str, Any]]

_EXCERPT_CHARS = 240
_STATELESS_NOTE = (
    "the memory store is unavailable: this answer was given without memory and was not memorised"
)


class ChatService:
    """The reference chat app's logic: answers with memory, inspection, forget, export.

    Args:
        retriever: the knowledge base's retriever (``KnowledgeBase.as_retriever()``).
        llm: the chat model (the embedded one, OpenAI, or a scripted one in tests).
        store: where memories persist; wrap it in a
            :class:`~memory_chains.stores.ResilientStore` (``open_store(url,
            resilient=True)``) to keep answering, statelessly, while it is down.
        embeddings: for long-term facts and the recall index.
        config: memory sizes, budget, queue and limits (:class:`WebConfig`).
        rewriter: the follow-up rewriter (default: ``QueryRewriter(llm)``).
        token_counter: counts the memory budget (default: the model's).

    Example:
        >>> import asyncio
        >>> from langchain_core.retrievers import BaseRetriever
        >>> from memory_chains.stores import InMemoryStore
        >>> from memory_chains.testing import HashEmbeddings, ScriptedChatModel
        >>> class NoDocs(BaseRetriever):
        ...     def _get_relevant_documents(self, query, *, run_manager): return []
        >>> service = ChatService(NoDocs(), llm=ScriptedChatModel(), store=InMemoryStore(),
        ...                       embeddings=HashEmbeddings())
        >>> asyncio.run(service.memory_view("bob", "s1"))["turns"]
        0
    """

    def __init__(
        self,
        retriever: BaseRetriever,
        *,
        llm: Any,
        store: BaseStore,
        embeddings: Embeddings,
        config: WebConfig | None = None,
        rewriter: Any = None,
        token_counter: Any = None,
    ) -> None:
        self.config = config or WebConfig()
        self.retriever = retriever
        self.llm = llm
        self.store = store
        if rewriter is None:
            from memory_chains.rewrite import QueryRewriter

            rewriter = QueryRewriter(llm)
        self.rewriter = rewriter
        self.parts = MemoryParts(
            store, embeddings, self.config, llm, token_counter or get_token_counter(llm)
        )
        self.sessions = self.parts.sessions
        self.worker = ModelWorker(self.config.max_waiting)
        self._locks: weakref.WeakValueDictionary[tuple[str, str], asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )

    @classmethod
    def from_folder(
        cls,
        folder: str | Path,
        *,
        llm: Any,
        embeddings: Embeddings,
        store: BaseStore,
        index_dir: str | Path | None = None,
        config: WebConfig | None = None,
    ) -> ChatService:
        """A service over a folder of ``.txt`` / ``.md`` documents (indexed into FAISS, the
        index reused from ``index_dir`` when the files did not change).

        Raises:
            ConfigurationError: ``folder`` is not a folder.
        """
        from memory_chains.knowledge import KnowledgeBase

        if not Path(folder).is_dir():
            raise ConfigurationError(f"{folder} is not a folder of documents")
        config = config or WebConfig()
        kb = KnowledgeBase.from_folder(folder, embeddings, index_dir=index_dir, progress=False)
        return cls(
            kb.as_retriever(k=config.documents),
            llm=llm,
            store=store,
            embeddings=embeddings,
            config=config,
        )

    # -- answering ------------------------------------------------------------------------

    def admit(self) -> Ticket:
        """A place in the model's queue (raises ``ServiceBusyError`` when it is full)."""
        return self.worker.admit()

    def _lock(self, user_id: str, session_id: str) -> asyncio.Lock:
        lock = self._locks.get((user_id, session_id))
        if lock is None:
            lock = asyncio.Lock()
            self._locks[(user_id, session_id)] = lock
        return lock

    async def chat(
        self, ticket: Ticket, user_id: str, session_id: str, message: str
    ) -> AsyncIterator[Event]:
        """Answer ``message`` in the session; yields ``(event, data)`` pairs.

        Events: ``start`` (the answer begins: ``waited_ms`` in the queue), ``token``
        (``text``), then ``final`` (see :meth:`_final`) or ``error`` (``message``;
        nothing was memorised).
        """
        queued = time.perf_counter()
        async with ticket:
            yield "start", {"waited_ms": round(1000 * (time.perf_counter() - queued), 1)}
            lock = self._lock(user_id, session_id)
            async with lock:
                try:
                    async for event in self._answer(user_id, session_id, message):
                        yield event
                except MemoryChainsError as exc:
                    yield "error", {"message": str(exc), "kind": type(exc).__name__}

    async def _answer(self, user_id: str, session_id: str, message: str) -> AsyncIterator[Event]:
        degraded_before = self._degraded_reads()
        memory = SessionMemory(self.parts, user_id, session_id)
        work = memory.memory.work
        chain = build_context_chain(
            self.retriever, memory.memory, llm=self.llm, rewriter=self.rewriter
        )
        answer: RAGAnswer | None = None
        async for item in ConversationalRAG(chain).astream(message):
            if isinstance(item, str):
                yield "token", {"text": item}
            else:
                answer = item
        if answer is None:  # astream ends with the answer or raises: never seen
            raise ModelCallError("the chain ended without an answer; nothing was memorised")
        outage = self._degraded_reads() > degraded_before
        work.degraded = work.degraded or outage or not work.stored
        yield "final", self._final(answer, work)

    def _degraded_reads(self) -> int:
        store = self.store
        return store.stats().degraded_reads if isinstance(store, ResilientStore) else 0

    def _final(self, answer: RAGAnswer, work: MemoryWork) -> dict[str, Any]:
        """The last event: the answer, its rewrite and sources, and what memory did."""
        built = work.built
        memory: dict[str, Any] = {
            "stored": work.stored,
            "stateless": work.degraded,
            "note": _STATELESS_NOTE if work.degraded else "",
            "budget": self.config.context_tokens,
            "total_tokens": built.total_tokens if built else 0,
            "tokens": dict(built.tokens) if built else {},
            "dropped": list(built.dropped) if built else [],
            "work_ms": {
                "session": round(1000 * work.session_s, 3),
                "load": round(1000 * work.load_s, 3),
                "save": round(1000 * work.save_s, 3),
                "total": round(work.total_ms, 3),
                "cpu": round(1000 * work.cpu_s, 3),
            },
        }
        return {
            "question": answer.question,
            "rewritten": answer.rewritten,
            "was_rewritten": answer.was_rewritten,
            "answer": answer.answer,
            "sources": [
                {
                    "source": str(doc.metadata.get("source", "?")),
                    "excerpt": " ".join(doc.page_content.split())[:_EXCERPT_CHARS],
                }
                for doc in answer.sources
            ],
            "memory": memory,
        }

    # -- inspecting, forgetting, exporting --------------------------------------------------

    async def memory_view(self, user_id: str, session_id: str) -> dict[str, Any]:
        """What each memory holds for the session, as the next answer's prompt would get it.

        The blocks are built for the session's last question (none yet: an empty one).
        """
        memory = SessionMemory(self.parts, user_id, session_id)
        return await asyncio.to_thread(_view, memory, self.parts)

    async def forget(self, user_id: str, session_id: str) -> dict[str, Any]:
        """Erase one session: its turns, summary, metadata and its turns in the recall index.

        What the user-level memories learnt from it (entities, profile, facts) stays until
        :meth:`forget_user`. Waits for an answer of that session being written.

        Raises:
            StoreUnavailableError: the store is down; nothing was erased.
        """
        async with self._lock(user_id, session_id):
            result = await asyncio.to_thread(forget_session, self.store, user_id, session_id)
            recalled = await asyncio.to_thread(self.parts.index.forget_session, user_id, session_id)
        return {"sessions": result.sessions, "turns": result.turns, "recalled_turns": recalled}

    async def forget_user(self, user_id: str) -> dict[str, Any]:
        """Erase everything held about the user (every session and every memory).

        The user is still at the page and may go on chatting: that is a new start, so once
        the erase is done (answers of theirs being written here are waited for, and any
        other writer is stopped by the store's tombstone while it runs) the user is
        re-admitted with :func:`~memory_chains.stores.readmit_user`. A forgotten *session*
        stays refused: the page moves on to a new session id.

        Raises:
            StoreUnavailableError: the store is down; nothing was erased.
        """
        locks = [lock for (user, _), lock in list(self._locks.items()) if user == user_id]
        async with contextlib.AsyncExitStack() as held:
            for lock in locks:
                await held.enter_async_context(lock)
            result = await asyncio.to_thread(forget_user, self.store, user_id)
            await asyncio.to_thread(readmit_user, self.store, user_id)
        return {"sessions": result.sessions, "turns": result.turns, "documents": result.documents}

    async def export(self, user_id: str) -> dict[str, Any]:
        """Everything held about the user, as one JSON document (``export_user``).

        Raises:
            StoreUnavailableError: the store is down.
        """
        return await asyncio.to_thread(export_user, self.store, user_id)

    def health(self) -> dict[str, Any]:
        """Liveness and load: the store's availability and the model queue."""
        return {
            "ok": True,
            "store": {"scheme": self.store.scheme, "available": self.parts.available()},
            "model": type(self.llm).__name__,
            "queue": {
                "running": self.worker.running,
                "waiting": self.worker.waiting,
                "max_waiting": self.worker.max_waiting,
                "refused": self.worker.refused,
            },
        }


def _view(memory: SessionMemory, parts: MemoryParts) -> dict[str, Any]:
    store = parts.store
    last = store.last_turns(memory.user_id, memory.session_id, 1)
    question = last[0].human if last else ""
    built = memory.builder.build(question)
    blocks = []
    for report in built.reports:
        block = built.get(report.name)
        blocks.append(
            {
                "name": report.name,
                "title": block.title if block else "",
                "status": report.status,
                "tokens": report.tokens,
                "reason": report.reason,
                "items": list(block.items) if block else [],
            }
        )
    summary = store.get_summary(memory.user_id, memory.session_id)
    return {
        "user": memory.user_id,
        "session": memory.session_id,
        "question": question,
        "turns": store.count_turns(memory.user_id, memory.session_id),
        "summarised_turns": summary.upto_seq,
        "entities": len(memory.entities.entities()),
        "facts": len(memory.longterm.facts()),
        "profile": len(memory.longterm.profile().entries),
        "budget": built.max_tokens,
        "total_tokens": built.total_tokens,
        "blocks": blocks,
        "store": {"available": parts.available()},
    }
