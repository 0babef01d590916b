"""The sample schema: declared features, row conversion and the invariants of `check_sample`."""

import pytest
from datasets import ClassLabel, List

from lettuce_build.core.schema import (
    FEATURES,
    HallucinationSample,
    Span,
    check_sample,
    row_to_sample,
    sample_to_row,
)
from lettuce_build.core.taxonomy import DEFAULT_TAXONOMY


def make_sample(answer="The Eiffel Tower is 330 metres tall.", labels=(), **overrides) -> HallucinationSample:
    fields = dict(
        prompt="Context...\nQuestion...",
        context="The Eiffel Tower is 330 metres tall.",
        question="How tall is the Eiffel Tower?",
        answer=answer,
        labels=list(labels),
        split="train",
        task_type="qa",
        dataset="test",
        context_modality="prose",
    )
    fields.update(overrides)
    return HallucinationSample(**fields)


def numeric_span(start=20, end=23, text="330", **kw) -> Span:
    return Span(
        start=start,
        end=end,
        text=text,
        label="NUMERICAL",
        category=kw.get("category", "contradiction"),
        subcategory=kw.get("subcategory", "numerical"),
    )


def reasons(sample, **kw):
    return [v.reason for v in check_sample(sample, **kw)]


def test_features_declare_labels_as_a_list_of_structs_and_category_as_a_class_label():
    assert isinstance(FEATURES["labels"], List)
    assert set(FEATURES["labels"].feature) == {"start", "end", "text", "label", "category", "subcategory"}
    assert isinstance(FEATURES["category"], ClassLabel)
    assert FEATURES["category"].names == ["contradiction", "unsupported_addition", "fabricated_reference"]


def test_a_valid_hallucinated_sample_has_no_violations():
    sample = make_sample(labels=[numeric_span()], category="contradiction", subcategory="numerical")
    assert check_sample(sample) == []


def test_a_clean_sample_has_no_labels_and_null_category():
    assert check_sample(make_sample()) == []
    assert reasons(make_sample(category="contradiction")) == ["clean_sample_with_category"]


def test_row_conversion_round_trips_a_sample():
    sample = make_sample(
        labels=[numeric_span()],
        category="contradiction",
        subcategory="numerical",
        metadata={"source_id": "x", "n": [1, 2]},
    )
    row = sample_to_row(sample)
    assert row["category"] == 0 and isinstance(row["metadata"], str)
    assert row_to_sample(row) == sample


def test_row_to_sample_accepts_a_category_by_name():
    row = sample_to_row(
        make_sample(labels=[numeric_span()], category="contradiction", subcategory="numerical")
    )
    row["category"] = "contradiction"
    assert row_to_sample(row).category == "contradiction"


def test_offsets_are_code_points_not_bytes_or_utf16_units():
    answer = "🥬 Lettuce is 😀 green"
    start = answer.index("green")
    sample = make_sample(
        answer=answer,
        labels=[numeric_span(start=start, end=start + 5, text="green")],
        category="contradiction",
        subcategory="numerical",
    )
    assert start == 15  # 2 emoji, each one code point (4 UTF-8 bytes, 2 UTF-16 units)
    assert check_sample(sample) == []


def test_a_span_out_of_range_is_a_violation():
    sample = make_sample(
        labels=[numeric_span(start=30, end=99, text="x")], category="contradiction", subcategory="numerical"
    )
    [violation] = check_sample(sample)
    assert (violation.field, violation.reason) == ("labels[0]", "span_out_of_range")


def test_a_text_mismatch_names_both_texts():
    sample = make_sample(labels=[numeric_span(text="331")], category="contradiction", subcategory="numerical")
    [violation] = check_sample(sample, row=7)
    assert violation.reason == "text_mismatch" and violation.row == 7
    assert "'330'" in violation.message and "'331'" in violation.message


def test_unsorted_or_overlapping_spans_are_violations():
    answer = "The Eiffel Tower is 330 metres tall."
    a = Span(
        start=20, end=30, text=answer[20:30], label="N", category="contradiction", subcategory="numerical"
    )
    b = Span(start=4, end=10, text=answer[4:10], label="E", category="contradiction", subcategory="entity")
    c = Span(
        start=24, end=30, text=answer[24:30], label="N", category="contradiction", subcategory="numerical"
    )
    sample = make_sample(labels=[a, b], category="contradiction", subcategory="numerical")
    assert "overlapping_or_unsorted_labels" in reasons(sample)
    sample = make_sample(labels=[a, c], category="contradiction", subcategory="numerical")
    assert "overlapping_or_unsorted_labels" in reasons(sample)


def test_an_unknown_category_names_the_allowed_values():
    sample = make_sample(labels=[numeric_span(category="supported", subcategory=None)], category=None)
    violations = check_sample(sample)
    assert violations[0].reason == "unknown_category"
    assert "contradiction" in violations[0].message and "fabricated_reference" in violations[0].message


def test_a_subcategory_of_another_category_is_a_violation():
    sample = make_sample(
        labels=[numeric_span(category="unsupported_addition", subcategory="numerical")],
        category="unsupported_addition",
        subcategory="numerical",
    )
    assert reasons(sample) == ["unknown_subcategory"]


def test_a_custom_subcategory_is_valid_under_an_extended_taxonomy():
    taxonomy = DEFAULT_TAXONOMY.extended({"contradiction": {"unit": "A unit swapped."}})
    sample = make_sample(
        labels=[numeric_span(subcategory="unit")], category="contradiction", subcategory="unit"
    )
    assert reasons(sample) == ["unknown_subcategory"]
    assert reasons(sample, taxonomy=taxonomy) == []


def test_the_sample_category_must_follow_the_majority_rule():
    sample = make_sample(labels=[numeric_span()], category="fabricated_reference", subcategory="entity")
    assert reasons(sample) == ["category_mismatch"]


def test_a_split_outside_train_validation_test_is_refused_at_the_boundary():
    with pytest.raises(ValueError, match="train"):
        make_sample(split="dev")


def test_a_span_edge_inside_a_character_is_a_violation_and_natural_spans_are_widened(samples):
    from lettuce_build.core.schema import widen_to_graphemes

    sample = samples[0].model_copy(deep=True)
    sample.answer = "Visit the Cafe\u0301 today."
    start = sample.answer.index("Cafe")
    sample.labels = [sample.labels[0].model_copy(update={"start": start, "end": start + 4, "text": "Cafe"})]
    assert [v.reason for v in check_sample(sample)] == ["splits_grapheme"]
    assert widen_to_graphemes(sample.answer, start, start + 4) == (start, start + 5)


def test_the_default_prompt_asks_before_it_gives_the_context():
    from lettuce_build.core.schema import default_prompt

    sample = make_sample()
    prompt = default_prompt(sample.context, sample.question)
    assert prompt == f"Question: {sample.question}\n\nContext:\n{sample.context}"
    assert check_sample(make_sample(prompt=prompt)) == []


def test_a_prompt_that_gives_the_context_before_the_question_is_a_violation():
    sample = make_sample()
    context_first = f"Context:\n{sample.context}\n\nQuestion: {sample.question}"
    assert reasons(make_sample(prompt=context_first)) == ["request_after_context"]
    # a native prompt that asks first passes (RAGTruth's QA prompts)
    native = f"Briefly answer: {sample.question}\nBased on these passages:\n{sample.context}"
    assert check_sample(make_sample(prompt=native)) == []
