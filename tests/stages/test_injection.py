"""Injection: every parse and validation path, with exact spans from the applied edits."""

import json

import pytest
from datasets import Dataset

from lettuce_build.engine.completions import Completions
from lettuce_build.engine.runner import Runner
from lettuce_build.engine.stage import ParseFailure
from lettuce_build.llm.cache import RequestCache
from lettuce_build.stages.injection import (
    InjectMenuStage,
    InjectTaxonomyStage,
)

from ..support.scripted import ScriptedBackend

CONTEXT = "fastgrid needs Python 3.10 or newer. The default page size is 50 rows. Run fastgrid show data.csv."
ANSWER = "fastgrid needs Python 3.10 or newer, and the default page size is 50 rows."
ITEM = {
    "key": "k",
    "context": CONTEXT,
    "question": "What does fastgrid need?",
    "answer": ANSWER,
    "inject": True,
}


def menu_response(*changes):
    stage = InjectMenuStage("markdown")
    return stage, stage.response_model.model_validate({"changes": list(changes)})


def change(original, hallucinated, kind="NUMERICAL"):
    return {"original": original, "hallucinated": hallucinated, "explanation": "", "hallucination_type": kind}


def failure_of(stage, response, item=ITEM):
    with pytest.raises(ParseFailure) as raised:
        stage.parse(item, response)
    return raised.value


def test_good_edits_give_exact_typed_spans():
    stage, response = menu_response(change("Python 3.10", "Python 3.12"), change("50 rows", "75 rows"))
    out = stage.parse(ITEM, response)
    text = out["hallucinated_answer"]
    assert text == "fastgrid needs Python 3.12 or newer, and the default page size is 75 rows."
    assert [(s["text"], s["category"], s["subcategory"], s["label"]) for s in out["labels"]] == [
        ("Python 3.12", "contradiction", "numerical", "NUMERICAL"),
        ("75 rows", "contradiction", "numerical", "NUMERICAL"),
    ]
    assert all(text[s["start"] : s["end"]] == s["text"] for s in out["labels"])
    assert len(json.loads(out["injection"])["applied"]) == 2


def test_an_original_not_in_the_answer_is_dropped_and_reported():
    stage, response = menu_response(
        change("Python 3.10", "Python 3.12"), change("100 columns", "200 columns")
    )
    out = stage.parse(ITEM, response)
    assert len(out["labels"]) == 1
    assert json.loads(out["injection"])["dropped"][0]["reason"] == "not_found"


def test_only_edits_that_cannot_be_placed_give_no_labels():
    stage, response = menu_response(change("Python 2.7", "Python 3.9"))
    failure = failure_of(stage, response)
    assert failure.reason == "no_labels" and "not_found" in failure.detail


def test_a_repeated_original_goes_to_its_first_unused_occurrence():
    answer = "Set the page size to 50 rows, then to 50 rows again to reset the view of the table."
    stage, response = menu_response(change("50 rows", "60 rows"), change("50 rows", "70 rows"))
    out = stage.parse({**ITEM, "answer": answer, "context": answer}, response)
    assert (
        out["hallucinated_answer"]
        == "Set the page size to 60 rows, then to 70 rows again to reset the view of the table."
    )


def test_an_empty_changes_list_is_an_honest_nothing_fits_and_not_retried(tmp_path):
    backend = ScriptedBackend(lambda r: '{"changes": []}')
    result = Runner(Completions(backend, RequestCache(tmp_path / "c.sqlite"))).run(
        Dataset.from_list([ITEM]), InjectMenuStage("markdown")
    )
    [failure] = result.failures
    assert (failure.reason, failure.attempt, failure.retryable) == ("nothing_fits", 0, False)
    assert len(backend.requests) == 1


