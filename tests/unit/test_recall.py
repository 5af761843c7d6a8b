"""The episodic index (memory_chains.recall): text, BM25, fusion, TurnIndex, persistence."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import threading
from collections import Counter
from datetime import date, datetime
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_chains._bm25 import BM25Index
from memory_chains._folding import fold, fold_with_positions
from memory_chains._terms import keywords, stem, terms
from memory_chains.errors import InvalidInputError, StoreError
from memory_chains.recall import Episode, RecallConfig, TurnIndex
from memory_chains.recall._dates import DayMention, MonthMention, date_mask, question_dates
from memory_chains.recall._fusion import (
    fuse_scores,
    neighbour_smooth,
    normalise,
    reciprocal_rank_fusion,
    session_means,
    top_k,
)
from memory_chains.recall._index import indexed_text, passage_texts
from memory_chains.recall._persist import decode_turn, turns_namespace
from memory_chains.recall._rank import dense_question, rank_scores
from memory_chains.recall._state import EpisodeSet
from memory_chains.stores import InMemoryStore, export_user, forget_user
from memory_chains.testing import HashEmbeddings, word_counter

from ._threads import run_together, switching_often

# ------------------------------------------------------------------------------ text


def test_terms_fold_accents_drop_stop_words_and_stem_both_languages() -> None:
    assert terms("The paintings she PAINTED") == ["paint", "paint"]
    assert terms("Qu'est-ce que l'Émission d'hier ?") == ["emis", "hier"]
    assert terms("Caroline's") == ["carolin"]
    assert keywords("the dog and the DOG") == ["dog"]


def test_stem_keeps_short_words_and_numbers() -> None:
    assert stem("cats") == "cat"
    assert stem("bus") == "bus"
    assert stem("2023") == "2023"
    assert stem("running") == "run"


# ------------------------------------------------------------------------------ BM25


def test_bm25_prefers_rare_terms_and_short_documents() -> None:
    index = BM25Index()
    index.add(["puppy", "dog"])
    index.add(["dog"] + ["filler"] * 20)
    index.add(["dog"])
    scores = index.scores(["puppy", "dog"])
    assert scores.argmax() == 0
    assert scores[2] > scores[1]  # same tf, shorter document
    assert index.idf("puppy") > index.idf("dog")


def test_bm25_weights_scale_a_term_and_unknown_terms_score_zero() -> None:
    index = BM25Index()
    index.add({"a": 1})
    full = index.scores(["a"])[0]
    assert index.scores(["a"], {"a": 0.5})[0] == pytest.approx(full / 2)
    assert index.scores(["zzz"]).tolist() == [0.0]
    assert BM25Index().scores(["a"]).size == 0


# ---------------------------------------------------------------------------- fusion


def test_normalise_and_fuse() -> None:
    assert normalise(np.array([2.0, 2.0])).tolist() == [0.0, 0.0]
    fused = fuse_scores(np.array([0.0, 10.0]), np.array([1.0, 0.0]), 0.25)
    assert fused.tolist() == [0.75, 0.25]


def test_rrf_rewards_agreement() -> None:
    fused = reciprocal_rank_fusion([np.array([0, 1, 2]), np.array([1, 0, 2])], 3)
    assert fused[2] < fused[0] == pytest.approx(fused[1])


def test_neighbour_smooth_stays_inside_a_session_and_does_not_mutate() -> None:
    scores = np.array([0.0, 0.0, 1.0, 0.0])
    out = neighbour_smooth(scores, np.array([0, 0, 1, 1]), 0.5)
    assert out.tolist() == [0.0, 0.0, 1.0, 0.5]
    assert scores.tolist() == [0.0, 0.0, 1.0, 0.0]


def test_neighbour_smooth_weighs_the_next_turn_apart() -> None:
    scores = np.array([0.0, 1.0, 0.0])
    sessions = np.array([0, 0, 0])
    assert neighbour_smooth(scores, sessions, 0.2, 0.4).tolist() == [0.4, 1.0, 0.2]
    assert neighbour_smooth(scores, sessions, 0.0, 0.4).tolist() == [0.4, 1.0, 0.0]
    assert neighbour_smooth(scores, sessions, 0.3).tolist() == [0.3, 1.0, 0.3]


def test_top_k_breaks_ties_by_position() -> None:
    assert top_k(np.array([1.0, 3.0, 3.0]), 5) == [1, 2, 0]
    assert top_k(np.array([1.0]), 0) == []


@given(
    rows=st.lists(
        st.tuples(st.floats(-5, 5, allow_nan=False), st.integers(0, 4)), min_size=1, max_size=30
    ),
    top=st.integers(1, 4),
)
def test_session_means_is_the_mean_of_each_sessions_best_scores(
    rows: list[tuple[float, int]], top: int
) -> None:
    scores = np.array([score for score, _ in rows])
    sessions = np.array([code for _, code in rows], dtype=np.int64)
    out = session_means(scores, sessions, top)
    for i, code in enumerate(sessions):
        best = sorted(scores[sessions == code], reverse=True)[:top]
        assert out[i] == pytest.approx(sum(best) / len(best))


# ----------------------------------------------------------------------- ranking


def _episodes(rows: list[tuple[str, str, str]]) -> EpisodeSet:
    episodes = EpisodeSet()
    for turn_id, speaker, text in rows:
        episode = Episode(turn_id, text, speaker, session=turn_id.split(":")[0])
        episodes.add(episode, Counter(terms(f"{speaker}: {text}")), None)
    return episodes


def test_neighbour_weight_lifts_the_reply_after_the_topic_turn() -> None:
    episodes = _episodes(
        [
            ("1:1", "Ann", "Did you go to the pottery workshop?"),
            ("1:2", "Bob", "Yes, last Friday, it was great"),
            ("2:1", "Bob", "I cooked dinner yesterday, it was great"),
        ]
    )
    question = "When did Bob go to the pottery workshop?"
    off = rank_scores(episodes, question, None, RecallConfig(neighbour_weight=0.0))
    on = rank_scores(episodes, question, None, RecallConfig(neighbour_weight=0.5))
    assert off[1] <= off[2]
    assert on[1] > on[2]


def test_next_factor_lifts_the_turn_before_a_match_more_than_the_turn_after() -> None:
    episodes = _episodes(
        [
            ("1:1", "Ann", "Guess what I signed up for yesterday"),
            ("1:2", "Bob", "A pottery class, nice"),
            ("1:3", "Ann", "Guess what I signed up for yesterday"),
        ]
    )
    bare = RecallConfig(feedback_docs=0, session_weight=0.0, content_weight=0.0)
    even = rank_scores(episodes, "pottery class", None, dataclasses.replace(bare, next_factor=1.0))
    ahead = rank_scores(episodes, "pottery class", None, dataclasses.replace(bare, next_factor=2.0))
    assert even[0] == pytest.approx(even[2])
    assert ahead[0] > ahead[2] > 0.0
    assert ahead[1] > ahead[0]


def test_speaker_boost_prefers_the_named_speaker() -> None:
    episodes = _episodes([("1:1", "Ann", "I love hiking"), ("1:2", "Bob", "I love hiking")])
    config = RecallConfig(neighbour_weight=0.0, feedback_docs=0, speaker_boost=1.0)
    scores = rank_scores(episodes, "What does Bob love?", None, config)
    plain = rank_scores(episodes, "What does Bob love?", None, RecallConfig(feedback_docs=0))
    assert scores[1] > scores[0]
    assert scores[1] - scores[0] > plain[1] - plain[0]


def _without_and_with(
    episodes: EpisodeSet, question: str, knob: str, value: float
) -> tuple[np.ndarray, np.ndarray]:
    """Scores with every smoothing and nudge off, then with ``knob`` alone set to ``value``."""
    bare = RecallConfig(
        neighbour_weight=0.0, feedback_docs=0, session_weight=0.0, content_weight=0.0
    )
    off = rank_scores(episodes, question, None, bare)
    changes: dict[str, Any] = {knob: value}
    on = rank_scores(episodes, question, None, dataclasses.replace(bare, **changes))
    return off, on


def test_session_weight_prefers_the_session_that_matches_twice() -> None:
    episodes = _episodes(
        [
            ("1:1", "Ann", "The kayak is blue"),
            ("1:2", "Ann", "We paddle the kayak on lakes"),
            ("2:1", "Ann", "The kayak is green"),
            ("2:2", "Ann", "Lunch was fine"),
            ("2:3", "Ann", "Traffic was bad downtown"),
        ]
    )
    off, on = _without_and_with(episodes, "Tell me about the kayak", "session_weight", 0.1)
    assert off[0] == pytest.approx(off[2])
    assert on[0] > on[2]


def test_content_weight_prefers_the_turn_that_says_something() -> None:
    episodes = _episodes(
        [
            ("1:1", "Ann", "Pottery, wow"),
            ("2:1", "Ann", "Signed up for a pottery class downtown, the teacher is Marta"),
        ]
    )
    question = "What did Ann say about pottery?"
    off, on = _without_and_with(episodes, question, "content_weight", 1.0)
    assert off[0] > off[1]  # BM25's length normalisation favours the short turn
    assert on[1] > on[0]


def test_content_is_recomputed_when_a_turn_is_added() -> None:
    rows = [("1:1", "Ann", "pottery class"), ("1:2", "Ann", "yoga class")]
    episodes = _episodes(rows)
    before = episodes.content().copy()
    episodes.add(
        Episode("1:3", "pottery again", "Ann", session="1"),
        Counter(terms("Ann: pottery again")),
        None,
    )
    fresh = _episodes([*rows, ("1:3", "Ann", "pottery again")])
    assert episodes.content().tolist() == fresh.content().tolist()  # idf moved with the new turn
    assert episodes.content()[:2].tolist() != before.tolist()
    by_definition = [np.log1p(sum(map(episodes.bm25.idf, c))) for c in episodes.term_counts]
    assert episodes.content() == pytest.approx(by_definition)  # log(1 + Σ idf), BM25's idf


class _RecordingEmbeddings(HashEmbeddings):
    def __init__(self) -> None:
        super().__init__()
        self.documents: list[str] = []
        self.queries: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents.extend(texts)
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        return super().embed_query(text)


def test_vectors_leave_the_speakers_names_to_bm25_and_the_speaker_boost() -> None:
    embeddings = _RecordingEmbeddings()
    index = TurnIndex(embeddings)
    index.add("u", "1", "I'm off to go swimming", speaker="Melanie", session="1")
    index.add("u", "2", "Thanks, Melanie!", speaker="Caroline", session="2")
    index.search("u", "What does Melanie's family do on weekends?")
    assert embeddings.documents == ["I'm off to go swimming", "Thanks, Melanie!"]
    assert embeddings.queries == ["What does family do on weekends?"]
    assert terms(indexed_text(Episode("1", "pottery", "Melanie"))) == ["melani", "pottery"]


async def test_a_turns_vector_reads_it_after_the_turn_before_it_in_its_session() -> None:
    embeddings = _RecordingEmbeddings()
    index = TurnIndex(embeddings)
    index.add("u", "1:1", "Do you play an instrument?", speaker="Bob", session="1")
    index.add_many(  # the turn before the batch is read from the index
        "u",
        [
            Episode("1:2", "Yes, the clarinet", "Ann", session="1"),
            Episode("2:1", "Hello again", "Ann", session="2"),  # a new session: no context
        ],
    )
    await index.aadd("u", "2:2", "Hi Ann", speaker="Bob", session="2")  # async: the same
    assert embeddings.documents == [
        "Do you play an instrument?",
        "Do you play an instrument?\nYes, the clarinet",
        "Hello again",
        "Hello again\nHi Ann",
    ]
    found = index.search("u", "Does Ann play the clarinet?", k=1)[0]
    assert (found.turn_id, found.text) == ("1:2", "Yes, the clarinet")  # shown alone


def test_the_context_of_a_vector_is_the_end_of_a_long_previous_turn() -> None:
    long_turn = Episode("1", " ".join(f"w{i}" for i in range(100)), "Bob", session="s")
    [text] = passage_texts([Episode("2", "Sure", "Ann", session="s")], before=long_turn)
    assert text == " ".join(f"w{i}" for i in range(36, 100)) + "\nSure"  # its last 64 words
    assert passage_texts([Episode("2", "Sure", "Ann", session="t")], before=long_turn) == ["Sure"]


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
def test_fold_with_positions_folds_as_fold_does(text: str) -> None:
    folded, where = fold_with_positions(text)
    assert " ".join(folded.split()) == fold(text)
    assert len(where) == len(folded) and where == sorted(where)
    assert all(0 <= i < len(text) for i in where)


def test_dense_question_strips_only_whole_speaker_names() -> None:
    assert dense_question("Did Ann meet Annabel?", ["Ann"]) == "Did meet Annabel?"
    assert dense_question("Quand ÉLODIE est-elle partie ?", ["Élodie"]) == "Quand est-elle partie?"
    # capitals often lose their accent in French: the name is found either way
    assert dense_question("Quand Elodie est-elle partie ?", ["Élodie"]) == "Quand est-elle partie?"
    assert dense_question("Et Hélène ?", ["Helene", "Bob"]) == "Et?"
    assert dense_question("Straße's end", ["strasse"]) == "end"  # a fold that changes length
    assert dense_question("What did they say?", ["", "Bob"]) == "What did they say?"
    assert dense_question("Bob", ["Bob"]) == "Bob"


# --------------------------------------------------------------------- TurnIndex


@pytest.fixture
def index() -> TurnIndex:
    idx = TurnIndex(HashEmbeddings(), InMemoryStore(), token_counter=word_counter)
    idx.add_many(
        "ann",
        [
            Episode("D1:1", "I adopted a puppy named Luna", "Ann", datetime(2023, 5, 8), "1"),
            Episode("D1:2", "So cute! I started pottery classes", "Bob", datetime(2023, 5, 8), "1"),
            Episode("D2:1", "Luna chewed my shoes today", "Ann", datetime(2023, 6, 1), "2"),
            Episode("D2:2", "We are going camping in Oregon", "Bob", datetime(2023, 6, 1), "2"),
        ],
    )
    return idx


def test_search_returns_citable_turns_best_first(index: TurnIndex) -> None:
    found = index.search("ann", "What is the name of Ann's puppy?", k=2)
    assert found[0].turn_id == "D1:1"
    assert found[0].when == datetime(2023, 5, 8)
    assert found[0].score >= found[1].score
    assert index.search("nobody", "puppy") == []


def test_context_respects_the_budget_and_cites_what_it_shows(index: TurnIndex) -> None:
    context = index.context("ann", "Where is Bob going camping?", max_tokens=20)
    assert context.turn_ids[0] == "D2:2"
    assert context.tokens == word_counter(context.text) <= 20
    for turn_id in context.turn_ids:
        assert f"({turn_id})" in context.text
    assert "[01 June 2023, session 2]" in context.text
    everything = index.context("ann", "Where is Bob going camping?", max_tokens=1000)
    assert len(everything.turn_ids) == 4


def test_bad_inputs_are_refused_with_typed_errors(index: TurnIndex) -> None:
    with pytest.raises(InvalidInputError, match="already indexed"):
        index.add("ann", "D1:1", "again")
    with pytest.raises(InvalidInputError, match="already indexed"):
        index.add_many("bob", [Episode("x", "a"), Episode("x", "b")])
    with pytest.raises(InvalidInputError, match="no text"):
        index.add("ann", "D9:9", "   ")
    with pytest.raises(InvalidInputError):
        index.search("bad user!", "q")
    with pytest.raises(InvalidInputError):
        index.search("ann", "")
    with pytest.raises(InvalidInputError):
        index.search("ann", "q", k=0)
    with pytest.raises(InvalidInputError):
        index.context("ann", "q", max_tokens=0)
    assert len(index.search("ann", "Luna", k=10)) == 4  # nothing half-added


def test_turns_persist_in_the_store_and_another_index_reads_them(index: TurnIndex) -> None:
    other = TurnIndex(HashEmbeddings(), index.store)
    assert [t.turn_id for t in other.search("ann", "puppy Luna", k=1)] == ["D1:1"]
    doc = index.store.get(turns_namespace("ann"), "D1:1")
    assert doc is not None
    _order, episode, counts, vector = decode_turn(doc.key, doc.value)
    assert episode.speaker == "Ann" and counts["puppy"] == 1
    assert vector is not None and vector.shape == (256,)
    # a write through one index is seen by the other's cache
    other.add("ann", "D3:1", "Luna learned to sit", speaker="Ann", session="3")
    assert "D3:1" in [t.turn_id for t in index.search("ann", "Luna sit", k=2)]


def test_forget_user_removes_every_episode_and_the_cache_follows(index: TurnIndex) -> None:
    exported = export_user(index.store, "ann")["documents"]
    assert {d["key"] for d in exported} >= {"D1:1", "D2:2", "state"}
    result = forget_user(index.store, "ann")
    assert result.documents == 5
    assert index.search("ann", "puppy") == []
    assert index.forget("ann") == 0


def test_malformed_stored_turn_is_a_store_error(index: TurnIndex) -> None:
    index.store.put(turns_namespace("ann"), "D1:1", {"text": "no other field"})
    index.add("ann", "D5:1", "forces a reload elsewhere")
    fresh = TurnIndex(HashEmbeddings(), index.store)
    with pytest.raises(StoreError, match="re-index"):
        fresh.search("ann", "puppy")


def test_lexical_only_index_works_without_embeddings() -> None:
    idx = TurnIndex()
    idx.add("u1", "a", "Nous sommes allés à Lyon en été", speaker="Léa")
    idx.add("u1", "b", "J'ai acheté une guitare", speaker="Léa")
    assert idx.search("u1", "Quand Léa est-elle allée à Lyon ?", k=1)[0].turn_id == "a"


async def test_async_flavours_match_the_sync_ones(index: TurnIndex) -> None:
    question = "What did Luna chew?"
    sync = [t.turn_id for t in index.search("ann", question, k=3)]
    assert [t.turn_id for t in await index.asearch("ann", question, k=3)] == sync
    assert (await index.acontext("ann", question, 15)) == index.context("ann", question, 15)
    await index.aadd("ann", "D4:1", "Luna is sick", speaker="Ann", session="4")
    assert (await index.aadd_many("ann", [])) == 0
    found = await asyncio.gather(index.asearch("ann", "sick Luna", k=1))
    assert found[0][0].turn_id == "D4:1"


# ------------------------------------------------------------------------- dates


def test_question_dates_reads_english_and_french_days_and_months() -> None:
    assert question_dates("What did she paint on October 13th, 2023?") == [
        DayMention(date(2023, 10, 13))
    ]
    assert question_dates("Qu'a-t-elle peint le 1er août 2023 ?") == [DayMention(date(2023, 8, 1))]
    assert question_dates("What happened in July 2023?") == [MonthMention(2023, 7)]
    assert question_dates("Where did Jon go in June?") == [MonthMention(None, 6)]
    assert question_dates("Where did she go en juin ?") == [MonthMention(None, 6)]
    assert question_dates("What did Ann do in 2023? Maybe she went away") == []
    # an impossible day still names its month
    assert question_dates("Was it on 31 February 2023?") == [MonthMention(2023, 2)]


def test_date_mask_fades_around_a_named_day_and_covers_a_named_month() -> None:
    whens = [datetime(2023, 6, 2), datetime(2023, 6, 6), datetime(2023, 7, 1), None]
    assert date_mask(whens, "What did Ann do on 2 June 2023?").tolist() == [1.0, 0.5, 0.0, 0.0]
    assert date_mask(whens, "What did Ann do in June?").tolist() == [1.0, 1.0, 0.0, 0.0]
    assert date_mask(whens, "What does Ann like?").tolist() == [0.0] * 4


def test_date_boost_lifts_the_turns_of_the_named_day() -> None:
    episodes = EpisodeSet()
    for turn_id, when in (("1:1", datetime(2023, 5, 1)), ("2:1", datetime(2023, 10, 13))):
        episode = Episode(turn_id, "Here is my latest painting", "Ann", when, turn_id[0])
        episodes.add(episode, Counter(terms(f"Ann: {episode.text}")), None)
    question = "What painting did Ann show on October 13, 2023?"
    off = rank_scores(episodes, question, None, RecallConfig(date_boost=0.0))
    on = rank_scores(episodes, question, None, RecallConfig())
    assert off[0] >= off[1]
    assert on[1] > on[0]


def test_searches_while_turns_are_added_see_whole_batches() -> None:
    # Before 2026-12-02 a search racing an add ranked arrays of different lengths (and could
    # cache a stale vector matrix): ValueError "operands could not be broadcast together".
    index = TurnIndex(HashEmbeddings())
    index.add("u", "0", "hello pottery", speaker="Ann", session="0")
    errors: list[str] = []
    done = threading.Event()

    def write() -> None:
        for i in range(1, 600):
            who = "Ann" if i % 2 else "Bob"
            index.add(
                "u",
                str(i),
                f"turn {i}: pottery class {i % 7}",
                speaker=who,
                session=str(i // 10),
            )
        done.set()

    def read() -> None:
        while not done.is_set():
            try:
                index.search_and_context("u", "Ann's pottery class 3?", k=5, max_tokens=200)
            except Exception as exc:
                errors.append(repr(exc))

    with switching_often():
        run_together(write, read, read)
    assert errors == []
    assert len(index.search("u", "pottery class", k=1000)) == 600


class _ForgettingEmbeddings(HashEmbeddings):
    """Forgets ``index``'s user once, while an add is embedding (as another thread could)."""

    def __init__(self) -> None:
        super().__init__()
        self.index: TurnIndex | None = None

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if self.index is not None:
            index, self.index = self.index, None
            index.forget("bob")
        return super().embed_documents(texts)


