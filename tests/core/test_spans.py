"""Applying edits gives exact spans; validation names every reason a set of spans fails for."""

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from lettuce_build.core.edits import Edit, apply_edits
from lettuce_build.core.schema import Span
from lettuce_build.core.spans import CoverageCap, ValidationConfig, validate_spans

# Answers mix ASCII, emoji, CJK, combining marks, newlines and code fences.
PIECES = st.sampled_from(
    [
        "the ",
        "value ",
        "is ",
        "42",
        ". ",
        "\n",
        "```python\n",
        "```\n",
        "def f(x):\n",
        "    return x\n",
        "🥬",
        "😀 ",
        "東京",
        "は",
        "e\u0301",
        "n\u0303o ",
        "  ",
        "\t",
        "foo ",
        "foo ",
        "bar",
    ]
)
ANSWERS = st.lists(PIECES, min_size=1, max_size=30).map("".join)
REPLACEMENTS = st.lists(st.sampled_from(list("abcXYZ 0123\n`東🥬") + ["e\u0301"]), max_size=12).map("".join)


@st.composite
def answers_with_edits(draw):
    answer = draw(ANSWERS)
    edits = []
    for i in range(draw(st.integers(0, 5))):
        if draw(st.booleans()) and len(answer) > 1:
            start = draw(st.integers(0, len(answer) - 1))
            end = draw(st.integers(start + 1, min(len(answer), start + 15)))
            original = answer[start:end]
            if draw(st.booleans()):
                original = " " + original + "\n"  # forces the whitespace-stripped fallback
        else:
            original = draw(st.text(min_size=1, max_size=6))
        edits.append(
            Edit(
                original=original,
                hallucinated=draw(REPLACEMENTS),
                label=f"e{i}",
                category="contradiction",
                subcategory="value",
            )
        )
    return answer, edits


def undo(text: str, answer: str, spans: list[Span], edits: list[Edit]) -> str:
    """Put each edit's original back in place of its span, right to left.

    The spec locates the exact original first and the stripped one only when
    the exact one never occurs, so that decides which text was replaced.
    """
    by_label = {e.label: e for e in edits}
    for span in sorted(spans, key=lambda s: s.start, reverse=True):
        edit = by_label[span.label]
        original = edit.original if edit.original in answer else edit.original.strip()
        text = text[: span.start] + original + text[span.end :]
    return text


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(answers_with_edits())
def test_every_span_sits_at_its_offsets_and_holds_its_replacement(case):
    answer, edits = case
    result = apply_edits(answer, edits)
    by_label = {e.label: e for e in edits}
    for span in result.spans:
        assert result.text[span.start : span.end] == span.text
        edit = by_label[span.label]
        assert span.text in (edit.hallucinated, edit.hallucinated.strip())


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(answers_with_edits())
def test_text_outside_the_spans_is_the_original_outside_the_edits(case):
    answer, edits = case
    result = apply_edits(answer, edits)
    assert undo(result.text, answer, result.spans, edits) == answer


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(answers_with_edits())
def test_spans_are_sorted_non_overlapping_and_every_edit_is_accounted_for(case):
    answer, edits = case
    result = apply_edits(answer, edits)
    ends = [-1] + [s.end for s in result.spans]
    assert all(span.start >= end for span, end in zip(result.spans, ends, strict=False))
    assert len(result.spans) + len(result.dropped) == len(edits)


@given(ANSWERS, st.text(min_size=1, max_size=8))
def test_an_original_absent_from_the_answer_is_dropped_as_not_found(answer, original):
    assume(original not in answer and original.strip() not in answer)
    result = apply_edits(
        answer, [Edit(original=original, hallucinated="replacement", label="x", category="contradiction")]
    )
    assert result.text == answer and result.spans == []
    assert [d.reason for d in result.dropped] == ["not_found"]


def edit(original, hallucinated, label="x"):
    return Edit(
        original=original,
        hallucinated=hallucinated,
        label=label,
        category="contradiction",
        subcategory="value",
    )


