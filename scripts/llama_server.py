"""Serve a GGUF over llama.cpp's OpenAI-compatible HTTP API, with the installed ``xllamacpp``.

``xllamacpp.Server`` is llama.cpp's own server (the one ``llama-server`` runs); given a port
it listens on HTTP, with ``/v1/chat/completions``, ``/v1/embeddings``, ``/v1/models`` and
``/health``. This script only sets its parameters. Usage::

    .venv/bin/python scripts/llama_server.py                  # the embedded model, free port
    .venv/bin/python scripts/llama_server.py --port 8080 --alias qwen2.5-coder-1.5b \\
        --api-key secret --embeddings

then point the library at it::

    OPENAI_API_KEY=secret OPENAI_BASE_URL=http://127.0.0.1:8080/v1 \\
    MEMORY_CHAINS_OPENAI_MODEL=qwen2.5-coder-1.5b memory-chains models --check

Once the server listens, one JSON line goes to stdout: ``{"url": ".../v1", "model": ALIAS,
"load_seconds": S}``. It serves until SIGTERM or Ctrl-C, or, with ``--until-stdin-closes``,
until its standard input closes too (so that it does not outlive the process that started
it; the integration tests' fixture uses this, and SIGTERM to stop it at once).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, help="GGUF file (default: the embedded model)")
    parser.add_argument("--alias", default="", help="model name the server answers to")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 = a free port (default)")
    parser.add_argument("--api-key", default="", help="refuse requests without this key")
    parser.add_argument("--embeddings", action="store_true", help="serve /v1/embeddings too")
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--threads", type=int, default=0, help="0 = all cores")
    parser.add_argument("--until-stdin-closes", action="store_true")
    return parser.parse_args(argv)


def build_params(args: argparse.Namespace, model: Path) -> object:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(model)
    params.hostnames = [args.host]
    params.port = args.port
    params.n_ctx = args.n_ctx
    params.n_parallel = 1  # one slot, like the in-process model
    threads = args.threads or os.cpu_count() or 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.ui = False
    params.verbosity = -1
    if args.alias:
        params.model_alias = {args.alias}
    if args.api_key:
        params.api_keys = [args.api_key]
    if args.embeddings:
        params.embedding = True
        params.pooling_type = xllamacpp.llama_pooling_type.LLAMA_POOLING_TYPE_MEAN
        # Embeddings need a whole input in one micro-batch; 2048 covers any KB chunk.
        params.n_batch = params.n_ubatch = 2048
    return params


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import xllamacpp

    if args.model is None:
        from memory_chains.config import load_settings
        from memory_chains.providers import ensure_embedded_model

        model = ensure_embedded_model(load_settings())
    else:
        model = args.model
    start = time.perf_counter()
    server = xllamacpp.Server(build_params(args, model))
    address = str(server.listening_address).rstrip("/")
    ready = {"url": f"{address}/v1", "model": args.alias or model.name}
    ready["load_seconds"] = round(time.perf_counter() - start, 2)
    print(json.dumps(ready), flush=True)
    # SIGTERM keeps its default action, which ends the process at once even while llama.cpp
    # computes (a Python handler would wait for the interpreter lock, held meanwhile).
    if args.until_stdin_closes:
        sys.stdin.read()
    else:
        threading.Event().wait()
    del server
    # llama.cpp's threads are not joined on interpreter exit: leave at once.
    os._exit(0)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        os._exit(130)
