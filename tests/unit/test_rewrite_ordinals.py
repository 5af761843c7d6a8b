"""Ordinals counted by code: which item of which list "le second", "the last one" mean."""

from __future__ import annotations

import pytest

from memory_chains.rewrite import QueryRewriter
from memory_chains.rewrite._ordinals import enumerated, ordinal_index, ordinal_referent
from memory_chains.testing import ScriptedChatModel


@pytest.mark.parametrize(
    ("question", "index"),
    [
        ("le premier, il ouvre à quelle heure ?", 0),
        ("Et la deuxième option ?", 1),
        ("la 2e a un parking ?", 1),
        ("La Troisième, elle est loin ?", 2),
        ("et le dernier ?", -1),
        ("what about the first one?", 0),
        ("is the 3rd one cheaper?", 2),
        ("and the latter?", -1),
        ("What about option 2?", 1),
        ("number 4 - is it refundable?", 3),
        ("C'est la première fois que je viens.", None),
        ("Is this the last time I pay?", None),
        ("Vous ouvrez le 2 mai ?", None),
        ("Ça coûte 3 € ?", None),
    ],
)
def test_ordinal_index(question: str, index: int | None) -> None:
    assert ordinal_index(question) == index


@pytest.mark.parametrize(
    ("text", "items"),
    [
        (
            "Trois ateliers : 1) la poterie du lundi, 40 € ; 2) l'aquarelle, 35 € ; 3) le "
            "fusain, 30 €.",
            ["poterie du lundi", "aquarelle", "fusain"],
        ),
        (
            "D'abord le contrôle technique, ensuite la vidange, enfin le changement des pneus.",
            ["contrôle technique", "vidange", "changement des pneus"],
        ),
        (
            "Two routes: first, the Coastal Path, 12 km; second, the Ridge Trail, 8 km.",
            ["Coastal Path", "Ridge Trail"],
        ),
        (
            "Nous avons trois salles : la salle Iris (20 places), la salle Lotus, au premier "
            "étage, et la salle Orchidée, rue Haute.",
            ["salle Iris", "salle Lotus", "salle Orchidée"],
        ),
        ("Oui : la salle est libre, donc vous pouvez venir, mais appelez avant.", []),
        ("La salle Iris est libre mardi.", []),
    ],
)
def test_enumerated(text: str, items: list[str]) -> None:
    assert enumerated(text) == items


def test_the_list_is_the_latest_one_long_enough() -> None:
    turns = [
        (
            "assistant",
            "Trois circuits : le circuit des Crêtes, le circuit du Lac et le circuit des Forges.",
        ),
        ("user", "Le circuit du Lac me tente."),
        ("assistant", "Deux départs : d'abord Annecy, puis Talloires."),
    ]
    assert ordinal_referent("le premier, c'est à quelle heure ?", turns) == "Annecy"
    assert ordinal_referent("et le troisième, il est long ?", turns) == "circuit des Forges"
    assert ordinal_referent("le dernier ?", turns) == "Talloires"
    assert ordinal_referent("le quatrième ?", turns) is None
    assert ordinal_referent("et le prix ?", turns) is None


def test_names_in_the_order_a_turn_gives_them_when_no_list_is_written() -> None:
    turns = [("user", "J'hésite entre le Kayak Orca et le Kayak Beluga."), ("assistant", "Oui.")]
    names = ["Kayak Beluga", "Kayak Orca"]  # most recent first, as candidate_entities gives
    assert ordinal_referent("le second est stable ?", turns, names) == "Kayak Beluga"
    # one name is not a list
    assert ordinal_referent("le premier ?", [("user", "Le Kayak Orca ?")], ["Kayak Orca"]) is None


def test_the_model_is_shown_only_the_counted_item_and_its_question_is_kept() -> None:
    answer = '{"about": ["circuit des Forges"], "question": "Le circuit des Forges est-il long ?"}'
    llm = ScriptedChatModel(replies=[answer])
    turns = [
        ("user", "Quels circuits proposez-vous ?"),
        (
            "assistant",
            "Trois circuits : le circuit des Crêtes, le circuit du Lac et le circuit des Forges.",
        ),
    ]
    result = QueryRewriter(llm).rewrite("et le dernier, il est long ?", turns)
    assert result.standalone == "Le circuit des Forges est-il long ?"
    request = llm.calls[0][-1].content
    assert request.splitlines()[0] == "Names: circuit des Forges"


def test_a_model_answer_about_another_item_is_repaired_with_the_counted_one() -> None:
    # the model keeps "le dernier" and names nothing: the rules put the counted item in
    answer = '{"about": [], "question": "Le dernier est-il long ?"}'
    turns = [
        (
            "assistant",
            "Trois circuits : le circuit des Crêtes, le circuit du Lac et le circuit des Forges.",
        ),
    ]
    result = QueryRewriter(ScriptedChatModel(replies=[answer])).rewrite(
        "le dernier est long ?", turns
    )
    assert "circuit des Forges" in result.standalone
    assert result.method == "rules"


def test_without_a_model_the_rules_use_the_counted_item() -> None:
    turns = [("assistant", "Deux offres : 1) la Formule Cèdre ; 2) la Formule Érable.")]
    result = QueryRewriter(use_model=False).rewrite("la deuxième est résiliable ?", turns)
    assert "Formule Érable" in result.standalone


def test_the_rules_replace_the_whole_reference_noun_included() -> None:
    turns = [
        (
            "assistant",
            "Nous avons trois salles : la salle Iris, la salle Lotus et la salle Orchidée.",
        )
    ]
    rewriter = QueryRewriter(use_model=False)
    assert rewriter.rewrite("la deuxième salle, elle est libre ?", turns).standalone == (
        "La salle Lotus, elle est libre ?"
    )
    assert rewriter.rewrite("et la dernière, elle a un projecteur ?", turns).standalone == (
        "et la salle Orchidée, elle a un projecteur ?"
    )