def test_repeated_strings_go_left_to_right_to_unused_matches():
    result = apply_edits("foo bar foo bar foo", [edit("foo", "qux1", "a"), edit("foo", "qux2", "b")])
    assert result.text == "qux1 bar qux2 bar foo"
    assert [(s.start, s.end, s.label) for s in result.spans] == [(0, 4, "a"), (9, 13, "b")]


def test_a_repeated_string_with_no_free_match_left_loses_the_overlap():
    result = apply_edits("foo bar", [edit("foo", "qux1", "a"), edit("foo", "qux2", "b")])
    assert result.text == "qux1 bar"
    assert [d.reason for d in result.dropped] == ["overlap"]


def test_the_whitespace_stripped_snippet_is_the_fallback():
    result = apply_edits("It runs on Python 3.11 today.", [edit("  Python 3.11\n", " Python 3.9 ")])
    assert result.text == "It runs on Python 3.9 today."
    assert result.spans[0].text == "Python 3.9"


def test_on_overlap_the_earlier_edit_by_position_is_kept():
    result = apply_edits(
        "alpha beta gamma",
        [edit("beta gamma", "BETA GAMMA", "late"), edit("alpha beta", "ALPHA BETA", "early")],
    )
    assert result.text == "ALPHA BETA gamma"
    assert [s.label for s in result.spans] == ["early"]
    assert [(d.edit.label, d.reason) for d in result.dropped] == [("late", "overlap")]


def test_short_replacements_and_no_ops_are_dropped_with_reasons():
    result = apply_edits("a b c d", [edit("a", "xyz"), edit("b  c d", "b c d"), edit("  ", "long enough")])
    assert [d.reason for d in result.dropped] == ["replacement_too_short", "no_op", "empty_original"]


def test_spans_index_the_new_answer_when_lengths_change():
    result = apply_edits("🥬 one two three", [edit("one", "eleven"), edit("three", "thirty-three")])
    assert result.text == "🥬 eleven two thirty-three"
    for span in result.spans:
        assert result.text[span.start : span.end] == span.text


# --- validation -------------------------------------------------------------------------------


def spans_for(answer: str, *texts: str, category="contradiction", subcategory="value") -> list[Span]:
    spans = []
    for text in texts:
        start = answer.index(text)
        spans.append(
            Span(
                start=start,
                end=start + len(text),
                text=text,
                label="t",
                category=category,
                subcategory=subcategory,
            )
        )
    return spans


def failure_reasons(answer, spans, **kw):
    return [f.reason for f in validate_spans(answer, spans, **kw)]


LONG = "Set the retry limit to five and the timeout to thirty seconds before calling connect(). " * 3


def test_good_spans_pass():
    assert failure_reasons(LONG, spans_for(LONG, "thirty seconds")) == []


def test_no_labels():
    assert failure_reasons(LONG, []) == ["no_labels"]


def test_prompt_residue_unless_the_clean_answer_already_had_it():
    answer = LONG + " Explanation: changed the timeout."
    assert "prompt_residue" in failure_reasons(answer, spans_for(answer, "thirty seconds"), clean_answer=LONG)
    assert "prompt_residue" not in failure_reasons(
        answer, spans_for(answer, "thirty seconds"), clean_answer=answer
    )


def test_fences_required_but_missing_or_unbalanced():
    assert "no_code_fences" in failure_reasons(LONG, spans_for(LONG, "thirty"), require_fences=True)
    answer = "Use this:\n```python\nconnect(timeout=30)\n"
    assert "unbalanced_fences" in failure_reasons(
        answer, spans_for(answer, "timeout=30"), require_fences=True
    )


def test_coverage_over_the_cap_for_the_answer_length():
    answer = "The limit is five requests."  # 27 chars: cap 0.80
    assert "coverage_too_high" in failure_reasons(answer, spans_for(answer, "The limit is five requests"))
    assert "coverage_too_high" not in failure_reasons(answer, spans_for(answer, "five requests"))


