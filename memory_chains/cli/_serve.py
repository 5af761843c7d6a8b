"""``memory-chains serve``: the reference chat web app, on uvicorn.

Serves the chat page and its API (``memory_chains.web``) over a folder of documents
(``--docs``; default: the sample knowledge base, like the demo), with every memory persisted
in ``--store`` (default ``MEMORY_CHAINS_STORE``, else the SQLite file under
``MEMORY_CHAINS_HOME``). The store is resilient: while it is down the app answers without
memory and says so. Answers wait in one queue for the model (``--queue`` may wait; one more
gets a 503 with ``Retry-After``). Needs the ``web`` extra: pip install "memory-chains[web]".

The user id is what the page sends (a field, or the X-User header): this is a reference
app, not an authenticated service; put it behind your own login for real users.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add ``serve`` to the parser."""
    from memory_chains.cli._store_args import add_docs_option, add_store_option

    parser: argparse.ArgumentParser = sub.add_parser(
        "serve",
        help="the reference chat web app (FastAPI + uvicorn)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_docs_option(parser)
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on")
    parser.add_argument("--k", type=int, default=3, help="documents retrieved per question")
    parser.add_argument(
        "--queue", type=int, default=16, help="answers that may wait for the model (then 503)"
    )
    parser.add_argument(
        "--summarizer",
        choices=("code", "model"),
        default="code",
        help="fold old turns without a model call (default) or with the model",
    )
    add_store_option(parser)
    parser.set_defaults(run=run)


def _require_web() -> None:
    from memory_chains.errors import ConfigurationError

    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise ConfigurationError(
            f"memory-chains serve needs the web extra ({exc.name} is missing): "
            'pip install "memory-chains[web]"'
        ) from exc


def run(args: argparse.Namespace) -> int:
    """Build the service and serve it until interrupted."""
    _require_web()
    import uvicorn

    from memory_chains.cli._common import index_dir_for
    from memory_chains.cli._store_args import describe_store, open_cli_store
    from memory_chains.config import load_settings
    from memory_chains.errors import ConfigurationError
    from memory_chains.knowledge import sample_kb_path
    from memory_chains.providers import describe_providers, get_chat_model, get_embeddings
    from memory_chains.web import ChatService, WebConfig, create_app

    if not 0 < args.port < 65536:
        raise ConfigurationError(f"--port must be between 1 and 65535, got {args.port}")
    settings = load_settings()
    folder = args.docs or sample_kb_path()
    config = WebConfig(documents=args.k, max_waiting=args.queue, summarizer=args.summarizer)
    print(f"[{describe_providers(settings)}]", file=sys.stderr)
    store = open_cli_store(args.store, resilient=True)
    try:
        service = ChatService.from_folder(
            folder,
            llm=get_chat_model(settings),
            embeddings=get_embeddings(settings),
            store=store,
            index_dir=index_dir_for(folder, settings),
            config=config,
        )
        print(f"[{folder} — memory: {describe_store(store)}]", file=sys.stderr)
        print(f"[chat page: http://{args.host}:{args.port}/]", file=sys.stderr)
        uvicorn.run(create_app(service), host=args.host, port=args.port, log_level="info")
    finally:
        store.close()
    return 0
