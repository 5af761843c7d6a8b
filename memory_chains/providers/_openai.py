"""LangChain's OpenAI classes, made dependable on any OpenAI-compatible endpoint.

:class:`ChatOpenAICompatible` is ``ChatOpenAI`` plus what the library needs from OpenAI,
Ollama, vLLM, LM Studio or llama.cpp's server alike:

* typed errors (:func:`~._openai_errors.map_openai_error`): a wrong key, an unreachable
  server, a model it does not serve, rate limiting after the SDK's bounded retries, a
  timeout;
* JSON answers on servers with partial or no ``response_format`` support
  (:mod:`._openai_json`): ``json_schema``, else ``json_object``, else the schema in the
  prompt, decided once per endpoint;
* token usage on streamed answers too, and offline token counts for servers whose
  tokenizer tiktoken does not know.

:class:`OpenAICompatibleEmbeddings` is ``OpenAIEmbeddings`` with the same errors, sending
text (not tiktoken's token ids, which only OpenAI's models read) to other servers.

The sync and async paths share :meth:`ChatOpenAICompatible._prepare` (what to send) and
:meth:`ChatOpenAICompatible._recover` (what a failure means: a weaker JSON level, one more
send on a connection the server dropped unanswered, or the typed error); they differ in the
call only.

Example:
    >>> model = ChatOpenAICompatible(
    ...     model="qwen", api_key="none", base_url="http://127.0.0.1:8080/v1", max_retries=0
    ... )
    >>> model.structured, model.stream_usage, model.get_num_tokens("deux mots")
    ('auto', True, 3)
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any, Literal

import openai
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from pydantic import model_validator

from memory_chains.config import StructuredMode
from memory_chains.errors import ConfigurationError, InvalidInputError
from memory_chains.providers._openai_errors import (
    Endpoint,
    dropped_unanswered,
    map_openai_error,
    rejects_response_format,
)
from memory_chains.providers._openai_json import JsonModes, PreparedCall, prepare_call
from memory_chains.providers._structured import structured_runnable
from memory_chains.providers._tokens import approximate_token_count

__all__ = ["ChatOpenAICompatible", "OpenAICompatibleEmbeddings"]

_log = logging.getLogger(__name__)
_MODES = JsonModes()
# Tokens a chat template adds around each message (role markers, separators): ChatML's
# "<|im_start|>role\n…<|im_end|>\n" is 5; most templates are within one or two of it.
_MESSAGE_OVERHEAD = 5


def _seconds(timeout: Any) -> float:
    if isinstance(timeout, (int, float)):
        return float(timeout)
    read = getattr(timeout, "read", None)  # an httpx Timeout
    return float(read) if isinstance(read, (int, float)) else 600.0  # the SDK's default


class ChatOpenAICompatible(ChatOpenAI):
    """``ChatOpenAI`` for OpenAI and every OpenAI-compatible server, with typed errors.

    Built by :func:`memory_chains.providers.get_chat_model` when ``OPENAI_API_KEY`` is set
    (``OPENAI_BASE_URL`` picks the server). It accepts every ``ChatOpenAI`` argument, plus:

    Args:
        structured: how a ``response_format`` of a call is sent: ``"json_schema"`` (as
            is), ``"json_object"``, ``"prompt"`` (schema and instruction in the prompt
            only) or ``"auto"``: as is, stepping down once per endpoint and model when the
            server refuses it (logged once).

    Raises (at call time):
        EndpointUnreachableError: nothing answers at the base URL.
        EndpointAuthenticationError: the server refused the key (401, 403).
        ModelNotServedError: the server does not serve ``model`` (404).
        ModelRateLimitError: still 429 after ``max_retries`` backed-off retries.
        ModelTimeoutError: no answer within ``timeout`` seconds.
        ModelCallError: any other failure of the call.

    Example:
        >>> model = ChatOpenAICompatible(model="llama3.2", api_key="ollama",
        ...                              base_url="http://127.0.0.1:11434/v1")
        >>> model.invoke("Capitale de la France ?").content  # doctest: +SKIP
        'Paris.'
    """

    structured: StructuredMode = "auto"

    @model_validator(mode="before")
    @classmethod
    def _usage_when_streaming(cls, values: Any) -> Any:
        # ChatOpenAI turns streamed usage on for api.openai.com only; the servers we
        # target (llama.cpp, vLLM, Ollama, LM Studio) all send it when asked.
        if isinstance(values, dict) and values.get("stream_usage") is None:
            values = {**values, "stream_usage": True}
        return values

    # ------------------------------------------------------------------ shared logic

    def _endpoint(self) -> Endpoint:
        return Endpoint(
            base_url=self.openai_api_base or "",
            model=self.model_name,
            timeout=_seconds(self.request_timeout),
            max_retries=self.max_retries if self.max_retries is not None else 2,
        )

    def _mode_key(self) -> tuple[str, str]:
        return (self._endpoint().url, self.model_name)

    def _prepare(self, messages: Sequence[BaseMessage], kwargs: dict[str, Any]) -> PreparedCall:
        return prepare_call(messages, kwargs, _MODES.current(self._mode_key(), self.structured))

    def _recover(self, call: PreparedCall, exc: BaseException, resent: bool) -> bool:
        """Return to try again after ``exc`` (and whether the call was sent again), or raise
        its error.

        A call the server dropped unanswered is sent once more (:func:`dropped_unanswered`;
        ``resent`` says it already was), a refused ``response_format`` steps down one JSON
        level; anything else raises the mapped error.
        """
        if not resent and dropped_unanswered(exc):
            _log.info("%s closed the connection unanswered: sending again", self._endpoint().url)
            return True
        if call.mode is not None and rejects_response_format(exc):
            reason = str(map_openai_error(exc, self._endpoint()))
            if _MODES.step_down(self._mode_key(), self.structured, call.mode, reason):
                return resent
        raise map_openai_error(exc, self._endpoint()) from exc

    # --------------------------------------------------------------- LangChain hooks

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        resent = False
        while True:
            call = self._prepare(messages, kwargs)
            try:
                return super()._generate(call.messages, stop, run_manager, **call.kwargs)
            except openai.OpenAIError as exc:
                resent = self._recover(call, exc, resent)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        resent = False
        while True:
            call = self._prepare(messages, kwargs)
            try:
                return await super()._agenerate(call.messages, stop, run_manager, **call.kwargs)
            except openai.OpenAIError as exc:
                resent = self._recover(call, exc, resent)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        resent = False
        while True:
            call, started = self._prepare(messages, kwargs), False
            try:
                for chunk in super()._stream(call.messages, stop, run_manager, **call.kwargs):
                    started = True
                    yield chunk
                return
            except (openai.OpenAIError, TimeoutError) as exc:  # + the chunk timeout
                if started:  # tokens already went out: asking again would repeat them
                    raise map_openai_error(exc, self._endpoint()) from exc
                resent = self._recover(call, exc, resent)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        resent = False
        while True:
            call, started = self._prepare(messages, kwargs), False
            try:
                async for chunk in super()._astream(
                    call.messages, stop, run_manager, **call.kwargs
                ):
                    started = True
                    yield chunk
                return
            except (openai.OpenAIError, TimeoutError) as exc:  # + the chunk timeout
                if started:
                    raise map_openai_error(exc, self._endpoint()) from exc
                resent = self._recover(call, exc, resent)

    # ------------------------------------------------------------ structured output

    def with_structured_output(
        self,
        schema: dict[str, Any] | type | None = None,
        *,
        method: Literal["function_calling", "json_mode", "json_schema"] = "json_schema",
        include_raw: bool = False,
        strict: bool | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, Any]:
        """A runnable whose output follows ``schema`` (a pydantic class or a JSON schema).

        ``json_schema`` (the default) and ``json_mode`` go through ``response_format`` and
        so step down like every other call on a server that refuses it; the answer is
        parsed (Markdown fences and prose around the JSON skipped) and validated.
        ``function_calling`` is ``ChatOpenAI``'s own, for servers with tool calls.

        Raises:
            InvalidInputError: no schema, or a schema type that is not supported.
            MalformedOutputError: (at call time) the answer is not valid JSON or does not
                validate; ``exc.raw`` holds the text.

        Example:
            >>> from pydantic import BaseModel
            >>> class City(BaseModel):
            ...     name: str
            >>> model = ChatOpenAICompatible(model="m", api_key="k", base_url="http://h/v1")
            >>> model.with_structured_output(City).invoke("Capitale ?")  # doctest: +SKIP
            City(name='Paris')
        """
        if method == "function_calling":
            return super().with_structured_output(
                schema, method=method, include_raw=include_raw, strict=strict, **kwargs
            )
        if schema is None or kwargs:
            raise InvalidInputError(
                f"with_structured_output needs a schema and takes no options {sorted(kwargs)}"
            )
        return structured_runnable(self, schema, include_raw=include_raw, method=method)

    # --------------------------------------------------------------- token counting

    def get_num_tokens(self, text: str) -> int:
        """Tokens of ``text``: tiktoken's count for OpenAI, else an offline estimate.

        A local server's tokenizer is not tiktoken's (and tiktoken downloads its tables);
        the exact count of a call is in its answer's ``usage_metadata``.
        """
        if self._endpoint().is_openai:
            return super().get_num_tokens(text)
        return approximate_token_count(text)

    def get_token_ids(self, text: str) -> list[int]:
        """Token ids: OpenAI's models only (other servers' vocabularies are not known)."""
        if self._endpoint().is_openai:
            return super().get_token_ids(text)
        raise ConfigurationError(
            f"the token ids of {self.model_name!r} at {self._endpoint().url} are not known "
            "offline; use get_num_tokens (an estimate) or the usage_metadata of an answer"
        )

    def get_num_tokens_from_messages(
        self,
        messages: Sequence[BaseMessage],
        tools: Sequence[Any] | None = None,
        *,
        allow_fetching_images: bool = True,
    ) -> int:
        """Prompt tokens of ``messages``: tiktoken's count for OpenAI, else an estimate."""
        if self._endpoint().is_openai:
            return super().get_num_tokens_from_messages(
                messages, tools, allow_fetching_images=allow_fetching_images
            )
        return sum(approximate_token_count(m.text) + _MESSAGE_OVERHEAD for m in messages) + 3


