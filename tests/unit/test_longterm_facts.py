"""FactMemory: merge of restatements, supersession with validity periods, scoping, recall."""

from __future__ import annotations

import json

import pytest
from langchain_core.embeddings import Embeddings

from memory_chains._folding import fold
from memory_chains.errors import InvalidInputError, StoreError
from memory_chains.longterm import FactCandidate, FactMemory
from memory_chains.longterm._fact_merge import anchors, restates
from memory_chains.longterm._vectors import decode_vector, encode_vector
from memory_chains.stores import InMemoryStore, export_user, forget_user
from memory_chains.testing import HashEmbeddings


class TableEmbeddings(Embeddings):
    """Vectors chosen by the test: exact cosines, no model."""

    def __init__(self, table: dict[str, list[float]], default: list[float]) -> None:
        self.table, self.default = table, default
        self.query_calls: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.table.get(t, self.default) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self.query_calls.append(text)
        return self.table.get(text, self.default)


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        self.t += 1.0
        return self.t


PILATES_SAT = "L'utilisateur préfère le Pilates le samedi matin."
PILATES_SAT_2 = "L'utilisateur aime faire du Pilates le samedi matin."
PILATES_TUE = "L'utilisateur préfère le Pilates le mardi soir."


def near(x: float) -> list[float]:
    """A unit vector whose cosine with [1, 0] is x."""
    return [x, (1 - x * x) ** 0.5]


def test_restatement_merges_sources_without_a_new_row() -> None:
    emb = TableEmbeddings({PILATES_SAT: [1.0, 0.0], PILATES_SAT_2: near(0.97)}, [0.0, 1.0])
    store = InMemoryStore()
    facts = FactMemory(store, "alice", emb, clock=Clock())
    first = facts.add([FactCandidate(PILATES_SAT)], session_id="s1", seq=3)
    second = facts.add([FactCandidate(PILATES_SAT_2)], session_id="s2", seq=1)
    assert second.added == () and second.merged == first.added
    (only,) = facts.facts(include_superseded=True)
    assert only.text == PILATES_SAT
    assert only.sources == (("s1", 3), ("s2", 1))
    assert len(store.list(("facts", "alice"))) == 1


def test_close_vectors_with_different_anchors_do_not_merge() -> None:
    # e5 puts "samedi matin" and "mardi soir" at 0.985: the anchors keep them apart
    emb = TableEmbeddings({PILATES_SAT: [1.0, 0.0], PILATES_TUE: near(0.985)}, [0.0, 1.0])
    facts = FactMemory(InMemoryStore(), "alice", emb, clock=Clock())
    facts.add([FactCandidate(PILATES_SAT)])
    changes = facts.add([FactCandidate(PILATES_TUE)])
    assert len(changes.added) == 1 and changes.merged == ()
    assert len(facts.facts()) == 2


def test_below_threshold_same_anchors_do_not_merge() -> None:
    emb = TableEmbeddings({PILATES_SAT: [1.0, 0.0], PILATES_SAT_2: near(0.90)}, [0.0, 1.0])
    facts = FactMemory(InMemoryStore(), "alice", emb)
    facts.add([FactCandidate(PILATES_SAT)])
    assert len(facts.add([FactCandidate(PILATES_SAT_2)]).added) == 1


def test_same_key_supersedes_and_keeps_the_old_fact_with_its_validity() -> None:
    store = InMemoryStore()
    facts = FactMemory(store, "alice", HashEmbeddings(), clock=Clock())
    old = facts.add(
        [FactCandidate(PILATES_SAT, key="preferred_course_day")], session_id="s1", when=100.0
    ).added[0]
    change = facts.add(
        [FactCandidate(PILATES_TUE, key="preferred course day")], session_id="s2", when=200.0
    )
    new = change.added[0]
    assert change.superseded == (old,)
    assert [f.text for f in facts.facts()] == [PILATES_TUE]
    history = {f.id: f for f in facts.facts(include_superseded=True)}
    assert (history[old].valid_from, history[old].valid_to) == (100.0, 200.0)
    assert history[old].superseded_by == new and not history[old].is_current
    assert (history[new].valid_from, history[new].valid_to) == (200.0, None)
    assert [f.text for f in facts.recall("Pilates samedi", k=5)] == [PILATES_TUE]
    exported = {d["key"]: d["value"] for d in export_user(store, "alice")["documents"]}
    assert exported[old]["valid_to"] == 200.0


