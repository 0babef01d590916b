"""Plausibility: each hallucinated span scored by the model against the text it replaced."""

import json

import pytest

from lettuce_build.engine.records import Judgement
from lettuce_build.llm.protocol import Scores, scored_tokens
from lettuce_build.stages.plausibility import MAX_DROP, PlausibilityCheck, plausibility_report, span_pairs

CLEAN = "Flask is a lightweight WSGI web application framework. It is designed to make getting started quick."
#: real cases of issue 46: a negation added (plausible), garbage spliced in (implausible)
NEGATED = CLEAN.replace("Flask is a lightweight", "Flask is not a lightweight")
GARBAGE = CLEAN.replace("lightweight WSGI", "Able-Bixbaggies.com/x")


def _labels(clean, hallucinated):
    start = next(i for i, (a, b) in enumerate(zip(clean, hallucinated, strict=False)) if a != b)
    end = len(hallucinated) - next(
        i for i, (a, b) in enumerate(zip(clean[::-1], hallucinated[::-1], strict=False)) if a != b
    )
    return [{"start": start, "end": end, "text": hallucinated[start:end]}]


def _item(hallucinated):
    return {
        "key": "k",
        "context": CLEAN,
        "question": "What is Flask?",
        "answer": CLEAN,
        "hallucinated_answer": hallucinated,
        "labels": _labels(CLEAN, hallucinated),
    }


def test_a_span_is_paired_with_the_clean_text_it_replaced_under_the_same_prefix():
    [(prefix, original, edited, tail)] = span_pairs(CLEAN, GARBAGE, _item(GARBAGE)["labels"])
    assert prefix + edited == GARBAGE[: len(prefix) + len(edited)]
    assert (original, edited) == ("lightweight WSGI", "Able-Bixbaggies.com/x")
    assert tail == " web application framework."  # the three words after the span


def test_a_replaced_word_is_paired_whole_and_an_added_sentence_with_nothing():
    # seen live, aligned by characters: "befor" -> "after" and "Ita" -> "Forina", half words scored
    clean = "Aliases are resolved before calling it. It runs in Italy."
    edited = clean.replace("before", "after")
    [(_, original, _, _)] = span_pairs(clean, edited, _labels(clean, edited))
    assert original == "before"
    added = clean.replace("It runs", "An added sentence. It runs")
    at = added.index("An added")
    labels = [{"start": at, "end": at + len("An added sentence."), "text": "An added sentence."}]
    assert span_pairs(clean, added, labels)[0][1:3] == ("", "An added sentence.")
    two = edited.replace("Italy", "Spain")
    pairs = span_pairs(clean, two, [*_labels(clean, edited), *_labels(edited, two)])
    assert [(original, new) for _, original, new, _ in pairs] == [("before", "after"), ("Italy", "Spain")]


def test_the_request_scores_original_and_edit_after_the_same_conversation():
    request = PlausibilityCheck().render(_item(NEGATED))
    (prefix_a, original), (prefix_b, edited) = request.continuations
    assert prefix_a == prefix_b and CLEAN in request.messages[-1].content
    # "not" was inserted: the original is the words after it alone, the edit "not" and those words
    assert (original, edited) == (" a lightweight WSGI", "not a lightweight WSGI")


def _verdict(item, original_logprobs, edited_logprobs):
    check = PlausibilityCheck()
    scores = Scores(logprobs=[original_logprobs, edited_logprobs])
    return json.loads(check.parse(item, scores)["judgement"]), check


def test_an_edit_far_less_likely_than_its_original_is_implausible():
    # measured on the embedded model: "lightweight WSGI web..." -0.21 nats a token over 7 tokens,
    # "Able-Bixbaggies.com/x web..." -4.69 over 16
    verdict, check = _verdict(_item(GARBAGE), [-0.21] * 7, [-4.69] * 16)
    assert verdict["edits"][0]["drop"] == pytest.approx(75.04 - 1.47, abs=0.01)
    assert check.rejection(verdict).reason == "implausible_edit"


def test_a_false_but_plausible_edit_passes_though_it_costs_as_much_per_token():
    # "not a lightweight WSGI": -2.05 a token, as much as a long garbage run's mean, but 9 tokens
    verdict, check = _verdict(_item(NEGATED), [-0.21] * 7, [-2.05] * 9)
    assert verdict["edits"][0]["drop"] < MAX_DROP
    assert check.rejection(verdict) is None


def test_an_added_sentence_is_judged_by_what_each_of_its_tokens_costs():
    # measured on the embedded model: "The ferry carries up to 320 passengers and 12 cars." added
    # after the answer cost 42.9 nats over 16 tokens (2.7 a token), and every added claim was
    # refused at 25 nats; garbage costs 4.7 a token
    first, rest = "A return ticket costs 9 euros.", " Passes last 90 days."
    sentence = " The ferry carries up to 320 passengers and 12 cars."
    item = {**_item(first + sentence + rest), "context": first + rest, "answer": first + rest}
    item["labels"] = [{"start": len(first) + 1, "end": len(first + sentence), "text": sentence.strip()}]
    tail = [-0.5] * 4  # " Passes last 90", scored after either
    verdict, check = _verdict(item, tail, [-2.7] * 16 + tail)
    assert verdict["edits"][0]["original"] == "" and verdict["edits"][0]["drop"] > MAX_DROP
    assert check.rejection(verdict) is None
    verdict, check = _verdict(item, tail, [-4.7] * 16 + tail)
    assert check.rejection(verdict).reason == "implausible_edit"
    item = {**_item(first + sentence), "context": first, "answer": first}  # added at the end
    item["labels"] = [{"start": len(first) + 1, "end": len(first + sentence), "text": sentence.strip()}]
    verdict, check = _verdict(item, [], [-4.7] * 16)
    assert check.rejection(verdict).reason == "implausible_edit"


def test_a_backend_without_log_probabilities_leaves_the_item_unscored_and_passing():
    check = PlausibilityCheck()
    verdict = json.loads(check.parse(_item(NEGATED), Scores(scored=False, why="no logprobs"))["judgement"])
    assert verdict == {"scored": False, "why": "no logprobs", "edits": []}
    assert check.rejection(verdict) is None


def test_the_scored_tokens_are_the_last_ones_that_spell_the_scored_text():
    prompt = [("", None), ("<user>", -1.0), ("Flask", -0.5), (" is", -0.1), (" not", -2.0), (" light", -1.5)]
    assert scored_tokens(prompt, " not light") == [-2.0, -1.5]
    assert scored_tokens(prompt, "ot light") == [-2.0, -1.5]  # a token straddling the start counts


def test_the_report_gives_the_drop_distribution_and_the_refused():
    judgements = [
        Judgement(
            key=str(n),
            stage="inject",
            check="plausibility",
            judge="m",
            attempt=0,
            passed=drop <= MAX_DROP,
            verdict={"scored": True, "edits": [{"drop": drop, "original": "x"}]},
        )
        for n, drop in enumerate([5.0, 10.0, 20.0, 45.0])
    ]
    report = plausibility_report(judgements)
    assert (report.scored, report.implausible) == (4, 1)
    assert report.quantiles["max"] == 45.0
    assert "1 refused as implausible" in report.lines()[0]


def test_scores_of_another_request_are_a_failure_of_the_check_not_a_traceback():
    from lettuce_build.engine.stage import ParseFailure

    with pytest.raises(ParseFailure, match="scores_mismatch"):
        PlausibilityCheck().parse(_item(NEGATED), Scores(logprobs=[[-0.1]]))
