"""Deterministic fakes for unit tests of logic (never for integration tests).

* :class:`ScriptedChatModel`: a LangChain chat model answering from a script (a list of
  replies, or a function of the prompt), recording its calls **per instance**; a scripted
  reply that is an exception is raised instead, to test failure paths.
* :class:`HashEmbeddings`: bag-of-words hashing embeddings, deterministic and normalised, so
  that texts sharing words are close (good enough to test retrieval logic offline).
* :func:`word_counter`: a token counter counting whitespace-separated words.

Example:
    >>> model = ScriptedChatModel(replies=["bonjour"])
    >>> model.invoke("salut").content
    'bonjour'
    >>> len(model.calls)
    1
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.embeddings import Embeddings
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import Field, PrivateAttr

__all__ = ["HashEmbeddings", "ScriptedChatModel", "word_counter"]

Reply = str | BaseException | Callable[[Sequence[BaseMessage]], str]


class ScriptedChatModel(BaseChatModel):
    """A chat model that replies from a script and records every call.

    Args:
        replies: consumed in order; a string is returned, an exception is raised, a
            callable receives the messages and returns the text. When the script is
            exhausted, ``default`` is returned.
        default: reply once the script is exhausted: a string, or a callable receiving the
            messages (a model that answers every call from its prompt, for servers).

    Example:
        >>> m = ScriptedChatModel(replies=[lambda msgs: msgs[-1].content.upper()])
        >>> m.invoke("hi").content, m.invoke("again").content
        ('HI', '')
        >>> echo = ScriptedChatModel(default=lambda msgs: f"echo: {msgs[-1].content}")
        >>> echo.invoke("one").content, echo.invoke("two").content
        ('echo: one', 'echo: two')
    """

    replies: list[Any] = Field(default_factory=list)
    default: str | Callable[[Sequence[BaseMessage]], str] = ""
    _calls: list[list[BaseMessage]] = PrivateAttr(default_factory=list)
    _options: list[dict[str, Any]] = PrivateAttr(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted-fake"

    @property
    def calls(self) -> list[list[BaseMessage]]:
        """The messages of every call made to this instance, in order."""
        return self._calls

    @property
    def call_options(self) -> list[dict[str, Any]]:
        """The options (``response_format``, ``max_tokens``…) of every call, in order."""
        return self._options

    def _next_text(self, messages: list[BaseMessage], options: dict[str, Any]) -> str:
        self._calls.append(list(messages))
        self._options.append(dict(options))
        index = len(self._calls) - 1
        reply: Reply = self.replies[index] if index < len(self.replies) else self.default
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            return reply(messages)
        return reply

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        text = _apply_stop(self._next_text(messages, kwargs), stop)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        text = _apply_stop(self._next_text(messages, kwargs), stop)
        for piece in re.findall(r"\S+\s*|\s+", text):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk


def _apply_stop(text: str, stop: list[str] | None) -> str:
    for s in stop or ():
        cut = text.find(s)
        if cut >= 0:
            text = text[:cut]
    return text


class HashEmbeddings(Embeddings):
    """Deterministic bag-of-words embeddings (hashed, L2-normalised).

    Example:
        >>> e = HashEmbeddings(dim=64)
        >>> a, b = e.embed_documents(["garantie Dell", "garantie Dell XPS"])
        >>> round(sum(x * y for x, y in zip(a, b)), 2) > 0.5
        True
    """

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim

    def _embed(self, text: str) -> list[float]:
        vec = [0.0] * self.dim
        for word in re.findall(r"\w+", text.lower()):
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
            vec[int.from_bytes(digest[:4], "little") % self.dim] += 1.0
        norm = math.sqrt(sum(x * x for x in vec)) or 1.0
        return [x / norm for x in vec]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._embed(text)


def word_counter(text: str) -> int:
    """Count whitespace-separated words: a simple, deterministic token counter for tests.

    Example:
        >>> word_counter("deux mots")
        2
    """
    return len(text.split())