class OpenAICompatibleEmbeddings(OpenAIEmbeddings):
    """``OpenAIEmbeddings`` for OpenAI and every OpenAI-compatible server, with typed errors.

    Built by :func:`memory_chains.providers.get_embeddings` when embeddings come from the
    endpoint. For a server other than OpenAI's, texts are sent as text: the default
    (tiktoken token ids, to split long texts) only suits OpenAI's own models, and would
    download tiktoken's tables.

    Raises (at call time): the same errors as :class:`ChatOpenAICompatible`; a server
    without an embeddings endpoint (501) is a ``ModelUnavailableError`` that names
    ``MEMORY_CHAINS_EMBEDDINGS=e5``.

    Example:
        >>> emb = OpenAICompatibleEmbeddings(model="nomic-embed-text", api_key="ollama",
        ...                                  base_url="http://127.0.0.1:11434/v1")
        >>> emb.check_embedding_ctx_length
        False
    """

    @model_validator(mode="before")
    @classmethod
    def _text_for_other_servers(cls, values: Any) -> Any:
        if not isinstance(values, dict) or "check_embedding_ctx_length" in values:
            return values
        base = values.get("base_url") or values.get("openai_api_base") or ""
        if Endpoint(str(base), "", 0, 0).is_openai:
            return values
        return {**values, "check_embedding_ctx_length": False}

    def _endpoint(self) -> Endpoint:
        return Endpoint(
            base_url=self.openai_api_base or "",
            model=self.model,
            timeout=_seconds(self.request_timeout),
            max_retries=self.max_retries,
            model_variable="MEMORY_CHAINS_OPENAI_EMBEDDINGS_MODEL",
            url_variable="MEMORY_CHAINS_OPENAI_EMBEDDINGS_BASE_URL or OPENAI_BASE_URL",
        )

    def embed_documents(
        self, texts: list[str], chunk_size: int | None = None, **kwargs: Any
    ) -> list[list[float]]:
        """Embed ``texts`` (one vector each, in order)."""
        try:
            return super().embed_documents(texts, chunk_size, **kwargs)
        except openai.OpenAIError as exc:
            raise map_openai_error(exc, self._endpoint()) from exc

    async def aembed_documents(
        self, texts: list[str], chunk_size: int | None = None, **kwargs: Any
    ) -> list[list[float]]:
        """Async :meth:`embed_documents`."""
        try:
            return await super().aembed_documents(texts, chunk_size, **kwargs)
        except openai.OpenAIError as exc:
            raise map_openai_error(exc, self._endpoint()) from exc