def test_an_unknown_menu_type_fails_that_edit_with_a_reason():
    stage = InjectMenuStage("markdown")
    response = stage.response_model.model_construct(
        changes=[
            stage.response_model.model_fields["changes"]
            .annotation.__args__[0]
            .model_construct(
                original="Python 3.10",
                hallucinated="Python 3.12",
                explanation="",
                hallucination_type="SPELLING",
            ),
            stage.response_model.model_fields["changes"]
            .annotation.__args__[0]
            .model_construct(
                original="50 rows", hallucinated="75 rows", explanation="", hallucination_type="NUMERICAL"
            ),
        ]
    )
    out = stage.parse(ITEM, response)
    dropped = json.loads(out["injection"])["dropped"]
    assert dropped[0]["reason"] == "unknown_type" and "SPELLING" in dropped[0]["detail"]
    assert [s["text"] for s in out["labels"]] == ["75 rows"]


def test_the_menu_schema_constrains_types_to_the_menu():
    schema = InjectMenuStage("paper").response_model.model_json_schema()
    kinds = json.dumps(schema)
    assert "METHODOLOGICAL" in kinds and "FABRICATED" not in kinds


def test_prompt_residue_is_rejected():
    stage, response = menu_response(change("50 rows", "50 rows (hallucinated)"))
    assert failure_of(stage, response).reason == "prompt_residue"


def test_leaky_words_are_rejected():
    stage, response = menu_response(change("50 rows", "an incorrect 75 rows"))
    assert failure_of(stage, response).reason == "leaky_label_text"


def test_coverage_over_the_cap_is_rejected():
    stage, response = menu_response(
        change(ANSWER, "fastgrid needs Rust 1.70 and pages through 10 rows at a time.")
    )
    assert failure_of(stage, response).reason == "coverage_too_high"


def code_item(answer):
    return {
        **ITEM,
        "answer": answer,
        "context": "def page(size=50): ...",
        "target_category": "contradiction",
        "target_subcategory": "value",
    }


def test_fences_required_but_missing_are_rejected_for_code():
    stage = InjectTaxonomyStage("code", require_fences=True)
    response = stage.response_model.model_validate({"changes": [change("size=50", "size=500")]})
    failure = failure_of(stage, response, code_item("Call page(size=50) to get the first page of the table."))
    assert failure.reason == "no_code_fences"


def test_targeted_edits_carry_the_target_and_stay_inside_fences():
    stage = InjectTaxonomyStage("code", require_fences=True, enforce_in_fence=True)
    answer = "Call it like this:\n```python\nrows = page(size=50)\n```\nIt returns the first page of rows."
    response = stage.response_model.model_validate({"changes": [change("page(size=50)", "page(size=500)")]})
    out = stage.parse(code_item(answer), response)
    [span] = out["labels"]
    assert (span["category"], span["subcategory"], span["label"]) == (
        "contradiction",
        "value",
        "contradiction/value",
    )
    outside = stage.response_model.model_validate(
        {"changes": [change("first page of rows", "last page of rows")]}
    )
    assert failure_of(stage, outside, code_item(answer)).reason == "label_outside_code_block"


def test_targeted_defaults_follow_the_spec_per_modality():
    code = InjectTaxonomyStage("code").sampling
    assert (code.temperature, code.max_tokens) == (0.4, 2000)
    assert (
        InjectTaxonomyStage("tool_output").sampling.temperature,
        InjectTaxonomyStage("tool_output").sampling.max_tokens,
    ) == (0.8, 600)
    request = InjectTaxonomyStage("tool_output").render(code_item("x" * 50))
    assert "contradiction / value" in request.messages[-1].content


def test_an_edit_dropped_for_overlap_is_not_listed_as_applied_even_with_the_same_label_and_text():
    # both edits say NUMERICAL and "Python 3.12": only the first one placed may be listed as applied
    stage, response = menu_response(change("Python 3.10", "Python 3.12"), change("3.10 or", "Python 3.12"))
    record = json.loads(stage.parse(ITEM, response)["injection"])
    assert [a["original"] for a in record["applied"]] == ["Python 3.10"]
    assert [d["reason"] for d in record["dropped"]] == ["overlap"]
