"""``memory-chains chat --docs DIR``: chat with a folder of documents, with memory.

Interactive by default (answers stream); ``--once "message"`` answers one message and exits,
for scripts. Commands inside the chat: ``/memory`` shows what the memory holds, ``/sources``
the sources of the last answer, ``/forget`` empties the memory, ``/quit`` leaves.

Without ``--store``, ``--user`` or ``--session`` the memory lives in the process only. With
any of them the conversation persists in the store (``--store URL``, default
``MEMORY_CHAINS_STORE`` or the SQLite file under ``MEMORY_CHAINS_HOME``) for user
``--user`` (default ``default``): ``--session S`` continues (or starts) session S,
otherwise the user's latest active session is resumed, or a new one started. The prompt
gets the last 10 exchanges.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["register"]

_HELP = "commands: /memory  /sources  /forget  /quit"
#: exchanges a persistent chat puts in the prompt
PERSISTENT_WINDOW = 10


def register(sub: Any) -> None:
    """Add ``chat`` to the parser."""
    from memory_chains.cli._common import add_model_options
    from memory_chains.cli._store_args import add_docs_option, add_store_options

    parser: argparse.ArgumentParser = sub.add_parser(
        "chat",
        help="chat with a folder of documents (interactive, or --once)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_docs_option(parser)
    parser.add_argument("--once", metavar="MESSAGE", help="answer one message and exit")
    add_store_options(parser, user_required=False, session=True)
    add_model_options(parser)
    parser.set_defaults(run=run)


def _show_memory(rag: Any) -> None:
    history = rag.history()
    if not history:
        print("(la mémoire est vide)")
    for message in history:
        role = "👤" if message.type == "human" else "🤖"
        print(f"{role} {message.text}")


def _show_sources(answer: Any) -> None:
    if answer is None:
        print("(pas encore de réponse)")
        return
    for rank, doc in enumerate(answer.sources, 1):
        excerpt = " ".join(doc.page_content.split())[:160]
        print(f"{rank}. [{doc.metadata.get('source', '?')}] {excerpt}")


def open_chat_memory(args: argparse.Namespace) -> tuple[Any, str]:
    """The chat's memory and a line describing it (for stderr).

    In-process :class:`~memory_chains.memory.BufferMemory` unless ``--store``, ``--user``
    or ``--session`` is given; then a :class:`~memory_chains.memory.WindowMemory` over the
    store, on ``--session`` or the session :meth:`SessionManager.resume` picks.
    """
    from memory_chains.memory import BufferMemory, WindowMemory

    if args.store is None and args.user is None and args.session is None:
        return BufferMemory(), "memory: this process only"
    from memory_chains.cli._store_args import describe_store, open_cli_store
    from memory_chains.sessions import SessionManager
    from memory_chains.stores import validate_id

    user = validate_id(args.user or "default", "--user")
    session_id = None if args.session is None else validate_id(args.session, "--session")
    store = open_cli_store(args.store, resilient=True)
    manager = SessionManager(store)
    if session_id is None:
        session = manager.resume(user)
    elif manager.get(user, session_id) is None:
        session = manager.create(user, session_id=session_id)
    else:
        session = manager.touch(user, session_id)
    turns = store.count_turns(user, session.session_id)
    memory = WindowMemory(
        store=store, user_id=user, session_id=session.session_id, k=PERSISTENT_WINDOW
    )
    state = f"{turns} earlier exchange(s)" if turns else "new"
    return memory, (
        f"memory: {describe_store(store)}, user {user}, session {session.session_id} ({state})"
    )


def run(args: argparse.Namespace) -> int:
    """Run the chat loop (or answer ``--once``)."""
    from memory_chains.cli._common import answer_aloud, open_knowledge_base
    from memory_chains.config import load_settings
    from memory_chains.errors import ConfigurationError
    from memory_chains.knowledge import sample_kb_path
    from memory_chains.providers import describe_providers, get_chat_model, get_embeddings
    from memory_chains.rag import ConversationalRAG, build_chain

    settings = load_settings()
    folder = args.docs or sample_kb_path()
    if not folder.is_dir():
        raise ConfigurationError(f"--docs {folder} is not a folder")
    memory, memory_line = open_chat_memory(args)
    try:
        print(f"[{describe_providers(settings)}]", file=sys.stderr)
        print(f"[{memory_line}]", file=sys.stderr)
        llm = get_chat_model(settings)
        kb = open_knowledge_base(folder, settings, get_embeddings(settings))
        rag = ConversationalRAG(build_chain(kb.as_retriever(k=args.k), llm=llm, memory=memory))
        stream = not args.no_stream
        if args.once is not None:
            answer_aloud(rag, args.once, stream)
            return 0
        return _loop(rag, memory, stream)
    finally:
        memory.store.close()


def _loop(rag: Any, memory: Any, stream: bool) -> int:
    from memory_chains.cli._common import answer_aloud
    from memory_chains.errors import InvalidInputError

    print(_HELP, file=sys.stderr)
    last = None
    while True:
        try:
            line = input("\n👤 ").strip()
        except EOFError:
            print()
            return 0
        if not line:
            continue
        if line in ("/quit", "/exit"):
            return 0
        if line == "/memory":
            _show_memory(rag)
        elif line == "/sources":
            _show_sources(last)
        elif line == "/forget":
            memory.clear()
            last = None
            print("(mémoire effacée)")
        elif line.startswith("/"):
            print(_HELP)
        else:
            print("🤖 ", end="", flush=True)
            try:
                last = answer_aloud(rag, line, stream)
            except InvalidInputError as exc:
                print(f"(question refusée : {exc})")
