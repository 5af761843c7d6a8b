"""Evaluation harnesses and the metrics they report.

* :mod:`memory_chains.evaluation.metrics`: pure text metrics (ROUGE-1 recall, corpus
  BLEU-4, accent folding).
* :mod:`memory_chains.evaluation.rewrite`: follow-up rewriting, measured by retrieval on a
  small corpus (:func:`~memory_chains.evaluation.rewrite.evaluate_rewrites`);
  :mod:`memory_chains.evaluation.references`: against CANARD's and TREC CAsT's human
  rewrites (:func:`~memory_chains.evaluation.references.evaluate_references`).
* :mod:`memory_chains.evaluation.locomo`: LoCoMo evidence recall@k and context tokens of
  the episodic index (:func:`~memory_chains.evaluation.locomo.evaluate_locomo`).
* :mod:`memory_chains.evaluation.summary`: what a running summary keeps of scripted
  conversations' facts and which numbers it gives to the wrong thing
  (:func:`~memory_chains.evaluation.summary.evaluate_summary`).
* :mod:`memory_chains.evaluation.entities`: entity memory against gold dialogues: names,
  types, aliases and relations (:func:`~memory_chains.evaluation.entities.evaluate`).
* :mod:`memory_chains.evaluation.topics`: topic-change detection on labelled pairs
  (:func:`~memory_chains.evaluation.topics.evaluate_topics`).
* :mod:`memory_chains.evaluation.merge`: the long-term fact merge decision on labelled
  sentence pairs, against cosine alone (:func:`~memory_chains.evaluation.merge.evaluate_merge`).

The sets these harnesses read ship with them, under :data:`DATA_DIR`.
"""

from pathlib import Path

__all__ = ["DATA_DIR"]

DATA_DIR = Path(__file__).resolve().parent / "data"
"""The shipped evaluation sets: follow-ups and their corpus, entity dialogues, summaries,
topic pairs, fact-merge pairs (JSON lines). Benchmark data, not used by the runtime."""
