"""The reference chat web app on the library: ``memory-chains serve`` (FastAPI + uvicorn).

Needs the ``web`` extra (``pip install "memory-chains[web]"``). Core types:

* :class:`ChatService`: the app's logic without HTTP (answers streamed with memory, the
  memory inspector, forget, export), async all the way;
* :func:`create_app`: the FastAPI app over a service, with the chat page (one static page,
  no build step, no CDN);
* :class:`WebConfig`: memory sizes, token budget, queue length, input limits;
* :class:`ModelWorker`: the single lane every answer waits for (a full queue is a 503);
* :class:`SessionMemory` / :class:`WebMemory`: every memory of one conversation, as the
  chain's memory.

Example:
    >>> from fastapi.testclient import TestClient
    >>> from memory_chains.knowledge import KnowledgeBase, sample_kb_path
    >>> from memory_chains.stores import open_store
    >>> from memory_chains.testing import HashEmbeddings, ScriptedChatModel
    >>> kb = KnowledgeBase.from_folder(sample_kb_path(), HashEmbeddings(), progress=False)
    >>> service = ChatService(kb.as_retriever(k=3), llm=ScriptedChatModel(default="Mardi."),
    ...                       store=open_store("memory://", resilient=True),
    ...                       embeddings=HashEmbeddings())
    >>> client = TestClient(create_app(service))
    >>> reply = client.post("/chat", json={"session": "s1", "message": "Le Pilates ?"})
    >>> reply.headers["content-type"].startswith("text/event-stream")
    True
    >>> client.get("/memory", params={"session": "s1"}).json()["turns"]
    1
"""

from __future__ import annotations

from memory_chains.web._app import DEFAULT_USER, create_app, static_dir
from memory_chains.web._config import WebConfig
from memory_chains.web._memory import MemoryParts, MemoryWork, PastTurns, SessionMemory, WebMemory
from memory_chains.web._service import ChatService
from memory_chains.web._worker import ModelWorker, Ticket

__all__ = [
    "DEFAULT_USER",
    "ChatService",
    "MemoryParts",
    "MemoryWork",
    "ModelWorker",
    "PastTurns",
    "SessionMemory",
    "Ticket",
    "WebConfig",
    "WebMemory",
    "create_app",
    "static_dir",
]
