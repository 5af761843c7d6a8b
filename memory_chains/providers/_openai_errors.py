"""Errors of an OpenAI-compatible endpoint, mapped onto :mod:`memory_chains.errors` (pure).

:class:`Endpoint` names where calls go (for messages that say which variable to change);
:func:`map_openai_error` turns an exception of the ``openai`` SDK (or langchain-openai's
subclasses of them) into the library's typed error; :func:`rejects_response_format` tells
whether a server refused the ``response_format`` it was sent, so that the caller can ask
again with a weaker one.

The SDK has already retried connection errors, timeouts, 408/409/429 and 5xx answers
``max_retries`` times with exponential backoff (``Retry-After`` honoured) when one of them
reaches :func:`map_openai_error`. :func:`dropped_unanswered` tells the one connection error
that is safe to send again even when retries are off: a kept-alive connection the server
closed before answering.

Example:
    >>> import httpx2, openai
    >>> endpoint = Endpoint("http://127.0.0.1:8080/v1", "qwen", timeout=30, max_retries=2)
    >>> request = httpx2.Request("POST", "http://127.0.0.1:8080/v1/chat/completions")
    >>> error = map_openai_error(openai.APIConnectionError(request=request), endpoint)
    >>> type(error).__name__, str(error).split(":")[0]
    ('EndpointUnreachableError', 'cannot reach http')
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx2
import openai

from memory_chains.config import OPENAI_URL
from memory_chains.errors import (
    EndpointAuthenticationError,
    EndpointUnreachableError,
    MemoryChainsError,
    ModelCallError,
    ModelNotServedError,
    ModelRateLimitError,
    ModelTimeoutError,
    ModelUnavailableError,
)

__all__ = ["Endpoint", "dropped_unanswered", "map_openai_error", "rejects_response_format"]

# Words of the refusals seen from servers without (full) structured-output support: vLLM
# without guided decoding, LM Studio before json_object, llama.cpp's grammar converter,
# LocalAI, proxies in front of models without it.
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "grammar", "structured")


@dataclass(frozen=True)
class Endpoint:
    """Where the calls of one chat model or embeddings go, as error messages tell it.

    Attributes:
        base_url: the endpoint (``""`` means OpenAI's own).
        model: the model name sent with every call.
        timeout: seconds allowed for one answer.
        max_retries: retries the SDK makes before giving up.
        model_variable: the setting that holds ``model``.
        url_variable: the setting that holds ``base_url``.
    """

    base_url: str
    model: str
    timeout: float
    max_retries: int
    model_variable: str = "MEMORY_CHAINS_OPENAI_MODEL"
    url_variable: str = "OPENAI_BASE_URL"

    @property
    def url(self) -> str:
        """The URL calls go to."""
        return self.base_url or OPENAI_URL

    @property
    def is_openai(self) -> bool:
        """True for OpenAI's own API (tiktoken counts its tokens; others differ)."""
        return self.url.rstrip("/") == OPENAI_URL


def _detail(exc: BaseException) -> str:
    """The server's own message (or the transport's, for a connection error)."""
    if isinstance(exc, openai.APIConnectionError):
        cause: BaseException = exc
        while isinstance(cause, openai.APIConnectionError) and cause.__cause__ is not None:
            cause = cause.__cause__  # langchain-openai re-raises the SDK's error from it
        if cause is not exc:
            return f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__
    message = getattr(exc, "message", None) or str(exc)
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            message = str(inner["message"])
        elif isinstance(inner, str):
            message = inner
    return " ".join(message.split())[:300]


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def rejects_response_format(exc: BaseException) -> bool:
    """True when ``exc`` is a server's refusal of the ``response_format`` it was sent."""
    if not isinstance(exc, openai.APIStatusError) or _status(exc) not in (400, 422, 500, 501):
        return False
    detail = _detail(exc).lower()
    return any(word in detail for word in _FORMAT_WORDS)


def dropped_unanswered(exc: BaseException) -> bool:
    """True when the server closed the connection without sending a byte of an answer.

    A server closes a kept-alive connection when it wants (after a streamed answer, after
    some idle seconds); a client that takes that connection from its pool at the same moment
    sends its request into a closed socket. Nothing was answered, so sending the call once
    more, on a new connection, is safe whatever ``max_retries`` says (browsers and urllib3 do
    the same). A connection cut in the middle of an answer is not this case.

    Example:
        >>> import httpx2, openai
        >>> request = httpx2.Request("POST", "http://127.0.0.1:8080/v1/chat/completions")
        >>> def failed(cause: Exception) -> openai.APIConnectionError:
        ...     try:
        ...         raise openai.APIConnectionError(request=request) from cause
        ...     except openai.APIConnectionError as exc:
        ...         return exc
        >>> dropped_unanswered(failed(httpx2.RemoteProtocolError(
        ...     "Server disconnected without sending a response.")))
        True
        >>> dropped_unanswered(failed(httpx2.ConnectError("Connection refused")))
        False
    """
    if not isinstance(exc, openai.APIConnectionError) or isinstance(exc, openai.APITimeoutError):
        return False
    cause = exc.__cause__
    while isinstance(cause, openai.APIConnectionError):  # langchain-openai re-raises it
        cause = cause.__cause__
    if not isinstance(cause, httpx2.RemoteProtocolError):
        return False
    return "without sending a response" in str(cause)  # httpcore's words for this case


def map_openai_error(exc: BaseException, endpoint: Endpoint) -> MemoryChainsError:
    """The library's error for ``exc`` (to raise ``from exc``), its message saying what to do.

    ========================================  =========================================
    the endpoint                              error
    ========================================  =========================================
    does not answer (refused, DNS, TLS)       :class:`EndpointUnreachableError`
    answers too slowly                        :class:`ModelTimeoutError`
    401 / 403                                 :class:`EndpointAuthenticationError`
    404 naming the model                      :class:`ModelNotServedError`
    404 otherwise, 501                        :class:`ModelUnavailableError`
    429 after the retries                     :class:`ModelRateLimitError`
    anything else                             :class:`ModelCallError`
    ========================================  =========================================
    """
    if isinstance(exc, MemoryChainsError):
        return exc
    where, detail, status = endpoint.url, _detail(exc), _status(exc)
    retried = f"after {endpoint.max_retries} retries" if endpoint.max_retries else "no retry"
    # TimeoutError: langchain-openai's wait for a streamed chunk (stream_chunk_timeout)
    if isinstance(exc, (openai.APITimeoutError, TimeoutError)):
        return ModelTimeoutError(
            f"{where} did not answer within {endpoint.timeout:g} s ({retried}); raise "
            "MEMORY_CHAINS_OPENAI_TIMEOUT for a slow server, or ask for fewer tokens"
        )
    if isinstance(exc, openai.APIConnectionError):
        return EndpointUnreachableError(
            f"cannot reach {where} ({detail}; {retried}): is the server running, and is "
            f"{endpoint.url_variable} right?"
        )
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return EndpointAuthenticationError(
            f"{where} refused the API key ({status}: {detail}): check OPENAI_API_KEY"
        )
    if isinstance(exc, openai.RateLimitError):
        return ModelRateLimitError(
            f"{where} is rate limiting ({detail}), still 429 {retried} with backoff: slow "
            "down, check the account's quota, or raise MEMORY_CHAINS_OPENAI_MAX_RETRIES"
        )
    if isinstance(exc, openai.NotFoundError):
        if "model" in detail.lower():
            return ModelNotServedError(
                f"{where} does not serve the model {endpoint.model!r} ({detail}): set "
                f"{endpoint.model_variable} to a model it serves (memory-chains models "
                "--check lists them)"
            )
        return ModelUnavailableError(
            f"{where} has no such route (404: {detail}): {endpoint.url_variable} usually "
            "ends with /v1"
        )
    if isinstance(exc, openai.APIStatusError) and status == 501:
        return ModelUnavailableError(
            f"{where} does not implement this call (501: {detail}); for embeddings, "
            "MEMORY_CHAINS_EMBEDDINGS=e5 computes them locally"
        )
    if isinstance(exc, openai.APIStatusError):
        hint = ""
        if "context" in detail.lower() or "too long" in detail.lower():
            hint = " (the prompt is longer than the model's context: shorten it)"
        return ModelCallError(f"{where} answered {status}: {detail}{hint}")
    return ModelCallError(f"the call to {where} failed: {type(exc).__name__}: {detail}")
