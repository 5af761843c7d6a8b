"""Ask the configured OpenAI-compatible endpoint whether the library can work with it.

:func:`check_endpoint` lists the served models, makes one tiny chat call, one streamed call,
one ``json_schema`` call and one embeddings call (when embeddings come from the endpoint),
each reported as a :class:`Check`; :class:`EndpointReport` gathers them. This is what
``memory-chains models --check`` prints. Each call asks for a handful of tokens.

Example:
    >>> from memory_chains.config import Settings
    >>> report = check_endpoint(Settings(openai_api_key=""))
    >>> report.ok, report.checks[0].name
    (True, 'endpoint')
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Literal

from memory_chains.config import Settings, load_settings
from memory_chains.errors import MemoryChainsError, ModelNotServedError

__all__ = ["Check", "EndpointReport", "check_endpoint"]

_PROBE_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
}


@dataclass(frozen=True)
class Check:
    """One finding: what was checked, ``ok`` / ``warning`` / ``failed``, and the detail."""

    name: str
    status: Literal["ok", "warning", "failed"]
    detail: str


@dataclass(frozen=True)
class EndpointReport:
    """Everything :func:`check_endpoint` found, in the order it was checked.

    Example:
        >>> report = EndpointReport((Check("chat", "ok", "answered"),))
        >>> report.ok, report.lines()
        (True, ['[ok] chat: answered'])
    """

    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        """True when nothing failed (warnings allowed)."""
        return all(check.status != "failed" for check in self.checks)

    def lines(self) -> list[str]:
        """One line per check, for a terminal."""
        return [f"[{c.status}] {c.name}: {c.detail}" for c in self.checks]


def _listed(name: str, served: Sequence[str]) -> bool:
    """True when ``name`` is one of the ids an endpoint lists, as servers spell them.

    Ollama adds ``:latest``; llama.cpp without an alias lists the GGUF path.
    """
    for model_id in served:
        stem = PurePosixPath(model_id).name
        if name in (model_id, stem, stem.removesuffix(".gguf"), model_id.removesuffix(":latest")):
            return True
    return False


def _served(base_url: str, settings: Settings) -> tuple[list[str] | None, MemoryChainsError | None]:
    """The ids ``base_url`` lists (``None`` when it has no /models), or the error."""
    import openai

    from memory_chains.providers._openai_errors import Endpoint, map_openai_error

    client = openai.OpenAI(
        api_key=settings.openai_api_key,
        base_url=base_url or None,
        timeout=settings.openai_timeout,
        max_retries=0,
    )
    try:
        return [m.id for m in client.models.list()], None
    except openai.NotFoundError:
        return None, None
    except openai.OpenAIError as exc:
        endpoint = Endpoint(base_url, settings.openai_model, settings.openai_timeout, 0)
        return None, map_openai_error(exc, endpoint)
    finally:
        client.close()


def _model_check(what: str, name: str, variable: str, url: str, served: list[str] | None) -> Check:
    if served is None:
        return Check(what, "warning", f"{name} ({variable}); the endpoint lists no models")
    if _listed(name, served):
        return Check(what, "ok", f"{name} ({variable}) is served")
    error = ModelNotServedError(
        f"{url} does not list {name!r} ({variable}); it serves: {', '.join(served) or 'nothing'}",
        served=tuple(served),
    )
    return Check(what, "failed", str(error))


def _chat_checks(settings: Settings) -> list[Check]:
    from langchain_core.messages import HumanMessage

    from memory_chains.providers import get_chat_model
    from memory_chains.providers._openai_errors import rejects_response_format

    model: Any = get_chat_model(dataclasses.replace(settings, openai_max_retries=0), max_tokens=8)
    prompt = [HumanMessage("Reply with the single word OK.")]
    checks = []
    try:
        start = time.perf_counter()
        reply = model.invoke(prompt)
        elapsed = time.perf_counter() - start
    except MemoryChainsError as exc:
        return [Check("chat", "failed", str(exc))]
    usage = reply.usage_metadata or {}
    if usage.get("input_tokens"):
        checks.append(
            Check(
                "chat",
                "ok",
                f"answered {reply.text.strip()[:40]!r} in {elapsed:.1f} s "
                f"({usage['input_tokens']} prompt + {usage.get('output_tokens', 0)} answer "
                "tokens, as the server counts them)",
            )
        )
    else:
        checks.append(Check("chat", "warning", "answered, but reported no token usage"))
    try:
        chunks = list(model.stream(prompt))
    except MemoryChainsError as exc:
        checks.append(Check("streaming", "failed", str(exc)))
    else:
        streamed = any(getattr(c, "usage_metadata", None) for c in chunks)
        checks.append(
            Check("streaming", "ok", f"{len(chunks)} chunks, token usage reported")
            if streamed
            else Check("streaming", "warning", f"{len(chunks)} chunks, no token usage")
        )
    checks.append(_structured_check(model, settings, rejects_response_format))
    return checks


def _structured_check(model: Any, settings: Settings, rejects: Any) -> Check:
    if settings.openai_structured == "prompt":
        return Check("structured output", "ok", "JSON asked in the prompt only (as configured)")
    strict = model.model_copy(update={"structured": "json_schema", "max_tokens": 24})
    fmt = {"type": "json_schema", "json_schema": {"name": "probe", "schema": _PROBE_SCHEMA}}
    try:
        reply = strict.invoke("What colour is the sky? Answer in JSON.", response_format=fmt)
    except MemoryChainsError as exc:
        if not rejects(exc.__cause__):
            return Check("structured output", "failed", str(exc))
        if settings.openai_structured == "auto":
            return Check(
                "structured output",
                "warning",
                f"json_schema refused ({exc}); the library steps down to json_object, then "
                "to JSON asked in the prompt (MEMORY_CHAINS_OPENAI_STRUCTURED=auto)",
            )
        return Check(
            "structured output",
            "failed",
            f"json_schema refused ({exc}); set MEMORY_CHAINS_OPENAI_STRUCTURED=auto or prompt",
        )
    try:
        parsed = json.loads(reply.text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and "answer" in parsed:
        return Check("structured output", "ok", "response_format json_schema is honoured")
    return Check(
        "structured output",
        "warning",
        f"the answer does not follow the schema ({reply.text[:60]!r}): the server seems to "
        "ignore response_format; the library repairs what it can "
        "(MEMORY_CHAINS_OPENAI_STRUCTURED=prompt states the schema in the prompt)",
    )


def _embeddings_checks(settings: Settings, chat_served: list[str] | None) -> list[Check]:
    from memory_chains.providers import get_embeddings

    if not settings.use_openai_embeddings:
        return [
            Check("embeddings", "ok", "multilingual-e5-small, local (MEMORY_CHAINS_EMBEDDINGS)")
        ]
    url = settings.embeddings_base_url
    checks = []
    served = chat_served
    if url != settings.openai_base_url:
        served, error = _served(url, settings)
        if error is not None:
            return [Check("embeddings", "failed", str(error))]
    checks.append(
        _model_check(
            "embeddings model",
            settings.openai_embeddings_model,
            "MEMORY_CHAINS_OPENAI_EMBEDDINGS_MODEL",
            url,
            served,
        )
    )
    embeddings = get_embeddings(dataclasses.replace(settings, openai_max_retries=0))
    try:
        start = time.perf_counter()
        vector = embeddings.embed_query("ping")
        elapsed = time.perf_counter() - start
    except MemoryChainsError as exc:
        checks.append(Check("embeddings", "failed", str(exc)))
    else:
        checks.append(Check("embeddings", "ok", f"dimension {len(vector)}, {elapsed:.1f} s"))
    return checks


def check_endpoint(settings: Settings | None = None) -> EndpointReport:
    """Check the endpoint of ``settings`` (default: :func:`load_settings`).

    Without an OpenAI key there is no endpoint: the report says so and is ``ok``. The
    calls are made without retries, so that a failure shows at once.
    """
    settings = settings if settings is not None else load_settings()
    if not settings.use_openai:
        return EndpointReport(
            (Check("endpoint", "ok", "none: the chat model runs in-process (no OPENAI_API_KEY)"),)
        )
    from memory_chains.config import OPENAI_URL

    url = settings.openai_base_url or OPENAI_URL
    served, error = _served(settings.openai_base_url, settings)
    if error is not None:
        return EndpointReport((Check("endpoint", "failed", str(error)),))
    listed = "no /models listing" if served is None else f"serves {', '.join(served) or 'nothing'}"
    checks = [
        Check("endpoint", "ok", f"{url} answers, {listed}"),
        _model_check(
            "chat model", settings.openai_model, "MEMORY_CHAINS_OPENAI_MODEL", url, served
        ),
    ]
    checks += _chat_checks(settings)
    checks += _embeddings_checks(settings, served)
    return EndpointReport(tuple(checks))
