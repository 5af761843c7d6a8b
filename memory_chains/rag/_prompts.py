"""Prompts of the answer step.

The fixed instructions come first and never change between calls, so that llama.cpp can
reuse their KV cache; the variable parts (history, retrieved context, question) come last.
"""

from __future__ import annotations

from langchain_core.prompts import ChatPromptTemplate, PromptTemplate

__all__ = ["DOCUMENT_PROMPT", "QA_PROMPT", "answer_instructions"]


def answer_instructions(sources: str) -> str:
    """The answer step's system text, for a prompt whose material is ``sources``.

    One text for every answer prompt of the package (the classic chain's, the context
    chain's, the 1.x steps'), so that a rule of answering added here holds for all.

    Example:
        >>> "say so plainly" in answer_instructions("the context documents below")
        True
    """
    return (
        "You are a helpful customer assistant. Answer the user's question using only "
        f"{sources}. If the context does not contain the answer, say briefly that you do not "
        "have that information. When the context says that what is asked does not exist or "
        "is not offered, say so plainly rather than answering about something else. Be "
        "concise (one to three sentences). Always answer in the language of the question "
        "(French questions get French answers)."
    )


_SYSTEM = answer_instructions("the context documents below and the conversation so far")

QA_PROMPT = ChatPromptTemplate.from_messages(
    [
        ("system", _SYSTEM),
        (
            "human",
            "Conversation so far:\n{chat_history}\n\nContext documents:\n{context}\n\n"
            "Question: {question}",
        ),
    ]
)
"""Answer prompt: variables ``chat_history``, ``context`` and ``question``."""

DOCUMENT_PROMPT = PromptTemplate.from_template("[{source}] {page_content}")
"""How one retrieved chunk is shown in the context (its source first, for citations)."""
