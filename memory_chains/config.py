"""Settings read from the environment (and a ``.env`` file), in one place.

:class:`Settings` is a frozen value; :func:`load_settings` builds it from ``os.environ``
after loading ``.env`` from the current directory (existing variables win). Every variable
is documented in ``.env.example``.

Example:
    >>> s = Settings.from_env({"MEMORY_CHAINS_HOME": "/tmp/mc", "OPENAI_API_KEY": ""})
    >>> s.use_openai, str(s.home)
    (False, '/tmp/mc')
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, cast, get_args
from urllib.parse import quote

from memory_chains.errors import ConfigurationError

__all__ = [
    "EMBEDDINGS_PROVIDERS",
    "OPENAI_URL",
    "STRUCTURED_MODES",
    "Settings",
    "StructuredMode",
    "load_settings",
]

_LOG_LEVELS = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG")
#: OpenAI's own endpoint, used when OPENAI_BASE_URL is empty
OPENAI_URL = "https://api.openai.com/v1"
#: values of MEMORY_CHAINS_EMBEDDINGS ("" = OpenAI when a key is set, else e5)
EMBEDDINGS_PROVIDERS = ("", "openai", "e5")
StructuredMode = Literal["auto", "json_schema", "json_object", "prompt"]
#: values of MEMORY_CHAINS_OPENAI_STRUCTURED
STRUCTURED_MODES: tuple[StructuredMode, ...] = get_args(StructuredMode)


@dataclass(frozen=True)
class Settings:
    """Everything memory_chains reads from the environment.

    Attributes:
        openai_api_key: when non-empty, OpenAI models are the default providers.
        openai_model: chat model name for OpenAI.
        openai_embeddings_model: embeddings model name for OpenAI.
        openai_base_url: optional OpenAI-compatible endpoint (Ollama, vLLM, LM Studio,
            llama.cpp server…), e.g. ``http://127.0.0.1:8080/v1``.
        openai_embeddings_base_url: the embeddings endpoint when it is not
            ``openai_base_url`` (a vLLM server serves one model).
        embeddings_provider: ``"openai"``, ``"e5"`` (local embeddings, also with a chat
            endpoint: the mixed setup) or ``""`` (OpenAI when a key is set, else e5).
        openai_timeout: seconds to wait for one answer of the endpoint.
        openai_max_retries: retries of a call that failed with a connection error, a
            timeout, 429 or 5xx, with exponential backoff (``Retry-After`` honoured).
        openai_structured: how JSON answers are asked for: ``"json_schema"``
            (``response_format``), ``"json_object"``, ``"prompt"`` (the schema in the
            prompt only), or ``"auto"``: json_schema, stepping down once for an endpoint
            that rejects it.
        model_path: a GGUF file to use instead of the packaged Qwen model.
        home: the one data directory for everything the library writes (caches, indexes,
            the default store).
        store_url: where memories are persisted (``sqlite:///path`` by default).
        log_level: level of the ``memory_chains`` logger.
        n_ctx: context window of the embedded model.
        n_threads: CPU threads of the embedded model (0 = all cores).
    """

    openai_api_key: str = field(default="", repr=False)  # a secret: never in a repr
    openai_model: str = "gpt-4o-mini"
    openai_embeddings_model: str = "text-embedding-3-small"
    openai_base_url: str = ""
    openai_embeddings_base_url: str = ""
    embeddings_provider: str = ""
    openai_timeout: float = 120.0
    openai_max_retries: int = 2
    openai_structured: StructuredMode = "auto"
    model_path: Path | None = None
    home: Path = Path.home() / ".memory_chains"
    store_url: str = ""
    log_level: str = "WARNING"
    n_ctx: int = 4096
    n_threads: int = 0

    @property
    def use_openai(self) -> bool:
        """True when an OpenAI key is configured."""
        return bool(self.openai_api_key.strip())

    @property
    def use_openai_embeddings(self) -> bool:
        """True when embeddings come from the OpenAI(-compatible) endpoint."""
        if self.embeddings_provider:
            return self.embeddings_provider == "openai"
        return self.use_openai

    @property
    def embeddings_base_url(self) -> str:
        """The embeddings endpoint: its own URL, else the chat one (``""`` = OpenAI's)."""
        return self.openai_embeddings_base_url or self.openai_base_url

    @property
    def cache_dir(self) -> Path:
        """Where the assembled model and other caches live."""
        return self.home / "cache"

    @property
    def default_store_path(self) -> Path:
        """The SQLite file used when no store URL is set: ``memory.sqlite3`` under home."""
        return self.home / "memory.sqlite3"

    @property
    def default_store_url(self) -> str:
        """The store URL, defaulting to the SQLite file under :attr:`home`.

        The path is percent-encoded, so that decoding the URL gives it back exactly: a
        home named ``a%2e%2e`` stays ``a%2e%2e``, never ``a..``.

        Example:
            >>> Settings(home=Path("/srv/mc%2e%2e")).default_store_url
            'sqlite:////srv/mc%252e%252e/memory.sqlite3'
        """
        return self.store_url or "sqlite:///" + quote(str(self.default_store_path), safe="/")

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        """Build settings from a mapping of environment variables.

        Raises:
            ConfigurationError: a value cannot be parsed (the message names the variable).
        """
        level = env.get("MEMORY_CHAINS_LOG_LEVEL", "WARNING").strip().upper() or "WARNING"
        if level not in _LOG_LEVELS:
            raise ConfigurationError(
                f"MEMORY_CHAINS_LOG_LEVEL={level!r} is not one of {', '.join(_LOG_LEVELS)}"
            )
        model_path = env.get("MEMORY_CHAINS_MODEL_PATH", "").strip()
        home = env.get("MEMORY_CHAINS_HOME", "").strip()
        for name, value in (("MEMORY_CHAINS_HOME", home), ("MEMORY_CHAINS_MODEL_PATH", model_path)):
            if "\x00" in value:
                raise ConfigurationError(f"{name} holds a NUL character")
        api_key = env.get("OPENAI_API_KEY", "").strip()
        embeddings = _choice(env, "MEMORY_CHAINS_EMBEDDINGS", EMBEDDINGS_PROVIDERS, "")
        if embeddings == "openai" and not api_key:
            raise ConfigurationError(
                "MEMORY_CHAINS_EMBEDDINGS=openai needs OPENAI_API_KEY (any non-empty value "
                "for a local server that checks no key)"
            )
        return cls(
            openai_api_key=api_key,
            openai_model=env.get("MEMORY_CHAINS_OPENAI_MODEL", "").strip() or cls.openai_model,
            openai_embeddings_model=env.get("MEMORY_CHAINS_OPENAI_EMBEDDINGS_MODEL", "").strip()
            or cls.openai_embeddings_model,
            openai_base_url=_url(env, "OPENAI_BASE_URL"),
            openai_embeddings_base_url=_url(env, "MEMORY_CHAINS_OPENAI_EMBEDDINGS_BASE_URL"),
            embeddings_provider=embeddings,
            openai_timeout=_seconds(env, "MEMORY_CHAINS_OPENAI_TIMEOUT", cls.openai_timeout),
            openai_max_retries=_int(
                env, "MEMORY_CHAINS_OPENAI_MAX_RETRIES", cls.openai_max_retries
            ),
            openai_structured=cast(
                StructuredMode,
                _choice(env, "MEMORY_CHAINS_OPENAI_STRUCTURED", STRUCTURED_MODES, "auto"),
            ),
            model_path=Path(model_path).expanduser() if model_path else None,
            home=Path(home).expanduser() if home else Path.home() / ".memory_chains",
            store_url=env.get("MEMORY_CHAINS_STORE", "").strip(),
            log_level=level,
            n_ctx=_int(env, "MEMORY_CHAINS_N_CTX", cls.n_ctx),
            n_threads=_int(env, "MEMORY_CHAINS_N_THREADS", cls.n_threads),
        )


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ConfigurationError(f"{name}={raw!r} is not an integer") from exc
    if not 0 <= value < 2**31:  # both are C ints in llama.cpp
        raise ConfigurationError(f"{name}={raw!r} must be in 0 … {2**31 - 1}")
    return value


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError as exc:
        raise ConfigurationError(f"{name}={raw!r} is not a number of seconds") from exc
    if not value > 0 or value == float("inf"):
        raise ConfigurationError(f"{name}={raw!r} must be a positive number of seconds")
    return value


def _choice(env: Mapping[str, str], name: str, choices: tuple[str, ...], default: str) -> str:
    raw = env.get(name, "").strip().lower() or default
    if raw not in choices:
        shown = ", ".join(c for c in choices if c)
        raise ConfigurationError(f"{name}={raw!r} is not one of {shown}")
    return raw


def _url(env: Mapping[str, str], name: str) -> str:
    raw = env.get(name, "").strip().rstrip("/")
    if raw and not raw.startswith(("http://", "https://")):
        raise ConfigurationError(
            f"{name}={raw!r} is not an http(s) URL (for example http://127.0.0.1:8080/v1)"
        )
    return raw


def load_settings(dotenv_path: str | os.PathLike[str] | None = None) -> Settings:
    """Load ``.env`` (if present) into the environment, then read :class:`Settings`.

    Variables already set in the environment are not overridden by the file.
    """
    from dotenv import load_dotenv

    load_dotenv(dotenv_path=dotenv_path or Path.cwd() / ".env", override=False)
    settings = Settings.from_env(os.environ)
    logging.getLogger("memory_chains").setLevel(settings.log_level)
    return settings
