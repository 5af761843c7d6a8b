"""A failed model call stores nothing (seed 004), whatever memory the chain has.

For each memory (buffer, window, token budget, running summary, entities next to a
buffer), one good exchange is stored, then the model fails at the answer step or the
rewrite step; the store must hold exactly what it held before, byte for byte, and the
chain must raise ModelCallError. A SQLite file is used so that what is compared is what
was persisted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from memory_chains.errors import ModelCallError
from memory_chains.rag import ConversationalRAG, build_chain
from memory_chains.stores import BaseStore, SQLiteStore, export_user
from memory_chains.testing import ScriptedChatModel, word_counter


class OneDoc(BaseRetriever):
    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return [Document(page_content="Le Dell XPS 15 coûte 1599 €.", metadata={"source": "kb"})]


class Rewriter:
    """Returns the question unchanged, or raises once ``fail`` is set."""

    def __init__(self) -> None:
        self.fail = False

    def rewrite(self, question: str, history: Any, *, entities: Any = ()) -> Any:
        if self.fail:
            raise RuntimeError("rewrite model crashed")
        return type("R", (), {"standalone": question})()

    async def arewrite(self, question: str, history: Any, *, entities: Any = ()) -> Any:
        return self.rewrite(question, history, entities=entities)


def _buffer(store: BaseStore) -> Any:
    from memory_chains.memory import BufferMemory

    return BufferMemory(store=store, user_id="alice", session_id="s1")


def _window(store: BaseStore) -> Any:
    from memory_chains.memory import WindowMemory

    return WindowMemory(store=store, user_id="alice", session_id="s1", k=2)


def _budget(store: BaseStore) -> Any:
    from memory_chains.memory import TokenBudgetMemory

    return TokenBudgetMemory(
        store=store, user_id="alice", session_id="s1", max_tokens=200, token_counter=word_counter
    )


def _summary(store: BaseStore) -> Any:
    from memory_chains.memory import SummaryMemory

    summarizer = ScriptedChatModel(default='{"add_facts": ["Alice wants a Dell XPS 15."]}')
    return SummaryMemory(
        store=store,
        user_id="alice",
        session_id="s1",
        llm=summarizer,
        max_turns=1,
        keep_last=1,
        background=False,
    )


def _entities(store: BaseStore) -> Any:
    from langchain_classic.memory import CombinedMemory

    from memory_chains.entities import EntityMemory

    entity = EntityMemory(extractor="rules", user_id="alice", store=store)
    return CombinedMemory(memories=[_buffer(store), entity])


MEMORIES: dict[str, Callable[[BaseStore], Any]] = {
    "buffer": _buffer,
    "window": _window,
    "token_budget": _budget,
    "summary": _summary,
    "entities": _entities,
}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "m.sqlite3")
    s.setup()
    yield s
    s.close()


def _snapshot(store: SQLiteStore) -> Any:
    doc = export_user(store, "alice")
    doc.pop("exported_at")
    return doc


@pytest.mark.parametrize("where", ["answer", "rewrite"])
@pytest.mark.parametrize("kind", sorted(MEMORIES))
@pytest.mark.parametrize("flavour", ["sync", "async"])
async def test_failed_model_call_stores_nothing(
    store: SQLiteStore, kind: str, where: str, flavour: str
) -> None:
    llm = ScriptedChatModel(replies=["Le Dell XPS 15 coûte 1599 €.", RuntimeError("model down")])
    rewriter = Rewriter()
    memory = MEMORIES[kind](store)
    rag = ConversationalRAG(build_chain(OneDoc(), llm=llm, memory=memory, rewriter=rewriter))
    rag.ask("Combien coûte le Dell XPS 15 ?")
    before = _snapshot(store)
    assert before["sessions"][0]["turns"][0]["ai"] == "Le Dell XPS 15 coûte 1599 €."
    if kind == "entities":
        assert before["documents"], "the entity memory should have stored its state"
    if kind == "summary":
        assert before["sessions"][0]["summary"] is None  # one turn kept verbatim

    rewriter.fail = where == "rewrite"
    question = "Et sa garantie ? Mon IBAN est FR76 3000 6000 0112 3456 7890 189"
    with pytest.raises(ModelCallError, match="nothing was added to memory"):
        if flavour == "sync":
            rag.ask(question)
        else:
            await rag.aask(question)

    assert _snapshot(store) == before
    assert store.count_turns("alice", "s1") == 1
