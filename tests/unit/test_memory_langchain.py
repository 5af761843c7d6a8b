"""The BaseMemory shells, in ConversationalRetrievalChain and alone (fakes only)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.retrievers import BaseRetriever

import memory_chains.memory as memory_pkg
import memory_chains.privacy as privacy_pkg
import memory_chains.stores as stores_pkg
from memory_chains.errors import InvalidInputError
from memory_chains.memory import BufferMemory, SummaryMemory, TokenBudgetMemory, WindowMemory
from memory_chains.stores import InMemoryStore, SQLiteStore
from memory_chains.testing import ScriptedChatModel, word_counter


class _Retriever(BaseRetriever):
    def _get_relevant_documents(self, query: str, *, run_manager: object = None) -> list[Document]:
        return [Document(page_content="Dell XPS 15 : garantie 3 ans.")]


def _chain(memory: object, llm: ScriptedChatModel) -> object:
    from langchain_classic.chains import ConversationalRetrievalChain

    return ConversationalRetrievalChain.from_llm(
        llm,
        retriever=_Retriever(),
        memory=memory,
        return_source_documents=True,
        return_generated_question=True,
    )


@pytest.mark.parametrize(
    "memory",
    [
        BufferMemory(),
        WindowMemory(k=3),
        TokenBudgetMemory(max_tokens=500),
        SummaryMemory(llm=ScriptedChatModel(default='{"add_facts": []}'), background=False),
    ],
    ids=["buffer", "window", "token", "summary"],
)
def test_drops_into_conversational_retrieval_chain(memory: object) -> None:
    llm = ScriptedChatModel(default="La garantie est de 3 ans.")
    chain = _chain(memory, llm)
    first = chain.invoke({"question": "Garantie du Dell XPS 15 ? jo@ex.fr"})  # type: ignore[attr-defined]
    assert first["answer"] == "La garantie est de 3 ans." and first["source_documents"]
    second = chain.invoke({"question": "Et pour l'ASUS ?"})  # type: ignore[attr-defined]
    history = second["chat_history"]
    assert [type(m) for m in history] == [HumanMessage, AIMessage]
    assert history[0].content == "Garantie du Dell XPS 15 ? [EMAIL]"  # masked before storage
    loaded = memory.load_memory_variables({})["chat_history"]  # type: ignore[attr-defined]
    assert len(loaded) == 4
    # the question generator saw the masked history, the answer the original question
    assert "[EMAIL]" in str(llm.calls[1][-1].content)


def test_string_output_and_prefixes() -> None:
    mem = WindowMemory(k=2, return_messages=False, human_prefix="Client", ai_prefix="Bot")
    mem.save_context({"question": "Salut"}, {"answer": "Bonjour"})
    assert mem.load_memory_variables({}) == {"chat_history": "Client: Salut\nBot: Bonjour"}


def test_output_keys_other_than_answer_are_ignored() -> None:
    mem = BufferMemory()
    mem.save_context(
        {"question": "q", "chat_history": []},
        {"answer": "a", "source_documents": [1], "generated_question": "g"},
    )
    assert [m.content for m in mem.load_memory_variables({})["chat_history"]] == ["q", "a"]


def test_single_keys_fall_back_like_langchain() -> None:
    mem = BufferMemory()
    mem.save_context({"input": "hello", "chat_history": []}, {"response": "hi"})
    assert [m.content for m in mem.load_memory_variables({})["chat_history"]] == ["hello", "hi"]


@pytest.mark.parametrize(
    ("inputs", "outputs"),
    [({"a": "x", "b": "y"}, {"answer": "z"}), ({"question": "x"}, {"text": "1", "other": "2"})],
)
def test_ambiguous_keys_raise_and_store_nothing(inputs: dict, outputs: dict) -> None:
    mem = BufferMemory()
    with pytest.raises(InvalidInputError, match="key"):
        mem.save_context(inputs, outputs)
    assert mem.load_memory_variables({})["chat_history"] == []


@pytest.mark.parametrize("bad", [None, 42, "", "x" * 1_000_000])
def test_bad_question_raises_typed_error(bad: object) -> None:
    mem = BufferMemory()
    with pytest.raises(InvalidInputError):
        mem.save_context({"question": bad}, {"answer": "a"})
    assert mem.stats().turns == 0


def test_custom_keys_and_persistence(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/m.sqlite3"
    mem = WindowMemory(
        store=url,
        k=1,
        memory_key="history",
        input_key="in",
        output_key="out",
        user_id="alice",
        session_id="s1",
    )
    assert mem.memory_variables == ["history"]
    mem.save_context({"in": "q1"}, {"out": "a1"})
    mem.save_context({"in": "q2"}, {"out": "a2"})
    assert isinstance(mem.store, SQLiteStore)
    mem.store.close()
    again = WindowMemory(store=url, k=5, memory_key="history", user_id="alice", session_id="s1")
    assert [m.content for m in again.load_memory_variables({})["history"]] == [
        "q1",
        "a1",
        "q2",
        "a2",
    ]
    again.clear()
    assert again.load_memory_variables({})["history"] == []


def test_shared_store_between_memory_kinds() -> None:
    store = InMemoryStore()
    BufferMemory(store=store).save_context({"question": "q"}, {"answer": "a"})
    assert WindowMemory(store=store, k=1).stats().turns == 1


def test_summary_memory_puts_summary_first_as_system_message() -> None:
    llm = ScriptedChatModel(default=json.dumps({"add_facts": ["Alice is in Lyon."]}))
    mem = SummaryMemory(llm=llm, max_turns=2, keep_last=1, token_counter=word_counter)
    for i, question in enumerate(("Alice here, from Lyon.", "q1", "q2")):
        mem.save_context({"question": question}, {"answer": f"a{i}"})
    assert mem.wait_idle(5)
    history = mem.load_memory_variables({})["chat_history"]
    assert isinstance(history[0], SystemMessage)
    assert history[0].content == "Summary of the earlier conversation: Key facts: Alice is in Lyon."
    assert [m.content for m in history[1:]] == ["q2", "a2"]
    stats = mem.stats()
    assert stats.compactions == 1 and stats.turns == 3 and len(llm.calls) == 1


async def test_async_shell_methods() -> None:
    mem = SummaryMemory(
        llm=ScriptedChatModel(default='{"add_facts": ["x"]}'), max_turns=1, keep_last=0
    )
    await mem.asave_context({"question": "q1"}, {"answer": "a1"})
    await mem.asave_context({"question": "q2"}, {"answer": "a2"})
    assert await mem.await_idle(5)
    loaded = await mem.aload_memory_variables({})
    assert loaded["chat_history"][0].content.endswith("Key facts: x.")
    await mem.aclear()
    assert (await mem.aload_memory_variables({}))["chat_history"] == []


def test_core_packages_do_not_import_langchain_classic() -> None:
    code = (
        "import sys, memory_chains.memory, memory_chains.stores, memory_chains.privacy;"
        "print(any(m.startswith('langchain_classic') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("module", [memory_pkg, stores_pkg, privacy_pkg])
def test_public_names_sorted_and_importable(module: object) -> None:
    names = module.__all__  # type: ignore[attr-defined]
    assert names == sorted(names)
    for name in names:
        assert getattr(module, name) is not None
