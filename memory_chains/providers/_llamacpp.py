"""A LangChain chat model running a GGUF file in-process with ``xllamacpp``.

:class:`ChatLlamaCpp` is the embedded default chat model. Loading a model costs seconds and
about 2 GB of RAM, so one ``xllamacpp.Server`` is kept per model file per process, in a
registry guarded by a lock; calls to a server are serialised by its own lock (the server
runs one slot). Constructing :class:`ChatLlamaCpp` does no I/O: the model loads on the
first call.

The blocking call is written once (:meth:`ChatLlamaCpp._complete` and
:meth:`ChatLlamaCpp._complete_streaming`); the async methods run it in a worker thread, and
streaming bridges llama.cpp's per-token callback into a queue (a ``queue.Queue`` for
``stream``, an ``asyncio.Queue`` for ``astream``). Message and response conversions live
in :mod:`._wire`, structured-output schemas and parsing in :mod:`._structured`.

Example:
    >>> model = ChatLlamaCpp(model_path="/models/any.gguf", max_tokens=32)
    >>> model.max_tokens, model._llm_type
    (32, 'llamacpp-inprocess')
"""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from pydantic import BaseModel, ConfigDict, Field

from memory_chains._pydantic import TypedValidation
from memory_chains.errors import (
    ConfigurationError,
    InvalidInputError,
    ModelCallError,
    ModelUnavailableError,
)
from memory_chains.providers._structured import structured_runnable
from memory_chains.providers._wire import (
    check_response,
    chunk_from_event,
    result_from_response,
    to_llama_messages,
)

__all__ = ["ChatLlamaCpp"]

_log = logging.getLogger(__name__)

# Request keys a caller may pass through ``invoke(..., key=value)`` or ``bind``.
_PASSTHROUGH = ("temperature", "max_tokens", "top_p", "seed", "response_format")


@dataclass
class _LoadedModel:
    server: Any
    call_lock: threading.Lock
    n_ctx: int
    n_threads: int
    load_seconds: float


_REGISTRY: dict[Path, _LoadedModel] = {}
_REGISTRY_LOCK = threading.Lock()


def _create_server(path: Path, n_ctx: int, n_threads: int) -> Any:
    """Load ``path`` into a new ``xllamacpp.Server`` (replaced by a fake in unit tests)."""
    try:
        import xllamacpp
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise ModelUnavailableError(
            "xllamacpp is not installed; run: pip install xllamacpp"
        ) from exc
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_ctx = n_ctx
    params.n_parallel = 1
    params.cpuparams.n_threads = n_threads
    params.cpuparams_batch.n_threads = n_threads
    params.verbosity = -1  # llama.cpp prints nothing
    try:
        return xllamacpp.Server(params)
    except Exception as exc:  # the binding raises plain RuntimeError/ValueError
        raise ModelUnavailableError(f"llama.cpp could not load {path}: {exc}") from exc


def _loaded_model(path: Path, n_ctx: int, n_threads: int) -> _LoadedModel:
    """The process-wide server for ``path``, loading it on first use."""
    with _REGISTRY_LOCK:
        loaded = _REGISTRY.get(path)
        if loaded is None:
            start = time.perf_counter()
            server = _create_server(path, n_ctx, n_threads)
            loaded = _LoadedModel(
                server=server,
                call_lock=threading.Lock(),
                n_ctx=n_ctx,
                n_threads=n_threads,
                load_seconds=time.perf_counter() - start,
            )
            _REGISTRY[path] = loaded
            _log.info("loaded %s in %.1f s", path, loaded.load_seconds)
        elif loaded.n_ctx != n_ctx:
            raise ConfigurationError(
                f"{path} is already loaded in this process with n_ctx={loaded.n_ctx}; "
                f"cannot also use n_ctx={n_ctx} (use one MEMORY_CHAINS_N_CTX per process)"
            )
        return loaded


def loaded_models() -> dict[Path, float]:
    """The models loaded in this process and their load time in seconds (diagnostics)."""
    with _REGISTRY_LOCK:
        return {path: m.load_seconds for path, m in _REGISTRY.items()}


