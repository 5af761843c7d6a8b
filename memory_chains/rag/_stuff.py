"""The answer step's document chain, with the most relevant document closest to the question.

Small models lean on what they read last: with the best match first and weaker matches after
it, the embedded 1.5B model answered "Et pour les produits électroniques ?" from the general
returns page ranked second. :class:`MostRelevantLastStuffChain` lays the retrieved documents
out in reverse rank order in the prompt; the chain's ``source_documents`` keep rank order.
"""

from __future__ import annotations

from typing import Any

from langchain_classic.chains.combine_documents.stuff import StuffDocumentsChain
from langchain_core.documents import Document

__all__ = ["MostRelevantLastStuffChain"]


class MostRelevantLastStuffChain(StuffDocumentsChain):
    """``StuffDocumentsChain`` that writes the documents from least to most relevant.

    Example:
        >>> from langchain_classic.chains import LLMChain
        >>> from langchain_core.prompts import PromptTemplate
        >>> from memory_chains.testing import ScriptedChatModel
        >>> prompt = PromptTemplate.from_template("{context}")
        >>> chain = MostRelevantLastStuffChain(
        ...     llm_chain=LLMChain(llm=ScriptedChatModel(), prompt=prompt),
        ...     document_variable_name="context",
        ... )
        >>> docs = [Document(page_content="best"), Document(page_content="second")]
        >>> chain._get_inputs(docs)["context"]
        'second\\n\\nbest'
    """

    def _get_inputs(self, docs: list[Document], **kwargs: Any) -> dict:
        return super()._get_inputs(list(reversed(docs)), **kwargs)
