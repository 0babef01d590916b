"""The taxonomy: categories, subcategories, native label maps and the sample-level rule."""

import json

import pytest

from lettuce_build.core.errors import TaxonomyError
from lettuce_build.core.taxonomy import (
    DEFAULT_TAXONOMY,
    INJECTABLE_CATEGORIES,
    LABEL_MAPS,
    MappedLabel,
    Taxonomy,
    map_label,
    refine_ragtruth,
    sample_category,
)

# The spec's tables, written out independently of the module so a typo in either shows.
EXPECTED_MAPS = {
    ("ragtruth", "Evident Conflict"): ("contradiction", None),
    ("ragtruth", "Subtle Conflict"): ("contradiction", None),
    ("ragtruth", "Evident Baseless Info"): ("unsupported_addition", "claim"),
    ("ragtruth", "Subtle Baseless Info"): ("unsupported_addition", "elaboration"),
    ("markdown", "NUMERICAL"): ("contradiction", "numerical"),
    ("markdown", "TEMPORAL"): ("contradiction", "temporal"),
    ("markdown", "ENTITY"): ("contradiction", "entity"),
    ("markdown", "RELATIONAL"): ("contradiction", "relational"),
    ("markdown", "FABRICATED"): ("fabricated_reference", "entity"),
    ("markdown", "CLAIM"): ("unsupported_addition", "claim"),
    ("paper", "NUMERICAL"): ("contradiction", "numerical"),
    ("paper", "ENTITY"): ("contradiction", "entity"),
    ("paper", "RELATIONAL"): ("contradiction", "relational"),
    ("paper", "METHODOLOGICAL"): ("contradiction", "value"),
    ("paper", "CITATIONAL"): ("contradiction", "entity"),
    ("code_agent", "wrong_implementation"): ("contradiction", "value"),
    ("code_agent", "unrequested_change"): ("unsupported_addition", "behavior"),
    ("code_agent", "fabricated_api"): ("fabricated_reference", "identifier"),
    ("code_agent", "omission"): ("omission", None),
    ("legacy_code", "structural"): ("fabricated_reference", "identifier"),
    ("legacy_code", "behavioral"): ("contradiction", "value"),
    ("legacy_code", "semantic"): ("unsupported_addition", "behavior"),
    ("fava", "Entity"): ("contradiction", "entity"),
    ("fava", "Relation"): ("contradiction", "relational"),
    ("fava", "Contradictory"): ("contradiction", None),
    ("fava", "Invented"): ("fabricated_reference", "entity"),
    ("fava", "Subjective"): ("unsupported_addition", "subjective"),
    ("fava", "Unverifiable"): ("unsupported_addition", "claim"),
    ("prose", "FACTUAL"): ("contradiction", "entity"),
    ("prose", "TEMPORAL"): ("contradiction", "temporal"),
    ("prose", "NUMERICAL"): ("contradiction", "numerical"),
    ("prose", "RELATIONAL"): ("contradiction", "relational"),
    ("prose", "CONTEXTUAL"): ("unsupported_addition", "claim"),
    ("prose", "OMISSION"): ("omission", None),
    ("prose", "FABRICATED_ENTITY"): ("fabricated_reference", "entity"),
    ("prose", "SUBJECTIVE"): ("unsupported_addition", "subjective"),
    ("prose", "UNVERIFIABLE"): ("unsupported_addition", "claim"),
}


def test_there_are_three_injectable_categories_and_thirteen_subcategories():
    assert INJECTABLE_CATEGORIES == ("contradiction", "unsupported_addition", "fabricated_reference")
    pairs = [(c, s) for c in INJECTABLE_CATEGORIES for s in DEFAULT_TAXONOMY.subcategories[c]]
    assert len(pairs) == 13
    assert ("contradiction", "entity") in pairs and ("fabricated_reference", "entity") in pairs


@pytest.mark.parametrize(("key", "expected"), sorted(EXPECTED_MAPS.items()))
def test_map_label_follows_the_spec_for_every_entry(key, expected):
    source, native = key
    assert map_label(native, source) == MappedLabel(category=expected[0], subcategory=expected[1])


