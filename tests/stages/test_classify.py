"""The classify stage: one of the three injectable categories, out-of-set subcategories nulled, all or
nothing."""

import pytest

from lettuce_build.engine.stage import ParseFailure
from lettuce_build.stages.classify import (
    ClassifyStage,
    SpanClass,
    explode_spans,
    gather_labels,
    mark_span,
)

ITEM = {
    "key": "q1",
    "context": "Paris is the capital of France.",
    "answer": "The capital is Lyon, a big city.",
    "span_start": 15,
    "span_end": 19,
}


def test_the_span_is_marked_in_the_prompt():
    assert mark_span("The capital is Lyon.", 15, 19) == "The capital is [[Lyon]]."
    request = ClassifyStage().render(ITEM)
    assert "[[Lyon]]" in request.messages[-1].content and request.temperature == 0.0


def test_a_valid_subcategory_is_kept_and_an_out_of_set_one_becomes_null():
    stage = ClassifyStage()
    kept = stage.parse(ITEM, SpanClass(category="contradiction", subcategory="entity"))
    assert kept == {"span_category": "contradiction", "span_subcategory": "entity"}
    nulled = stage.parse(ITEM, SpanClass(category="unsupported_addition", subcategory="identifier"))
    assert nulled == {"span_category": "unsupported_addition", "span_subcategory": None}


def test_supported_is_never_a_classification():
    with pytest.raises(ValueError):
        SpanClass(category="supported")
    with pytest.raises(ParseFailure):
        ClassifyStage().parse(ITEM, SpanClass.model_construct(category="supported", subcategory=None))


def test_explode_then_gather_is_all_or_nothing_per_item():
    items = [
        {"key": "a", "context": "c", "answer": "x" * 40, "spans": [(0, 4), (10, 14)]},
        {"key": "b", "context": "c", "answer": "y" * 40, "spans": [(1, 5)]},
    ]
    rows = explode_spans(items)
    assert [r["key"] for r in rows] == ["a::span0", "a::span1", "b::span0"]
    classified = [
        dict(r, span_category="contradiction", span_subcategory=None) for r in rows if r["key"] != "a::span1"
    ]
    complete, failed = gather_labels(classified, ["a::span1"], {"a": 2, "b": 1})
    assert list(complete) == ["b"] and failed == {"a"}
