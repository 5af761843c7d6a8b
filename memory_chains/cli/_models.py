"""``memory-chains models``: show the providers in use, and prepare the embedded model.

Registered by the CLI like any subcommand module (``register(subparsers)``). Heavy imports
happen inside :func:`run`, so ``memory-chains --help`` stays fast.

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="memory-chains")
    >>> register(parser.add_subparsers())
    >>> parser.parse_args(["models", "--prepare"]).prepare
    True
"""

from __future__ import annotations

import argparse
import time
from typing import Any

__all__ = ["register", "run"]


def register(sub: Any) -> None:
    """Add the ``models`` subcommand."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "models",
        help="show the chat model, embeddings and token counter in use",
        description=(
            "Print the providers selected by the settings. With --prepare, assemble and "
            "verify the embedded model and its tokenizer now (otherwise done on first use)."
        ),
    )
    parser.add_argument(
        "--prepare",
        action="store_true",
        help="assemble/verify the embedded GGUF and cache its tokenizer",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the providers line; with ``--prepare``, make the embedded model ready."""
    from memory_chains.config import load_settings
    from memory_chains.providers import GGUFTokenizer, describe_providers, ensure_embedded_model

    settings = load_settings()
    print(describe_providers(settings))
    if not args.prepare:
        return 0
    if settings.use_openai:
        print("OpenAI is configured: no local chat model to prepare.")
        return 0
    start = time.perf_counter()
    path = ensure_embedded_model(settings)
    print(
        f"model: {path} ({path.stat().st_size / 1e9:.2f} GB, {time.perf_counter() - start:.1f} s)"
    )
    start = time.perf_counter()
    tokenizer = GGUFTokenizer.for_file(path, cache_dir=settings.cache_dir / "tokenizers")
    elapsed = time.perf_counter() - start
    print(f"tokenizer: {tokenizer.pre}, ready in {elapsed:.1f} s")
    return 0