def test_every_map_entry_is_covered_by_the_spec_table():
    entries = {(source, native) for source, table in LABEL_MAPS.items() for native in table}
    assert entries == set(EXPECTED_MAPS)


def test_every_mapped_label_is_valid_in_the_taxonomy():
    for table in LABEL_MAPS.values():
        for mapped in table.values():
            assert mapped.document_level or DEFAULT_TAXONOMY.is_valid(mapped.category, mapped.subcategory)


def test_map_label_tolerates_case_and_separator_spellings():
    assert map_label("evident_conflict", "ragtruth").category == "contradiction"
    assert map_label("Wrong Implementation", "code_agent").subcategory == "value"


def test_map_label_raises_on_an_unknown_label_and_names_the_allowed_ones():
    with pytest.raises(TaxonomyError, match=r"markdown: unknown native label 'SPELLING'.*NUMERICAL"):
        map_label("SPELLING", "markdown")


def test_map_label_raises_on_an_unknown_source():
    with pytest.raises(TaxonomyError, match="unknown label source 'halueval'"):
        map_label("Entity", "halueval")


def test_map_label_never_falls_back_on_an_empty_label():
    with pytest.raises(TaxonomyError):
        map_label("", "fava")


def test_ragtruth_refinement_turns_an_unseen_capitalised_name_into_a_fabricated_entity():
    baseless = map_label("Evident Baseless Info", "ragtruth")
    refined = refine_ragtruth(baseless, "as confirmed by Dr. Okonkwo", "The study found x.")
    assert refined == MappedLabel(category="fabricated_reference", subcategory="entity")


def test_ragtruth_refinement_keeps_a_baseless_span_whose_names_are_in_the_context():
    baseless = map_label("Subtle Baseless Info", "ragtruth")
    assert refine_ragtruth(baseless, "in Paris too", "He lived in paris.") == baseless


def test_ragtruth_refinement_leaves_conflicts_alone():
    conflict = map_label("Evident Conflict", "ragtruth")
    assert refine_ragtruth(conflict, "Okonkwo", "nothing") == conflict


def test_sample_category_is_the_majority_with_ties_to_the_first_span():
    spans = [
        ("unsupported_addition", "claim"),
        ("contradiction", "entity"),
        ("contradiction", "numerical"),
        ("contradiction", "numerical"),
    ]
    assert sample_category(spans).model_dump() == {"category": "contradiction", "subcategory": "numerical"}
    tie = [("fabricated_reference", "entity"), ("contradiction", "value")]
    assert sample_category(tie).category == "fabricated_reference"


def test_sample_category_of_a_clean_sample_is_null():
    assert sample_category([]).model_dump() == {"category": None, "subcategory": None}


def test_sample_subcategory_ignores_null_subcategories():
    spans = [("contradiction", None), ("contradiction", None), ("contradiction", "temporal")]
    assert sample_category(spans).subcategory == "temporal"


def test_a_taxonomy_file_adds_subcategories(tmp_path):
    path = tmp_path / "extra.yaml"
    path.write_text("subcategories:\n  contradiction:\n    unit: A unit of measure swapped for another.\n")
    taxonomy = Taxonomy.from_file(path)
    assert taxonomy.is_valid("contradiction", "unit")
    assert not DEFAULT_TAXONOMY.is_valid("contradiction", "unit")


def test_a_json_taxonomy_file_works_too(tmp_path):
    path = tmp_path / "extra.json"
    path.write_text(json.dumps({"subcategories": {"fabricated_reference": {"url": "A made-up URL."}}}))
    assert Taxonomy.from_file(path).definition("fabricated_reference", "url") == "A made-up URL."


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("subcategories:\n  supported:\n    x: y\n", "cannot extend unknown category 'supported'"),
        ("subcategories:\n  contradiction:\n    entity: again\n", "built in and cannot be redefined"),
        ("subcategories:\n  contradiction:\n    Bad Name: y\n", "lower_snake_case"),
        ("categories: {}\n", "Extra inputs are not permitted"),
    ],
)
def test_a_bad_taxonomy_file_is_refused_with_a_reason(tmp_path, content, message):
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    with pytest.raises(TaxonomyError, match=message):
        Taxonomy.from_file(path)
