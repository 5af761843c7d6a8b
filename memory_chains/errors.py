"""The exceptions memory_chains raises, in one hierarchy.

Every error the library raises on purpose derives from :class:`MemoryChainsError`, so an
application can catch the whole family with one ``except``. Driver and model errors are
mapped onto this tree with ``raise ... from exc`` so the original cause stays attached.

::

    MemoryChainsError
    ├── ConfigurationError          a setting, path or option is wrong
    ├── InvalidInputError           (also ValueError) bad message, id or argument
    ├── ModelError                  anything about a chat or embeddings model
    │   ├── ModelUnavailableError   the model cannot be found, assembled or loaded
    │   │   └── ModelIntegrityError the model file's sha256 is not the expected one
    │   ├── ModelCallError          a call to the model failed (nothing was memorised)
    │   └── MalformedOutputError    the model answered, but not in the required shape
    ├── KnowledgeBaseError          indexing or loading a knowledge base failed
    │   └── IndexCorruptedError     an index on disk is truncated, tampered or foreign
    ├── StoreError                  a memory store failed
    │   ├── StoreUnavailableError   the store cannot be reached
    │   └── SchemaVersionError      the store's schema is newer than this library
    └── ServiceBusyError            the model's queue is full: retry after ``retry_after`` s

    UserWarning
    └── StoreUnavailableWarning     a resilient store went down: answering without memory

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
    "IndexCorruptedError",
    "InvalidInputError",
    "KnowledgeBaseError",
    "MalformedOutputError",
    "MemoryChainsError",
    "ModelCallError",
    "ModelError",
    "ModelIntegrityError",
    "ModelUnavailableError",
    "SchemaVersionError",
    "ServiceBusyError",
    "StoreError",
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


class ModelCallError(ModelError):
    """A model call failed. Memory is left exactly as it was before the call."""


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
