"""An edit's type follows what it does, built from cases read in real builds (issue 46)."""

from lettuce_build.core.edit_types import edit_type
from lettuce_build.core.words import negations


def test_an_added_negation_is_a_contradiction_whatever_it_was_called():
    # seen live: a negation added to a README sentence, labelled fabricated_reference/entity
    original = "Flask is a lightweight WSGI web application framework."
    negated = "Flask is not a lightweight WSGI web application framework."
    assert edit_type(original, negated, "fabricated_reference", "entity") == ("contradiction", None)
    assert edit_type(
        "It needs a compiler.", "It doesn't need a compiler.", "unsupported_addition", "claim"
    ) == (
        "contradiction",
        None,
    )
    # a contradiction the model typed keeps its subcategory
    assert edit_type(original, negated, "contradiction", "relational") == ("contradiction", "relational")


def test_a_swapped_number_is_numerical_and_a_swapped_date_temporal():
    assert edit_type("Python 3.10", "Python 3.8", "unsupported_addition", "claim") == (
        "contradiction",
        "numerical",
    )
    assert edit_type("released in 2021", "released in 2019", "contradiction", "entity") == (
        "contradiction",
        "temporal",
    )
    # a number in code passed as an argument stays a value, as the model typed it
    assert edit_type("page(size=50)", "page(size=500)", "contradiction", "value") == (
        "contradiction",
        "value",
    )


def test_a_swapped_name_is_an_entity_contradiction_unless_asked_for_as_fabricated():
    assert edit_type("PostgreSQL", "MySQL", "unsupported_addition", "claim") == ("contradiction", "entity")
    assert edit_type("PostgreSQL", "MySQL", "fabricated_reference", "entity") == (
        "fabricated_reference",
        "entity",
    )


def test_other_edits_keep_the_type_they_were_given():
    added = ("It reads markdown.", "It reads markdown and publishes to Medium.")
    assert edit_type(*added, "unsupported_addition", "claim") == ("unsupported_addition", "claim")


def test_negations_are_counted_with_contractions():
    assert negations("It isn't fast and never was.") == {"not": 1, "never": 1}


def test_one_negation_for_another_is_no_change_of_claim():
    said = ("It cannot determine the skill.", "It can't determine the skill at all.")
    assert edit_type(*said, "unsupported_addition", "claim") == ("unsupported_addition", "claim")
