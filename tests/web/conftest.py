"""Fixtures of the web app's tests: the sample knowledge base, a service, an httpx client.

The model is scripted (it answers from the prompt it gets: the rewritten question), the
embeddings are :class:`~memory_chains.testing.HashEmbeddings`; the knowledge base, the
SQLite store and the app are real.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memory_chains.knowledge import KnowledgeBase, sample_kb_path
from memory_chains.stores import open_store
from memory_chains.testing import HashEmbeddings, ScriptedChatModel
from memory_chains.web import ChatService, WebConfig, create_app
from tests.web._helpers import MakeService, kb_answer


@pytest.fixture(scope="session")
def retriever(tmp_path_factory: pytest.TempPathFactory) -> Any:
    index_dir = tmp_path_factory.mktemp("kb-index")
    kb = KnowledgeBase.from_folder(sample_kb_path(), HashEmbeddings(), index_dir=index_dir)
    return kb.as_retriever(k=3)


@pytest.fixture
def make_service(retriever: Any, tmp_path: Path) -> MakeService:
    def make(*, store_url: str | None = None, llm: Any = None, **config: Any) -> ChatService:
        url = store_url or f"sqlite:///{tmp_path / 'memory.sqlite3'}"
        return ChatService(
            retriever,
            llm=llm or ScriptedChatModel(default=kb_answer),
            store=open_store(url, resilient=True),
            embeddings=HashEmbeddings(),
            config=WebConfig(**config),
        )

    return make


@pytest.fixture
def service(make_service: MakeService) -> ChatService:
    return make_service()


@pytest.fixture
async def client(service: ChatService) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=create_app(service))
    async with httpx.AsyncClient(transport=transport, base_url="http://app") as http:
        yield http
