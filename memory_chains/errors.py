"""The exceptions memory_chains raises, in one hierarchy.

Every error the library raises on purpose derives from :class:`MemoryChainsError`, so an
application can catch the whole family with one ``except``. Driver, model and validation
errors (``sqlite3``, ``redis``, ``psycopg``, pydantic's ``ValidationError`` from the
LangChain shells, ``OverflowError``, ``RecursionError`` from a file nested too deep) are
mapped onto this tree with ``raise ... from exc`` so the original cause stays attached:
a public entry point raises nothing else (besides ``KeyboardInterrupt`` and the like).

::

    MemoryChainsError
    ├── ConfigurationError                 a setting, path or option is wrong
    ├── InvalidInputError                  (also ValueError) bad message, id or argument
    ├── ModelError                         anything about a chat or embeddings model
    │   ├── ModelUnavailableError          the model cannot be found, assembled or loaded
    │   │   ├── ModelIntegrityError        the model file's sha256 is not the expected one
    │   │   ├── EndpointUnreachableError   no server answers at the endpoint's URL
    │   │   ├── EndpointAuthenticationError  the endpoint refused the API key (401, 403)
    │   │   └── ModelNotServedError        the endpoint does not serve that model name
    │   ├── ModelCallError                 a call to the model failed (nothing was memorised)
    │   │   ├── ModelRateLimitError        still 429 after the bounded, backed-off retries
    │   │   └── ModelTimeoutError          no answer within the timeout
    │   └── MalformedOutputError           the model answered, but not in the required shape
    ├── KnowledgeBaseError                 indexing or loading a knowledge base failed
    │   └── IndexCorruptedError            an index on disk is truncated, tampered or foreign
    ├── StoreError                         a memory store failed
    │   ├── StoreUnavailableError          the store cannot be reached
    │   ├── StoreNotFoundError             no store at that path or URL (nothing was created)
    │   ├── ReadOnlyStoreError             a write to a store opened read-only
    │   ├── ForgottenError                 a write for a user or session that was forgotten
    │   └── SchemaVersionError             the store's schema is newer than this library
    └── ServiceBusyError                   the model's queue is full: retry after ``retry_after`` s

    UserWarning
    └── StoreUnavailableWarning            a resilient store went down: answering without memory

Example:
    >>> from memory_chains.errors import InvalidInputError, MemoryChainsError
    >>> issubclass(InvalidInputError, MemoryChainsError)
    True
    >>> issubclass(InvalidInputError, ValueError)
    True
"""

from __future__ import annotations

__all__ = [
    "ConfigurationError",
    "EndpointAuthenticationError",
    "EndpointUnreachableError",
    "ForgottenError",
    "IndexCorruptedError",
    "InvalidInputError",
    "KnowledgeBaseError",
    "MalformedOutputError",
    "MemoryChainsError",
    "ModelCallError",
    "ModelError",
    "ModelIntegrityError",
    "ModelNotServedError",
    "ModelRateLimitError",
    "ModelTimeoutError",
    "ModelUnavailableError",
    "ReadOnlyStoreError",
    "SchemaVersionError",
    "ServiceBusyError",
    "StoreError",
    "StoreNotFoundError",
    "StoreUnavailableError",
    "StoreUnavailableWarning",
]


class MemoryChainsError(Exception):
    """Base class of every error raised by memory_chains."""


class ConfigurationError(MemoryChainsError):
    """A setting, path or option is wrong; the message names it and what to do."""


class InvalidInputError(MemoryChainsError, ValueError):
    """A message, id or argument was rejected before anything was stored."""


class ModelError(MemoryChainsError):
    """Something went wrong with a chat model or an embeddings model."""


class ModelUnavailableError(ModelError):
    """The model cannot be found, assembled or loaded."""


class ModelIntegrityError(ModelUnavailableError):
    """A model file does not have the expected sha256; it is refused, never loaded."""


class EndpointUnreachableError(ModelUnavailableError):
    """No server answers at an OpenAI-compatible endpoint (refused, DNS, TLS, reset)."""


class EndpointAuthenticationError(ModelUnavailableError):
    """The endpoint refused the API key (HTTP 401 or 403): check ``OPENAI_API_KEY``."""


class ModelNotServedError(ModelUnavailableError):
    """The endpoint does not serve the model name that was asked for.

    Attributes:
        served: the model names the endpoint lists, when it was asked (may be empty).
    """

    def __init__(self, message: str, served: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.served = served


class ModelCallError(ModelError):
    """A model call failed. Memory is left exactly as it was before the call."""


class ModelRateLimitError(ModelCallError):
    """The endpoint answered 429 (rate limit or quota) to every bounded, backed-off retry."""


class ModelTimeoutError(ModelCallError):
    """The model did not answer within the configured timeout."""


class MalformedOutputError(ModelError):
    """The model answered, but the answer could not be repaired into the required shape.

    Attributes:
        raw: the model's raw answer, kept so that nothing is silently dropped.
    """

    def __init__(self, message: str, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw


class KnowledgeBaseError(MemoryChainsError):
    """Indexing or loading a knowledge base failed."""


class IndexCorruptedError(KnowledgeBaseError):
    """An index on disk is truncated, tampered with or was not written by this library."""


class StoreError(MemoryChainsError):
    """A memory store failed."""


class StoreUnavailableError(StoreError):
    """The store cannot be reached (file locked, server down)."""


class StoreNotFoundError(StoreError):
    """A command that only works on an existing store (export, list, forget…) was pointed
    at a path or URL that holds none; nothing was created there."""


class ReadOnlyStoreError(StoreError):
    """A write was attempted on a store opened with ``read_only=True``; nothing changed."""


class ForgottenError(StoreError):
    """A write for a user (or a session) that was forgotten: the store holds a tombstone
    for them, and refuses to store anything about them until the application re-admits
    them (:func:`~memory_chains.stores.readmit_user`). Nothing was written.

    Attributes:
        user_id: the forgotten user.
        session_id: the forgotten session, or ``None`` when the whole user was forgotten.
        forgotten_at: UNIX time of the forgetting.
    """

    def __init__(
        self, message: str, user_id: str = "", session_id: str | None = None, at: float = 0.0
    ) -> None:
        super().__init__(message)
        self.user_id = user_id
        self.session_id = session_id
        self.forgotten_at = at


class SchemaVersionError(StoreError):
    """The store's schema is newer than this version of the library understands."""


class ServiceBusyError(MemoryChainsError):
    """Too many requests wait for the model; nothing was run or stored.

    Attributes:
        retry_after: seconds after which trying again is likely to be admitted.

    Example:
        >>> ServiceBusyError("busy", retry_after=3).retry_after
        3
    """

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class StoreUnavailableWarning(UserWarning):
    """A :class:`~memory_chains.stores.ResilientStore` lost its store: until it answers
    again, reads return nothing and writes are dropped (counted). Issued once per outage.

    Example:
        >>> issubclass(StoreUnavailableWarning, UserWarning)
        True
    """