class ChatLlamaCpp(TypedValidation, BaseChatModel):
    """A GGUF chat model run in-process by llama.cpp (through ``xllamacpp``).

    Supports ``invoke``/``ainvoke``, token streaming (``stream``/``astream``, with
    ``on_llm_new_token`` callbacks), stop sequences, ``with_structured_output`` (the JSON
    schema is enforced by llama.cpp's grammar), ``usage_metadata`` on every answer, and
    offline token counting with the model's own tokenizer.

    Args:
        model_path: the GGUF file (see :func:`memory_chains.providers.ensure_embedded_model`).
        n_ctx: context window in tokens. One process uses one ``n_ctx`` per model file.
        n_threads: CPU threads; 0 means ``os.cpu_count()``.
        temperature: sampling temperature (0 = greedy, reproducible).
        max_tokens: maximum number of generated tokens per call.
        stop: stop sequences applied to every call (merged with ``stop=`` of a call).
        top_p: optional nucleus sampling threshold.
        seed: optional sampling seed.
        tokenizer_cache_dir: where the parsed tokenizer is cached (faster start-up).

    Example:
        >>> from memory_chains.providers import get_chat_model
        >>> model = get_chat_model()  # doctest: +SKIP
        >>> model.invoke("Réponds par un mot : capitale de la France ?").content  # doctest: +SKIP
        'Paris'
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model_path: Path
    n_ctx: int = Field(default=4096, gt=0, lt=2**31)  # a C int in llama.cpp
    n_threads: int = Field(default=0, ge=0)
    temperature: float = Field(default=0.0, ge=0.0)
    max_tokens: int = Field(default=512, gt=0)
    stop: list[str] | None = None
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    seed: int | None = None
    tokenizer_cache_dir: Path | None = None

    @property
    def _llm_type(self) -> str:
        return "llamacpp-inprocess"

    @property
    def _identifying_params(self) -> Mapping[str, Any]:
        return {
            "model_path": str(self.model_path),
            "n_ctx": self.n_ctx,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }

    # ----------------------------------------------------------------- the blocking core

    def _threads(self) -> int:
        return self.n_threads or os.cpu_count() or 1

    def _model(self) -> _LoadedModel:
        path = Path(self.model_path).expanduser().resolve()
        if not path.is_file():
            raise ModelUnavailableError(f"model file {path} does not exist")
        return _loaded_model(path, self.n_ctx, self._threads())

    def _request(
        self, messages: Sequence[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> dict[str, Any]:
        request: dict[str, Any] = {
            "messages": to_llama_messages(messages),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if self.top_p is not None:
            request["top_p"] = self.top_p
        if self.seed is not None:
            request["seed"] = self.seed
        for key in _PASSTHROUGH:
            if kwargs.get(key) is not None:
                request[key] = kwargs[key]
        stops = [*(self.stop or ()), *(stop or ())]
        if stops:
            request["stop"] = stops
        return request

    def _complete(self, request: Mapping[str, Any]) -> dict[str, Any]:
        loaded = self._model()
        with loaded.call_lock:
            try:
                response = loaded.server.handle_chat_completions(dict(request))
            except Exception as exc:
                raise ModelCallError(f"llama.cpp call failed: {exc}") from exc
        return check_response(response)

    def _complete_streaming(
        self, request: Mapping[str, Any], on_chunk: Callable[[dict[str, Any]], bool]
    ) -> None:
        """Stream ``request``; ``on_chunk`` returns True to stop generation early."""
        loaded = self._model()
        body = {**request, "stream": True, "stream_options": {"include_usage": True}}
        with loaded.call_lock:
            try:
                response = loaded.server.handle_chat_completions(body, on_chunk)
            except Exception as exc:
                raise ModelCallError(f"llama.cpp streaming call failed: {exc}") from exc
        if response is not None:
            check_response(response)

    # ------------------------------------------------------------------ LangChain hooks

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        response = self._complete(self._request(messages, stop, **kwargs))
        return result_from_response(response)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        request = self._request(messages, stop, **kwargs)
        response = await asyncio.to_thread(self._complete, request)
        return result_from_response(response)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        request = self._request(messages, stop, **kwargs)
        events: queue.Queue[tuple[str, Any]] = queue.Queue()
        cancelled = threading.Event()
        worker = threading.Thread(
            target=_pump,
            args=(self._complete_streaming, request, events.put, cancelled),
            name="memory-chains-llamacpp-stream",
            daemon=True,
        )
        worker.start()
        try:
            while (chunk := _next_chunk(*events.get())) is not _DONE:
                if chunk is not None:
                    # langchain-core reports each yielded chunk to on_llm_new_token itself.
                    yield chunk
        finally:
            # A consumer that stops iterating (or fails) stops generation too.
            cancelled.set()
            worker.join()

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        request = self._request(messages, stop, **kwargs)
        loop = asyncio.get_running_loop()
        events: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

        def put(event: tuple[str, Any]) -> None:
            loop.call_soon_threadsafe(events.put_nowait, event)

        cancelled = threading.Event()
        worker = loop.run_in_executor(
            None, _pump, self._complete_streaming, request, put, cancelled
        )
        try:
            while (chunk := _next_chunk(*await events.get())) is not _DONE:
                if chunk is not None:
                    yield chunk
        finally:
            cancelled.set()
            await asyncio.shield(worker)

    # -------------------------------------------------------------- structured output

    def with_structured_output(
        self,
        schema: dict[str, Any] | type,
        *,
        include_raw: bool = False,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, dict[str, Any] | BaseModel]:
        """Return a runnable whose output follows ``schema``.

        llama.cpp constrains generation with a grammar derived from the JSON schema, then
        the answer is parsed (and validated, for a pydantic model).

        Args:
            schema: a pydantic model class (the output is an instance of it) or a JSON
                schema dict (the output is a dict). An OpenAI function dict
                (``{"name", "parameters"}``) is accepted too.
            include_raw: return ``{"raw", "parsed", "parsing_error"}`` instead of raising.
            **kwargs: ``method="json_schema"`` is accepted; anything else is refused.

        Raises:
            InvalidInputError: the schema type or an option is not supported.
            MalformedOutputError: (at call time) the answer cannot be parsed or validated;
                ``exc.raw`` holds the model's text.

        Example:
            >>> from pydantic import BaseModel
            >>> class City(BaseModel):
            ...     name: str
            >>> runnable = ChatLlamaCpp(model_path="m.gguf").with_structured_output(City)
            >>> runnable.invoke("Capital of France?")  # doctest: +SKIP
            City(name='Paris')
        """
        method = kwargs.pop("method", "json_schema")
        kwargs.pop("strict", None)
        if method != "json_schema" or kwargs:
            raise InvalidInputError(
                f"ChatLlamaCpp.with_structured_output supports method='json_schema' only; "
                f"got method={method!r} and options {sorted(kwargs)}"
            )
        return structured_runnable(self, schema, include_raw=include_raw)

    # --------------------------------------------------------------- token counting

    def _tokenizer(self) -> Any:
        from memory_chains.providers._tokens import GGUFTokenizer

        return GGUFTokenizer.for_file(self.model_path, cache_dir=self.tokenizer_cache_dir)

    def get_num_tokens(self, text: str) -> int:
        """Exact number of tokens of ``text`` for this model (offline, no download)."""
        return int(self._tokenizer().count(text))

    def get_token_ids(self, text: str) -> list[int]:
        """The model's token ids for ``text`` (offline, no download)."""
        return list(self._tokenizer().encode(text))

    def get_num_tokens_from_messages(
        self,
        messages: list[BaseMessage],
        tools: Sequence[Any] | None = None,
    ) -> int:
        """Prompt tokens of ``messages`` as rendered by the model's chat template.

        This is what llama.cpp reports as ``prompt_tokens`` for the same messages
        (including the generation prompt). Tool schemas are not supported.
        """
        if tools:
            raise InvalidInputError("ChatLlamaCpp does not support tools")
        return int(self._tokenizer().count_chat(to_llama_messages(messages)))


# -------------------------------------------------------------------------- helpers


def _pump(
    run: Callable[[Mapping[str, Any], Callable[[dict[str, Any]], bool]], None],
    request: Mapping[str, Any],
    put: Callable[[tuple[str, Any]], None],
    cancelled: threading.Event,
) -> None:
    """Run a streaming call, forwarding chunks then ``done`` (or ``error``) to ``put``.

    The chunk callback returns ``cancelled.is_set()``: llama.cpp stops generating when
    the callback returns True, so an abandoned stream frees the model quickly.
    """

    def on_chunk(chunk: dict[str, Any]) -> bool:
        put(("chunk", chunk))
        return cancelled.is_set()

    try:
        run(request, on_chunk)
    except BaseException as exc:
        put(("error", exc))
    else:
        put(("done", None))


_DONE = ChatGenerationChunk(message=AIMessageChunk(content=""))  # end-of-stream sentinel


def _next_chunk(kind: str, payload: Any) -> ChatGenerationChunk | None:
    """Turn one queued event into a chunk, ``None`` (nothing to yield) or ``_DONE``."""
    if kind == "done":
        return _DONE
    if kind == "error":
        raise payload
    return chunk_from_event(payload)