def test_coverage_caps_step_down_with_length():
    config = ValidationConfig()
    assert [config.coverage_cap(n) for n in (200, 201, 500, 1500, 1501)] == [0.80, 0.60, 0.60, 0.45, 0.40]
    tight = ValidationConfig(coverage_caps=[CoverageCap(max_answer_chars=10_000, max_coverage=0.01)])
    assert "coverage_too_high" in failure_reasons(LONG, spans_for(LONG, "thirty seconds"), config=tight)


def test_span_too_short_and_too_long():
    assert "span_too_short" in failure_reasons(LONG, spans_for(LONG, "five"[:3]))
    long_answer = "x" * 2000
    span = Span(start=0, end=501, text="x" * 501, label="t", category="contradiction", subcategory="value")
    assert "span_too_long" in failure_reasons(long_answer, [span])


def test_overlapping_or_unsorted_labels():
    spans = spans_for(LONG, "timeout to thirty", "retry limit")
    assert "overlapping_or_unsorted_labels" in failure_reasons(LONG, spans)


def test_leaky_words_in_a_span_case_insensitively():
    answer = LONG + " This is Incorrectly documented."
    assert "leaky_label_text" in failure_reasons(answer, spans_for(answer, "Incorrectly documented"))
    answer = LONG + " It fixes a debugging aid."  # 'debugging' is not the word 'bug'
    assert "leaky_label_text" not in failure_reasons(answer, spans_for(answer, "debugging aid"))


def test_in_fence_enforcement_for_mixed_prose_and_code():
    answer = "Call it like this:\n```python\nclient.connect(timeout=30)\n```\nIt retries five times."
    assert "label_outside_code_block" in failure_reasons(
        answer, spans_for(answer, "retries five times"), enforce_in_fence=True
    )
    assert failure_reasons(answer, spans_for(answer, "timeout=30"), enforce_in_fence=True) == []


def test_an_answer_without_fences_counts_as_all_code():
    answer = "client.connect(timeout=30)\nclient.close()\n" * 4
    assert failure_reasons(answer, spans_for(answer, "timeout=30"), enforce_in_fence=True) == []


def test_a_fabricated_reference_must_introduce_a_name_absent_from_context_and_clean_answer():
    context = "def connect(timeout): ...\ndef close(): ..."
    clean = "Call connect(timeout=30) and then close()." * 2
    invented = clean.replace("close()", "shutdown_pool()", 1)
    reused = clean.replace("close()", "connect()", 1)
    kw = dict(context=context, clean_answer=clean)
    fab = dict(category="fabricated_reference", subcategory="identifier")
    assert failure_reasons(invented, spans_for(invented, "shutdown_pool()", **fab), **kw) == []
    assert "fabrication_not_absent" in failure_reasons(reused, spans_for(reused, "connect()", **fab), **kw)


@pytest.mark.parametrize("reason_count", [1])
def test_several_failures_are_all_reported(reason_count):
    answer = "Wrong value."
    reasons = failure_reasons(answer, spans_for(answer, "Wrong value."))
    assert {"coverage_too_high", "leaky_label_text"} <= set(reasons)


def test_an_edit_never_separates_a_letter_from_its_combining_accent():
    answer = "The Cafe\u0301 opens at 8 and the cafe closes at 20."
    cut = apply_edits(answer, [edit("Cafe", "Bistro")])
    assert cut.spans == [] and [d.reason for d in cut.dropped] == ["splits_grapheme"]
    whole = apply_edits(answer, [edit("Cafe\u0301", "Bistro")])
    assert whole.text.startswith("The Bistro opens") and whole.dropped == []
    fused = apply_edits(answer, [edit("8", "\u0301nine")])
    assert [d.reason for d in fused.dropped] == ["splits_grapheme"]


def test_applied_edits_are_the_ones_behind_the_spans():
    first, second = edit("alpha", "gamma"), edit("beta", "delta")
    result = apply_edits("alpha then beta", [second, first])
    assert result.applied == [first, second] and [s.text for s in result.spans] == ["gamma", "delta"]