def test_two_threads_adding_the_same_turn_id_store_it_once() -> None:
    index = TurnIndex(HashEmbeddings())
    refused: list[str] = []

    def add(turn_id: str) -> None:
        try:
            index.add("ann", turn_id, f"turn {turn_id} about pottery", speaker="Ann")
        except InvalidInputError:
            refused.append(turn_id)

    ids = [f"s1:{i}" for i in range(100)]
    with switching_often():
        for turn_id in ids:
            run_together(functools.partial(add, turn_id), functools.partial(add, turn_id))
    assert sorted(refused) == sorted(ids)  # each id: one add stored it, the other was refused
    assert sorted(t.turn_id for t in index.search("ann", "pottery", k=1000)) == sorted(ids)


def test_forget_during_an_add_is_not_undone_by_the_cache() -> None:
    # deterministic: the forget lands between the add's first read and its write (a thread
    # sleeping 2 ms against a 5 ms embedding missed that window on a loaded machine)
    embeddings = _ForgettingEmbeddings()
    index = TurnIndex(embeddings)
    index.add_many("bob", [Episode(f"old:{j}", f"my diagnosis, part {j}", "Bob") for j in range(5)])
    embeddings.index = index
    index.add("bob", "new:1", "the weather", speaker="Bob")
    assert [t.turn_id for t in index.search("bob", "diagnosis weather", k=10)] == ["new:1"]


