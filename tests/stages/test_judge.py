"""The judge's stages and figures: what a verdict fails, how spans are shown, Cohen's kappa."""

import json

import pytest

from lettuce_build.engine.records import Judgement
from lettuce_build.engine.stage import ParseFailure
from lettuce_build.stages.judge import (
    AnswerJudgeStage,
    SpanJudgeStage,
    SpanVerdict,
    SpanVerdicts,
    Unsupported,
    answer_sentences,
    cohen_kappa,
    judge_report,
    marked_answer,
)

CONTEXT = "fastgrid renders large tables in the terminal. The default page size is 50 rows."
ANSWER = "fastgrid renders large tables in the terminal. The default page size is 50 rows."
ITEM = {"key": "k", "context": CONTEXT, "question": "What does fastgrid render?", "answer": ANSWER}


def test_an_answer_is_judged_sentence_by_sentence_and_any_unsupported_one_fails_it():
    stage = AnswerJudgeStage()
    assert answer_sentences(ANSWER) == [
        "fastgrid renders large tables in the terminal.",
        "The default page size is 50 rows.",
    ]
    assert "1. fastgrid renders" in stage.render(ITEM).messages[-1].content
    grounded = json.loads(stage.parse(ITEM, Unsupported(unsupported=[]))["judgement"])
    assert stage.rejection(grounded) is None
    ungrounded = json.loads(stage.parse(ITEM, Unsupported(unsupported=[2]))["judgement"])
    failure = stage.rejection(ungrounded)
    assert failure.reason == "judge_unsupported" and "page size is 50" in failure.detail
    # the schema only lets the judge name sentences that exist
    numbers = stage.item_schema(ITEM)["properties"]["unsupported"]["items"]["enum"]
    assert numbers == [1, 2]
    with pytest.raises(ParseFailure, match="judge_out_of_range"):
        stage.parse(ITEM, Unsupported(unsupported=[3]))


HALLUCINATED = "fastgrid renders large tables in the browser. The default page size is 80 rows."
LABELS = [
    {
        "start": 63,
        "end": 79,
        "text": "80 rows",
        "label": "x",
        "category": "contradiction",
        "subcategory": "numerical",
    },
    {
        "start": 39,
        "end": 46,
        "text": "browser",
        "label": "x",
        "category": "unsupported_addition",
        "subcategory": "claim",
    },
]
for span in LABELS:  # the spans' offsets, found rather than counted by hand
    span["start"] = HALLUCINATED.index(span["text"])
    span["end"] = span["start"] + len(span["text"])
SPAN_ITEM = {**ITEM, "hallucinated_answer": HALLUCINATED, "labels": LABELS}


def test_spans_are_shown_marked_in_answer_order_without_their_intended_type():
    marked = marked_answer(HALLUCINATED, LABELS)
    assert (
        marked
        == "fastgrid renders large tables in the [[1: browser]]. The default page size is [[2: 80 rows]]."
    )
    user = SpanJudgeStage().render(SPAN_ITEM).messages[-1].content
    assert "[[1: browser]]" in user and "contradiction" not in user and "numerical" not in user


def test_a_span_judged_supported_fails_the_injection_and_the_verdict_keeps_the_intended_category():
    stage = SpanJudgeStage()
    response = SpanVerdicts(
        spans=[
            SpanVerdict(span=1, verdict="unsupported", category="unsupported_addition"),
            SpanVerdict(span=2, verdict="supported", category="supported"),
        ]
    )
    verdict = json.loads(stage.parse(SPAN_ITEM, response)["judgement"])
    assert verdict["spans"][0] == {
        "text": "browser",
        "verdict": "unsupported",
        "category": "unsupported_addition",
        "intended": "unsupported_addition",
    }
    failure = stage.rejection(verdict)
    assert failure.reason == "judge_supported" and "80 rows" in failure.detail
    both_false = SpanVerdicts(
        spans=[SpanVerdict(span=n, verdict="contradicted", category="contradiction") for n in (1, 2)]
    )
    assert stage.rejection(json.loads(stage.parse(SPAN_ITEM, both_false)["judgement"])) is None
    with pytest.raises(ParseFailure, match="judge_incomplete"):
        stage.parse(
            SPAN_ITEM, SpanVerdicts(spans=[SpanVerdict(span=1, verdict="unsupported", category="supported")])
        )


def test_cohen_kappa_matches_a_hand_computation_and_is_undefined_without_variation():
    # observed 3/4; expected (2x1 + 2x3)/16 = 1/2; kappa = (3/4 - 1/2) / (1 - 1/2)
    assert cohen_kappa([("a", "a"), ("a", "b"), ("b", "b"), ("b", "b")]) == pytest.approx(0.5)
    assert cohen_kappa([("a", "a"), ("b", "b")]) == pytest.approx(1.0)
    assert cohen_kappa([("a", "b"), ("b", "a")]) == pytest.approx(-1.0)
    assert cohen_kappa([("a", "a"), ("a", "a")]) is None
    assert cohen_kappa([]) is None


def verdict(check, judge, key, spans=None, unsupported=None, passed=True):
    body = {"spans": spans} if spans is not None else {"sentences": 1, "unsupported": unsupported or []}
    return Judgement(key=key, stage="s", check=check, judge=judge, attempt=0, passed=passed, verdict=body)


def test_the_report_counts_rates_category_agreement_and_the_two_judges_kappa():
    def span(v, category, intended="contradiction"):
        return {"text": "x", "verdict": v, "category": category, "intended": intended}

    judgements = [
        verdict("judge_answer", "a", "1"),
        verdict("judge_answer_2", "b", "1"),
        verdict("judge_answer", "a", "2", unsupported=["x"], passed=False),
        verdict("judge_answer_2", "b", "2"),
        verdict("judge_spans", "a", "3", spans=[span("contradicted", "contradiction")]),
        verdict("judge_spans_2", "b", "3", spans=[span("contradicted", "unsupported_addition")]),
        verdict("judge_spans", "a", "4", spans=[span("unsupported", "unsupported_addition")]),
        verdict("judge_spans_2", "b", "4", spans=[span("supported", "supported")], passed=False),
    ]
    report = judge_report(["a", "b"], judgements)
    assert (report.answers_judged, report.answers_grounded) == (4, 3)
    assert (report.injections_judged, report.injections_confirmed) == (4, 3)
    assert (report.spans_false, report.categories_agreeing) == (3, 1)
    # answers: (grounded, grounded), (not, grounded) -> observed 1/2, expected (1x2)/4 -> kappa 0
    assert report.kappa_answers == pytest.approx(0.0)
    # spans: (contradicted, contradicted), (unsupported, supported): observed 1/2, expected 1/4
    assert report.kappa_spans == pytest.approx(1 / 3)
    text = "\n".join(report.lines())
    assert "clean answers grounded: 0.75 (3 of 4)" in text and "Cohen's kappa" in text
    assert judge_report(["a"], judgements[:1]).kappa_answers is None