def test_supersedes_flag_without_key_uses_similarity() -> None:
    emb = TableEmbeddings(
        {PILATES_SAT: [1.0, 0.0], PILATES_TUE: near(0.96), "Autre chose.": near(0.5)},
        [0.0, 1.0],
    )
    facts = FactMemory(InMemoryStore(), "alice", emb)
    old = facts.add([FactCandidate(PILATES_SAT)]).added[0]
    unrelated = facts.add([FactCandidate("Autre chose.", supersedes=True)])
    assert unrelated.superseded == ()
    assert facts.add([FactCandidate(PILATES_TUE, supersedes=True)]).superseded == (old,)
    # without the flag, a change of value is a second current fact
    facts2 = FactMemory(InMemoryStore(), "bob", emb)
    facts2.add([FactCandidate(PILATES_SAT)])
    assert facts2.add([FactCandidate(PILATES_TUE)]).superseded == ()


def test_candidates_of_one_batch_are_merged_with_each_other() -> None:
    facts = FactMemory(InMemoryStore(), "alice", HashEmbeddings())
    changes = facts.add([FactCandidate(PILATES_SAT), FactCandidate(PILATES_SAT)], session_id="s")
    assert len(changes.added) == 1 and len(facts.facts()) == 1


def test_users_never_see_each_others_facts() -> None:
    store, emb = InMemoryStore(), HashEmbeddings()
    alice = FactMemory(store, "alice", emb)
    bob = FactMemory(store, "bob", emb)
    alice.add([FactCandidate("L'utilisateur a un chien nommé Rex.")])
    bob.add([FactCandidate("L'utilisateur a un chat.")])
    assert [f.text for f in bob.recall("chien Rex", k=10)] == ["L'utilisateur a un chat."]
    assert [f.text for f in alice.facts()] == ["L'utilisateur a un chien nommé Rex."]
    # a user id that is a prefix of another's is not mixed up either
    assert FactMemory(store, "ali", emb).facts() == []


def test_global_facts_only_when_enabled() -> None:
    store, emb = InMemoryStore(), HashEmbeddings()
    admin = FactMemory(store, "alice", emb)
    admin.add([FactCandidate("La salle de sport ouvre à 7 h.")], scope="global")
    assert admin.facts() == []
    assert FactMemory(store, "bob", emb).recall("salle ouvre", k=3) == []
    hits = FactMemory(store, "bob", emb, include_global=True).recall("salle ouvre", k=3)
    assert [(f.text, f.scope) for f in hits] == [("La salle de sport ouvre à 7 h.", "global")]
    assert FactMemory(store, "bob", emb).recall("salle ouvre", include_global=True)
    # global facts do not belong to any user: forgetting bob keeps them
    forget_user(store, "bob")
    assert len(admin.facts(scope="global")) == 1


def test_reserved_and_bad_arguments() -> None:
    emb = HashEmbeddings()
    with pytest.raises(InvalidInputError, match="reserved"):
        FactMemory(InMemoryStore(), "__global__", emb)
    facts = FactMemory(InMemoryStore(), "alice", emb)
    with pytest.raises(InvalidInputError):
        facts.add([FactCandidate("x")], scope="team")
    with pytest.raises(InvalidInputError):
        facts.add(["just a string"])  # type: ignore[list-item]
    with pytest.raises(InvalidInputError):
        facts.add([FactCandidate("x")], session_id="bad id!")
    with pytest.raises(InvalidInputError):
        facts.recall("   ")
    with pytest.raises(InvalidInputError):
        FactCandidate("   ")
    assert facts.facts() == []


def test_vector_lives_in_the_document_and_round_trips() -> None:
    store = InMemoryStore()
    emb = HashEmbeddings(dim=16)
    facts = FactMemory(store, "alice", emb)
    fid = facts.add([FactCandidate(PILATES_SAT)]).added[0]
    doc = store.get(("facts", "alice"), fid)
    assert doc is not None
    json.dumps(doc.value)  # plain JSON
    stored = decode_vector(doc.value["vector"])
    assert stored.shape == (16,)
    assert stored.tolist() == pytest.approx(emb.embed_documents([PILATES_SAT])[0], abs=1e-6)