def test_forget_session_removes_its_turns_and_keeps_the_others_in_order() -> None:
    from memory_chains.stores import InMemoryStore

    store = InMemoryStore()
    index = TurnIndex(store=store)
    index.add_many(
        "ann",
        [
            Episode("a1", "I adopted a puppy", "Ann", None, "s1"),
            Episode("b1", "My sister lives in Lyon", "Ann", None, "s2"),
            Episode("a2", "The puppy is called Luna", "Ann", None, "s1"),
            Episode("b2", "Lyon is lovely in May", "Ann", None, "s2"),
        ],
    )
    assert index.forget_session("ann", "s1") == 2
    assert index.forget_session("ann", "s1") == 0
    assert {t.turn_id for t in index.search("ann", "puppy Lyon", k=10)} == {"b1", "b2"}
    fresh = TurnIndex(store=store)  # another process: reads the store, not a cache
    assert {t.turn_id for t in fresh.search("ann", "puppy Lyon", k=10)} == {"b1", "b2"}
    index.add("ann", "a1", "A new turn may reuse a forgotten id", session="s1")
    orders = sorted(doc.value["order"] for doc in store.list(("episodes", "ann", "turns")))
    assert orders == [0, 1, 2]  # renumbered without gaps; the new turn comes last
    assert store.get(("episodes", "ann", "meta"), "state").value["count"] == 3
    with pytest.raises(InvalidInputError):
        index.forget_session("a b", "s1")


def test_the_defaults_are_neutral_and_the_locomo_knobs_a_preset() -> None:
    neutral, locomo = RecallConfig(), RecallConfig.locomo()
    assert neutral.speaker_boost == 0.0 and neutral.next_factor == 1.0
    assert neutral.session_weight == 0.0 and neutral.content_weight == 0.0
    assert (neutral.bm25_k1, neutral.bm25_b) == (1.2, 0.75)
    assert locomo.speaker_boost == 1.0 and locomo.next_factor == 2.0 and locomo.bm25_b == 0.5
    episodes = _episodes(
        [("1:1", "Ann", "I love hiking in the Alps"), ("1:2", "Bob", "I love hiking too")]
    )
    question = "Where does Ann love hiking?"
    plain = rank_scores(episodes, question, None, neutral)
    boosted = rank_scores(episodes, question, None, locomo)
    assert boosted[0] - boosted[1] > plain[0] - plain[1]  # the preset favours Ann's turn
