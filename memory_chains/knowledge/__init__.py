"""Knowledge bases: a folder of French or English documents, searched by cosine and BM25.

:class:`KnowledgeBase` chunks ``.txt`` / ``.md`` files, embeds them, keeps them in a FAISS
inner-product index over unit vectors (fused with BM25 when ``mode="hybrid"``) and, given an
``index_dir``, saves that index without pickle and reuses it while nothing changed.
:func:`sample_kb_path` is the demo folder shipped with the package (an online shop, a gym
and a laptop catalogue, in French).

Example:
    >>> from memory_chains.testing import HashEmbeddings
    >>> kb = KnowledgeBase.from_folder(sample_kb_path(), HashEmbeddings(), progress=False)
    >>> kb.search("garantie du Dell XPS 15", k=1)[0][0].metadata["title"]
    'Dell XPS 15'
"""

from memory_chains.knowledge._base import KnowledgeBase, KnowledgeRetriever, sample_kb_path
from memory_chains.knowledge._hybrid import LexicalIndex, SearchMode, hybrid_ranking
from memory_chains.knowledge._persist import Manifest

__all__ = [
    "KnowledgeBase",
    "KnowledgeRetriever",
    "LexicalIndex",
    "Manifest",
    "SearchMode",
    "hybrid_ranking",
    "sample_kb_path",
]
