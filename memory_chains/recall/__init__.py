"""Episodic recall over a user's past turns, with citations.

* :class:`TurnIndex`: per-user hybrid index (own BM25 with French/English normalisation +
  any LangChain embeddings, e5 query/passage asymmetry respected), persisted in a
  :class:`~memory_chains.stores.BaseStore` under ``("episodes", user_id, …)``;
  ``add`` / ``add_many`` / ``search`` / ``context`` and their async twins.
* :class:`Episode` (a turn to index), :class:`RecalledTurn` (a turn found, with its id and
  date), :class:`RecalledContext` (the text to inject and the turn ids it cites),
  :class:`RecallConfig` (ranking knobs).

Example:
    >>> index = TurnIndex()
    >>> index.add("ann", "D1:1", "My sister lives in Lyon", speaker="Ann", session="1")
    >>> index.search("ann", "Where does Ann's sister live?", k=1)[0].turn_id
    'D1:1'
"""

from __future__ import annotations

from memory_chains.recall._index import TurnIndex
from memory_chains.recall._types import Episode, RecallConfig, RecalledContext, RecalledTurn
from memory_chains.recall._user import UserRecall

__all__ = ["Episode", "RecallConfig", "RecalledContext", "RecalledTurn", "TurnIndex", "UserRecall"]
