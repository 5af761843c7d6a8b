"""Sources that are not memories: retrieved documents (:class:`DocumentsSource`) and a fixed
text (:class:`TextSource`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memory_chains.context._block import ContextBlock
from memory_chains.context._sources import _Source
from memory_chains.errors import InvalidInputError

__all__ = ["DocumentsSource", "TextSource"]


@dataclass(eq=False, repr=False, kw_only=True)
class DocumentsSource(_Source):
    """Retrieved documents: a fixed list, a retriever (``invoke``) or a function of the
    question; the lowest-ranked documents go first.

    Example:
        >>> from langchain_core.documents import Document
        >>> docs = [Document("Retours sous 30 jours.", metadata={"source": "retours.md"})]
        >>> DocumentsSource(docs).block("retours ?", 50).items
        ('[retours.md] Retours sous 30 jours.',)
    """

    name: str = "documents"
    priority: int = 30
    title: str = "Documents"

    def _check_target(self) -> None:
        docs = self.target
        if not (callable(docs) or hasattr(docs, "invoke") or isinstance(docs, (list, tuple))):
            raise InvalidInputError(
                "documents must be a list of Documents, a retriever or a function of the question"
            )

    def _fetch(self, question: str) -> Any:
        docs = self.target
        if isinstance(docs, (list, tuple)):
            return docs
        if hasattr(docs, "invoke"):
            return docs.invoke(question)
        fetch: Callable[[str], Any] = docs
        return fetch(question)

    def _from(self, docs: Any) -> ContextBlock:
        items = []
        for d in docs:
            source = d.metadata.get("source")
            text = " ".join(d.page_content.split())
            items.append(f"[{source}] {text}" if source else text)
        return self._make(items)

    def block(self, question: str, max_tokens: int) -> ContextBlock:
        """The documents, one item each, ``[source] text``."""
        return self._from(self._fetch(question))

    async def ablock(self, question: str, max_tokens: int) -> ContextBlock:
        """Async :meth:`block` (``ainvoke`` for a retriever)."""
        if hasattr(self.target, "ainvoke"):
            return self._from(await self.target.ainvoke(question))
        return await asyncio.to_thread(self.block, question, max_tokens)


class TextSource(_Source):
    """A fixed text (instructions, notes), truncated when the budget is short.

    Example:
        >>> TextSource("rules", "Answer in French.").block("", 10).items
        ('Answer in French.',)
    """

    def __init__(
        self,
        name: str,
        text: str,
        *,
        priority: int = 0,
        title: str = "",
        min_tokens: int = 0,
    ) -> None:
        if not isinstance(text, str):
            raise InvalidInputError(f"text must be a string, got {type(text).__name__}")
        super().__init__(None, name=name, priority=priority, title=title, min_tokens=min_tokens)
        self.shrink = "truncate"
        self.text = text

    def block(self, question: str, max_tokens: int) -> ContextBlock:
        """The text as one item."""
        return self._make((self.text.strip(),))
