"""Fakes shared by the chain tests (classic chain, context memory, LangChain 1.x adapters).

* :class:`RecordingRetriever`: ``"<label> for <query>"`` documents, recording the queries;
* :class:`RecordingRewriter`: marks a question as rewritten, recording each call.

Each instance records its own calls (no shared class-level list).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import Field


class RecordingRetriever(BaseRetriever):
    """One document per ``(label, source)`` of :attr:`documents`, best first; records the
    queries it was given."""

    queries: list[str] = Field(default_factory=list)
    documents: tuple[tuple[str, str], ...] = (("doc", "kb.md"),)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        self.queries.append(query)
        return [
            Document(page_content=f"{label} for {query}", metadata={"source": source})
            for label, source in self.documents
        ]


@dataclass
class Rewrite:
    """The part of a ``RewriteResult`` the chains read."""

    standalone: str


class RewriteCall(NamedTuple):
    question: str
    history: list[Any]
    entities: tuple[str, ...]


class RecordingRewriter:
    """Appends `` [rewritten]`` to the question; records every call."""

    def __init__(self) -> None:
        self.calls: list[RewriteCall] = []

    @property
    def histories(self) -> list[list[Any]]:
        """The history given to each call."""
        return [call.history for call in self.calls]

    def rewrite(self, question: str, history: Any, *, entities: Any = ()) -> Rewrite:
        self.calls.append(RewriteCall(question, list(history), tuple(entities)))
        return Rewrite(f"{question} [rewritten]")

    async def arewrite(self, question: str, history: Any, *, entities: Any = ()) -> Rewrite:
        return self.rewrite(question, history, entities=entities)
