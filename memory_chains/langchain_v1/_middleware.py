"""``MemoryMiddleware``: our memories inside a LangChain 1.x agent (``create_agent``).

One agent run is one exchange:

* ``before_agent`` reads the memories for the latest user message (a
  :class:`~memory_chains.langchain_v1.MemoryView`), rewrites the question from that history
  when a rewriter is given and, when a retriever is given, retrieves documents for the
  rewritten question ("two-step RAG": no tool call needed, so it also works with models
  without tool calling, such as the embedded one);
* ``wrap_model_call`` gives every model call of the run the memory blocks, the documents and
  (with ``history="memory"``) the history from memory instead of the agent state's older
  messages: by default laid out in the user message as the classic chain's answer prompt,
  or in the system message (``placement="system"``); the request is replaced, the state is
  not touched;
* ``after_agent`` records the user's question and the final answer into the memories. It
  runs only when the run reached its end: a failed model call raises
  :class:`~memory_chains.errors.ModelCallError` and nothing is stored.

Sync and async hooks share everything but the calls that do I/O.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, NotRequired, cast

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import OmitFromInput, PrivateStateAttr
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langgraph.channels.untracked_value import UntrackedValue
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime

from memory_chains.errors import InvalidInputError, MemoryChainsError, ModelCallError
from memory_chains.langchain_v1._memories import Memories, MemoryView, history_messages
from memory_chains.langchain_v1._steps import (
    arewrite_queries,
    check_question,
    format_documents,
    rewrite_queries,
)
from memory_chains.rag import aretrieve_queries, retrieve_queries

__all__ = ["MemoryMiddleware", "MemoryState"]

History = Literal["memory", "state"]
Placement = Literal["question", "system"]


class MemoryState(AgentState[Any]):
    """Agent state keys added by :class:`MemoryMiddleware`.

    ``memory_rewritten_question`` and ``memory_documents`` are in the agent's output (the
    standalone question and the documents of the run); the others are private to the run.
    """

    memory_rewritten_question: NotRequired[Annotated[str, OmitFromInput]]
    memory_documents: NotRequired[Annotated[list[Document], OmitFromInput]]
    memory_question: NotRequired[Annotated[str, UntrackedValue, PrivateStateAttr]]
    memory_prompt: NotRequired[Annotated[str, UntrackedValue, PrivateStateAttr]]
    memory_history: NotRequired[Annotated[list[list[str]], UntrackedValue, PrivateStateAttr]]


class MemoryMiddleware(AgentMiddleware[MemoryState, Any]):
    """Agent middleware that reads our memories before the model and records after the run.

    Args:
        short_term: a short-term memory (``WindowCore``, ``SummaryCore``, ``BufferMemory``…).
        entities: an ``EntityTracker`` or ``EntityMemory``.
        long_term: a long-term memory (``profile_block`` / ``facts_block`` / ``observe``).
        context: a context builder (``build(question).render()``); replaces the blocks.
        rewriter: a ``QueryRewriter``; the latest question is rewritten from memory.
        retriever: optional retriever; its documents for the rewritten question go into the
            system message (two-step RAG, no tool call).
        history: ``"memory"`` (default) gives the model the history from the short-term
            memory plus the current run's messages; ``"state"`` keeps the agent state's
            messages (use it with a checkpointer that already holds the conversation).
        rephrase_question: with a rewriter, show the model the rewritten question in place
            of the user's (as the classic chain does); the state keeps the user's words.
        placement: where the memory goes. ``"question"`` (default) lays the current user
            message out as the classic chain's answer prompt does (memory blocks, history
            transcript, documents, then ``Question: …``), the layout the embedded model
            answers best from; ``"system"`` appends the blocks and documents to the system
            message and passes the history as separate messages.
        max_tokens: budget of each memory block (entities, profile, facts).
        entity_hints: give the rewriter the entity tracker's names, ordered for the question
            (:func:`memory_chains.rewrite.entity_source`, as ``build_chain`` does); False
            for none.

    Example:
        >>> from langchain.agents import create_agent
        >>> from memory_chains.memory import WindowCore
        >>> from memory_chains.testing import ScriptedChatModel
        >>> memory = WindowCore(k=3)
        >>> _ = memory.add_exchange("Je m'appelle Alice.", "Bonjour Alice !")
        >>> llm = ScriptedChatModel(replies=["Vous êtes Alice."])
        >>> agent = create_agent(llm, middleware=[MemoryMiddleware(memory)])
        >>> out = agent.invoke({"messages": [{"role": "user", "content": "Qui suis-je ?"}]})
        >>> print(llm.calls[0][-1].content)
        Conversation so far:
        Human: Je m'appelle Alice.
        Assistant: Bonjour Alice !
        <BLANKLINE>
        Question: Qui suis-je ?
        >>> memory.context().turns[-1].ai
        'Vous êtes Alice.'
    """

    state_schema = MemoryState

    def __init__(
        self,
        short_term: Any = None,
        *,
        entities: Any = None,
        long_term: Any = None,
        context: Any = None,
        rewriter: Any = None,
        retriever: Any = None,
        history: History = "memory",
        rephrase_question: bool = True,
        placement: Placement = "question",
        max_tokens: int = 256,
        entity_hints: bool = True,
    ) -> None:
        super().__init__()
        if history not in ("memory", "state"):
            raise InvalidInputError(f"history must be 'memory' or 'state', got {history!r}")
        if placement not in ("question", "system"):
            raise InvalidInputError(f"placement must be 'question' or 'system', got {placement!r}")
        if rewriter is not None and not callable(getattr(rewriter, "rewrite", None)):
            raise InvalidInputError("rewriter must have rewrite()/arewrite() (a QueryRewriter)")
        self.memories = Memories(
            short_term,
            entities=entities,
            long_term=long_term,
            context=context,
            max_tokens=max_tokens,
            entity_hints=entity_hints,
        )
        self.rewriter = rewriter
        self.retriever = retriever
        self.history: History = history
        self.rephrase_question = rephrase_question
        self.placement: Placement = placement
        self.tools = []

    # -- before the run: read the memories once ----------------------------------------------

    def before_agent(self, state: MemoryState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        question = _latest_question(state["messages"])
        if question is None:
            return None
        view = self.memories.view(question)
        queries = rewrite_queries(self.rewriter, view)
        docs = retrieve_queries(self.retriever, queries) if self.retriever is not None else None
        return self._prepared(view, queries[0], docs)

    async def abefore_agent(
        self, state: MemoryState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        question = _latest_question(state["messages"])
        if question is None:
            return None
        view = await self.memories.aview(question)
        queries = await arewrite_queries(self.rewriter, view)
        docs = (
            await aretrieve_queries(self.retriever, queries) if self.retriever is not None else None
        )
        return self._prepared(view, queries[0], docs)

    def _prepared(
        self, view: MemoryView, rewritten: str, docs: list[Document] | None
    ) -> dict[str, Any]:
        from_memory = self.history == "memory" and not view.history_in_blocks
        # placement="system": the turns go in as messages, the summary in the system message
        as_messages = from_memory and self.placement == "system"
        sections = [view.render(with_history=from_memory and not as_messages)]
        if as_messages and view.summary:
            sections.append(f"Summary of the earlier conversation: {view.summary}")
        if docs is not None:
            sections.append("Context documents:\n" + (format_documents(docs) or "(none found)"))
        update: dict[str, Any] = {
            "memory_question": view.question,
            "memory_rewritten_question": rewritten,
            "memory_prompt": "\n\n".join(s for s in sections if s),
            "memory_history": [list(t) for t in view.turns] if as_messages else [],
        }
        if docs is not None:
            update["memory_documents"] = list(docs)
        return update

    # -- every model call: the memory in the request ----------------------------------------

    def _request(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        state = cast("dict[str, Any]", request.state)
        if not state.get("memory_question"):
            return request
        messages = list(request.messages)
        if self.history == "memory":
            start = _latest_question_index(messages)
            messages = [*history_messages(state.get("memory_history") or ()), *messages[start:]]
        question = state["memory_question"]
        rewritten = state.get("memory_rewritten_question")
        if self.rephrase_question and rewritten:
            question = rewritten
        prompt = state.get("memory_prompt") or ""
        system = request.system_message
        at = _latest_question_index(messages)
        if self.placement == "question" and prompt:
            messages[at] = HumanMessage(content=f"{prompt}\n\nQuestion: {question}")
        elif question != state["memory_question"]:
            messages[at] = HumanMessage(content=question)
        if self.placement == "system" and prompt:
            base = system.text if system is not None else ""
            system = SystemMessage(content="\n\n".join(p for p in (base, prompt) if p))
        return request.override(messages=messages, system_message=system)

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage:
        try:
            return handler(self._request(request))
        except (GraphBubbleUp, MemoryChainsError):
            raise
        except Exception as exc:
            raise _model_error(exc) from exc

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage:
        try:
            return await handler(self._request(request))
        except (GraphBubbleUp, MemoryChainsError):
            raise
        except Exception as exc:
            raise _model_error(exc) from exc

    # -- after a successful run: record the exchange -----------------------------------------

    def after_agent(self, state: MemoryState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        exchange = _exchange(state)
        if exchange is not None:
            self.memories.record(*exchange)
        return None

    async def aafter_agent(
        self, state: MemoryState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        exchange = _exchange(state)
        if exchange is not None:
            await self.memories.arecord(*exchange)
        return None


def _latest_question_index(messages: list[AnyMessage]) -> int:
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], HumanMessage):
            return index
    return len(messages)


def _latest_question(messages: list[AnyMessage]) -> str | None:
    index = _latest_question_index(messages)
    if index == len(messages):
        return None
    return check_question(messages[index].text)


def _exchange(state: MemoryState) -> tuple[str, str] | None:
    """(question, final answer) when the run ended on an answer, else None."""
    question = state.get("memory_question")
    messages = state["messages"]
    if not question or not messages:
        return None
    last = messages[-1]
    if not isinstance(last, AIMessage) or last.tool_calls:
        return None
    return question, last.text


def _model_error(exc: Exception) -> ModelCallError:
    return ModelCallError(
        f"the model call failed ({type(exc).__name__}: {exc}); nothing was recorded in memory"
    )
