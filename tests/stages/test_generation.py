"""Generator mode: spans recovered by diff from known edits, paraphrase, unicode, an unrelated
answer (located from the reports), typing from reports, and the stage's validation."""

import json

import pytest

from lettuce_build.engine.stage import ParseFailure
from lettuce_build.stages.generation import (
    Generated,
    GenerateStage,
    Reported,
    diff_spans,
    recover_spans,
)

CLEAN = "quillmap needs Python 3.10 or newer and writes one JSON search index per site."


def marked(text, spans):
    return [text[a:b] for a, b in spans]


def test_the_diff_marks_known_edits_as_whole_words():
    generated = CLEAN.replace("3.10", "3.8").replace("one JSON", "two YAML")
    assert marked(generated, diff_spans(CLEAN, generated)) == ["Python 3.8", "two YAML"]  # >= 4 characters


def test_an_insertion_is_marked_and_a_deletion_leaves_nothing():
    inserted = CLEAN.replace("per site.", "per site, and uploads it to a CDN.")
    assert marked(inserted, diff_spans(CLEAN, inserted)) == ["and uploads it to a CDN"]
    deleted = CLEAN.replace(" or newer", "")
    assert diff_spans(CLEAN, deleted) == []


def test_unicode_offsets_are_code_points():
    clean = "Le café ouvre à 8 h, fermé le lundi — 東京 branch."
    generated = clean.replace("8 h", "9 h").replace("東京", "大阪")
    spans = diff_spans(clean, generated)
    texts = marked(generated, spans)
    assert len(texts) == 2 and "9" in texts[0] and "大阪" in texts[1] and "東京" not in generated
    assert generated.index("大阪") >= spans[1][0]  # offsets count code points, not bytes


def test_spans_take_the_type_of_the_report_they_overlap_else_an_unsupported_claim():
    generated = CLEAN.replace("3.10", "3.8").replace("per site", "per site, cached for a week")
    reported = [Reported(type="contradiction/numerical", phrase="Python 3.8")]
    recovered = recover_spans(CLEAN, generated, reported)
    assert recovered.origin == "diff"
    assert [(s.text, s.category, s.subcategory, s.label) for s in recovered.spans] == [
        ("Python 3.8", "contradiction", "numerical", "contradiction/numerical"),
        ("cached for a week", "unsupported_addition", "claim", "unreported"),
    ]


def test_a_paraphrase_only_answer_gives_diff_spans_no_report_covers():
    generated = "quillmap requires Python 3.10 or later and writes one JSON search index per site."
    recovered = recover_spans(CLEAN, generated, [])
    assert recovered.origin == "diff" and [s.text for s in recovered.spans] == ["requires", "later"]
    assert all(s.label == "unreported" for s in recovered.spans)


def test_an_answer_sharing_nothing_with_the_clean_one_takes_the_located_reports():
    generated = "The tool is configured in TOML and ships a plugin for Vim."
    reported = [
        Reported(type="fabricated_reference/entity", phrase="a plugin for Vim"),
        Reported(type="unsupported_addition/claim", phrase="not in the answer at all"),
    ]
    recovered = recover_spans(CLEAN, generated, reported)
    assert recovered.origin == "located" and recovered.similarity < 0.5
    assert [(s.text, s.category) for s in recovered.spans] == [("a plugin for Vim", "fabricated_reference")]


ITEM = {
    "key": "k1",
    "context": CLEAN + " It is written in Python.",
    "question": "What does it need?",
    "answer": CLEAN,
}


def test_the_stage_asks_for_seeded_types_and_records_how_the_spans_were_made():
    stage = GenerateStage()
    assert stage.requested(ITEM) == stage.requested(ITEM) and 1 <= len(stage.requested(ITEM)) <= 3
    request = stage.render(ITEM)
    assert all(t in request.messages[-1].content for t in stage.requested(ITEM))
    generated = CLEAN.replace("3.10", "3.6")
    out = stage.parse(
        ITEM,
        Generated(answer=generated, hallucinations=[Reported(type="contradiction/numerical", phrase="3.6")]),
    )
    record = json.loads(out["injection"])
    assert record["mode"] == "generate" and record["span_origin"] == "diff"
    assert out["labels"][0]["text"] == "Python 3.6" and out["hallucinated_answer"] == generated


@pytest.mark.parametrize(
    ("answer", "reason"),
    [(CLEAN, "no_change"), ("Totally different text here, nothing alike at all.", "no_spans")],
)
def test_an_unusable_generation_is_a_failure_with_a_reason(answer, reason):
    with pytest.raises(ParseFailure) as failure:
        GenerateStage().parse(ITEM, Generated(answer=answer, hallucinations=[]))
    assert failure.value.reason == reason


def test_generated_spans_meet_the_injection_s_rules():
    leaky = CLEAN.replace("one JSON", "one incorrect JSON")
    with pytest.raises(ParseFailure) as failure:
        GenerateStage().parse(ITEM, Generated(answer=leaky, hallucinations=[]))
    assert failure.value.reason == "leaky_label_text"