def test_tampered_vector_is_a_store_error() -> None:
    store = InMemoryStore()
    facts = FactMemory(store, "alice", HashEmbeddings())
    fid = facts.add([FactCandidate(PILATES_SAT)]).added[0]
    doc = store.get(("facts", "alice"), fid)
    assert doc is not None
    store.put(("facts", "alice"), fid, {**doc.value, "vector": "not base64!!"})
    with pytest.raises(StoreError):
        facts.facts()


def test_recall_uses_the_query_side_and_ranks_by_cosine() -> None:
    emb = TableEmbeddings(
        {"a": [1.0, 0.0], "b": near(0.6), "c": [0.0, 1.0], "question": near(0.9)}, [0.0, 1.0]
    )
    facts = FactMemory(InMemoryStore(), "alice", emb)
    facts.add([FactCandidate("a"), FactCandidate("b"), FactCandidate("c")])
    assert [f.text for f in facts.recall("question", k=2)] == ["a", "b"]
    assert emb.query_calls == ["question"]
    assert facts.recall("question", k=0) == []
    scores = [s for _, s in facts.search("question", k=3)]
    assert scores == sorted(scores, reverse=True)


async def test_async_add_and_recall_match_sync() -> None:
    facts = FactMemory(InMemoryStore(), "alice", HashEmbeddings())
    changes = await facts.aadd([FactCandidate(PILATES_SAT)], session_id="s1", seq=1)
    assert len(changes.added) == 1
    assert [f.text for f in await facts.arecall("Pilates", k=1)] == [PILATES_SAT]


def test_anchors_and_vector_encoding() -> None:
    assert anchors("L'utilisateur habite à Lyon.") == {"lyon"}
    assert anchors("L'utilisateur a un budget de 1500 euros.") == {"1500"}
    assert anchors("L'utilisateur est végétarien.") == frozenset()
    with pytest.raises(InvalidInputError):
        encode_vector([float("nan")])
    with pytest.raises(StoreError):
        decode_vector("AAA=")


@pytest.mark.parametrize(
    ("new", "old", "merged"),
    [
        ("L'utilisateur pratique la guitare.", "L'utilisateur joue de la guitare.", True),
        ("L'utilisateur joue du piano.", "L'utilisateur joue de la guitare.", False),
        ("L'utilisateur a trois enfants.", "L'utilisateur a deux enfants.", False),
        ("L'utilisateur habite à Nantes.", "L'utilisateur habite à Lyon.", False),
        ("L'UTILISATEUR HABITE À LYON", "L'utilisateur habite a Lyon", True),
    ],
)
def test_restates_needs_similarity_anchors_and_the_value_word(
    new: str, old: str, merged: bool
) -> None:
    assert restates(new, old, 0.99, 0.95) is merged
    assert restates(new, old, 0.90, 0.95) is (fold(new) == fold(old))  # below threshold


class _FailingAfter(InMemoryStore):
    """Refuses every ``put`` after the first ``allowed`` ones."""

    def __init__(self, allowed: int) -> None:
        super().__init__()
        self.allowed = allowed

    def put(self, namespace, key, value):  # type: ignore[no-untyped-def]
        if self.allowed <= 0:
            raise StoreError("store went away")
        self.allowed -= 1
        super().put(namespace, key, value)


def test_a_store_failing_during_a_supersede_never_leaves_the_key_without_a_current_fact() -> None:
    # Before 2026-12-02 the old fact was marked replaced before the new one was written: a
    # failure in between left no current fact for the key (and readers saw that gap).
    store = _FailingAfter(allowed=2)  # the first fact, then one of the supersede's two writes
    facts = FactMemory(store, "alice", HashEmbeddings(), clock=Clock())
    facts.add([FactCandidate("L'utilisateur habite à Lyon.", key="city")])
    with pytest.raises(StoreError):
        facts.add([FactCandidate("L'utilisateur habite à Paris.", key="city")])
    current = [f.text for f in facts.facts() if f.key == "city"]
    assert "L'utilisateur habite à Paris." in current
    store.allowed = 10
    facts.add([FactCandidate("L'utilisateur habite à Nantes.", key="city")])  # clears both
    assert [f.text for f in facts.facts() if f.key == "city"] == ["L'utilisateur habite à Nantes."]
