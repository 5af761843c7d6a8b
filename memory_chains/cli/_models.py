"""``memory-chains models``: the providers in use; check the endpoint, prepare the model.

Without options it prints what the settings select (provider, base URL, model names,
embeddings, structured-output mode), reading nothing from the network. ``--check`` asks the
configured OpenAI-compatible endpoint (:func:`memory_chains.providers.check_endpoint`) and
exits 1 when a check failed; ``--prepare`` assembles the embedded model.

Registered by the CLI like any subcommand module (``register(subparsers)``). Heavy imports
happen inside :func:`run`, so ``memory-chains --help`` stays fast.

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="memory-chains")
    >>> register(parser.add_subparsers())
    >>> parser.parse_args(["models", "--prepare"]).prepare
    True
    >>> parser.parse_args(["models", "--check"]).check
    True
"""

from __future__ import annotations

import argparse
import time
from typing import Any

__all__ = ["describe_settings", "register", "run"]


def register(sub: Any) -> None:
    """Add the ``models`` subcommand."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "models",
        help="show the chat model, embeddings and token counter in use",
        description=(
            "Print the providers selected by the settings. With --check, ask the "
            "OpenAI-compatible endpoint whether it answers, serves the models and honours "
            "response_format. With --prepare, assemble and verify the embedded model and its "
            "tokenizer now (otherwise done on first use)."
        ),
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="call the endpoint: models served, a chat call, streaming, JSON, embeddings",
    )
    parser.add_argument(
        "--prepare",
        action="store_true",
        help="assemble/verify the embedded GGUF and cache its tokenizer",
    )
    parser.set_defaults(run=run)


def describe_settings(settings: Any) -> list[str]:
    """What the settings select, one ``name: value (VARIABLE)`` line each (no I/O)."""
    from memory_chains.config import OPENAI_URL

    if not settings.use_openai:
        where = settings.model_path or "the packaged Qwen2.5-Coder-1.5B GGUF"
        return [
            "provider: embedded llama.cpp, in-process (OPENAI_API_KEY is empty)",
            f"model: {where}",
        ]
    base = settings.openai_base_url
    kind = "OpenAI" if not base or base == OPENAI_URL else "OpenAI-compatible endpoint"
    lines = [
        f"provider: {kind}",
        f"base URL: {base or OPENAI_URL} (OPENAI_BASE_URL)",
        f"chat model: {settings.openai_model} (MEMORY_CHAINS_OPENAI_MODEL)",
    ]
    if settings.use_openai_embeddings:
        lines.append(
            f"embeddings: {settings.openai_embeddings_model} at "
            f"{settings.embeddings_base_url or OPENAI_URL} (MEMORY_CHAINS_OPENAI_EMBEDDINGS_MODEL)"
        )
    else:
        lines.append("embeddings: multilingual-e5-small, local (MEMORY_CHAINS_EMBEDDINGS=e5)")
    lines.append(
        f"structured output: {settings.openai_structured} (MEMORY_CHAINS_OPENAI_STRUCTURED); "
        f"timeout {settings.openai_timeout:g} s, {settings.openai_max_retries} retries"
    )
    return lines


def run(args: argparse.Namespace) -> int:
    """Print the providers; ``--check`` the endpoint; ``--prepare`` the embedded model."""
    from memory_chains.config import load_settings
    from memory_chains.providers import GGUFTokenizer, describe_providers, ensure_embedded_model

    settings = load_settings()
    print(describe_providers(settings))
    for line in describe_settings(settings):
        print(f"  {line}")
    status = 0
    if args.check:
        from memory_chains.providers import check_endpoint

        report = check_endpoint(settings)
        for line in report.lines():
            print(line)
        status = 0 if report.ok else 1
    if not args.prepare:
        return status
    if settings.use_openai:
        print("OpenAI is configured: no local chat model to prepare.")
        return status
    start = time.perf_counter()
    path = ensure_embedded_model(settings)
    print(
        f"model: {path} ({path.stat().st_size / 1e9:.2f} GB, {time.perf_counter() - start:.1f} s)"
    )
    start = time.perf_counter()
    tokenizer = GGUFTokenizer.for_file(path, cache_dir=settings.cache_dir / "tokenizers")
    elapsed = time.perf_counter() - start
    print(f"tokenizer: {tokenizer.pre}, ready in {elapsed:.1f} s")
    return status
