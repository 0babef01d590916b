"""Every schema a stage sends compiles in milliseconds: none bounds a string's length or a run of
characters, which makes a server compile a grammar of every length up to the bound (seconds per
request; measured in benchmarks/grammar_cost.py). A structural check, not a timing."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from lettuce_build.sources.code import RepositoryNames
from lettuce_build.stages.answers import ExtractiveAnswerStage
from lettuce_build.stages.asked import AskedEdits
from lettuce_build.stages.classify import ClassifyStage
from lettuce_build.stages.code_edits import STRUCTURAL, InjectCodeMenuStage, InjectCodeStage
from lettuce_build.stages.generation import GenerateStage
from lettuce_build.stages.given import TypedGenerateStage
from lettuce_build.stages.injection import InjectMenuStage, InjectTaxonomyStage
from lettuce_build.stages.judge import AnswerJudgeStage, SpanJudgeStage
from lettuce_build.stages.plausibility import PlausibilityCheck
from lettuce_build.stages.prose_edits import InjectProseMenuStage, menu_types
from lettuce_build.stages.question_fit import QuestionFitCheck
from lettuce_build.stages.questions import FocusedQuestionStage
from lettuce_build.stages.requests import ChosenRequestStage

from ..support.documents import README_A

ANSWER = "fastgrid needs Python 3.10 or newer and about 4 MB of disk space. The default page size is 50 rows."
CODE_ANSWER = (
    "In `grid.py`, the fixed function:\n```python\ndef page(rows, size=50):\n    return rows[:size]\n```"
)
ITEM = {
    "key": "readme::fastgrid.md::0",
    "chunk": README_A,
    "context": README_A,
    "question": "How many rows are on a page?",
    "question_type": "Quantification",
    "focus": "The default page size is 50 rows, and `--page-size` changes it.",
    "answer": ANSWER,
    "inject": True,
    "labels": [{"start": 0, "end": 8, "text": "fastgrid"}],
    "hallucinated_answer": ANSWER,
    "target_category": "contradiction",
    "target_subcategory": "numerical",
}
#: a repetition bounded above ({m,n}, {n}) of more than a few: what makes a grammar large
_BOUNDED = re.compile(r"\{(\d+),(\d+)\}|\{(\d+)\}")
#: a handful of repetitions (at most two short words before a question's term) stays cheap
MAX_CHEAP_REPEAT = 4


def stages() -> Iterator[tuple[Any, dict[str, Any]]]:
    yield FocusedQuestionStage(), ITEM
    yield ExtractiveAnswerStage(focused=True), ITEM
    yield ExtractiveAnswerStage(), ITEM
    yield InjectMenuStage("markdown", anchors="constrained"), ITEM
    yield InjectMenuStage("markdown", anchors="free"), ITEM
    yield InjectMenuStage("paper", anchors="constrained"), ITEM
    yield InjectTaxonomyStage("prose"), ITEM
    yield GenerateStage(), ITEM
    yield AnswerJudgeStage(), ITEM
    yield SpanJudgeStage(), ITEM
    yield ClassifyStage(), ITEM
    # the custom source's: a menu restricted to the types asked for, targeted kinds, generation
    asked = AskedEdits(allowed=["contradiction"], count=2)
    yield InjectMenuStage("markdown", offered=menu_types("markdown", ["contradiction"]), asked=asked), ITEM
    yield InjectTaxonomyStage(None, asked=AskedEdits(), anchors="constrained"), {**ITEM, "modality": "prose"}
    yield TypedGenerateStage(allowed=["unsupported_addition"]), ITEM
    for error in (STRUCTURAL, "wrong_implementation"):
        yield (
            InjectCodeStage(RepositoryNames(), anchors="constrained"),
            {**ITEM, "answer": CODE_ANSWER, "code_error": error},
        )
        yield (
            InjectCodeStage(RepositoryNames(), anchors="free"),
            {**ITEM, "answer": CODE_ANSWER, "code_error": error},
        )
    # a small model's: the request and the mistake chosen from enums; the plausibility check's scores
    code_item = {**ITEM, "answer": CODE_ANSWER, "code_error": "wrong_implementation"}
    yield InjectCodeMenuStage(RepositoryNames()), code_item
    issue = "Raise error when a page size is zero\nA zero size returns no rows. It should raise instead."
    yield ChosenRequestStage(), {**ITEM, "issue": issue}
    yield PlausibilityCheck(), ITEM
    # the prose edits made by rules, chosen from an enum; the question's likelihood gain
    yield InjectProseMenuStage(), {**ITEM, "donor": "Tidewatch syncs every 10 minutes over SSH."}
    yield QuestionFitCheck(), ITEM


def walk(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


def costly_parts(schema: dict[str, Any]) -> list[str]:
    found = []
    for node in walk(schema):
        found += [f"{key}={node[key]}" for key in ("maxLength", "minLength") if key in node]
        for match in _BOUNDED.finditer(str(node.get("pattern", ""))):
            upper = int(match.group(2) or match.group(3))
            if upper > MAX_CHEAP_REPEAT:
                found.append(f"pattern run {match.group()}")
    return found


@pytest.mark.parametrize(
    ("stage", "item"), list(stages()), ids=lambda v: type(v).__name__ if not isinstance(v, dict) else ""
)
def test_no_schema_a_stage_sends_bounds_a_length(stage, item):
    if stage.response_model is None:
        pytest.skip(f"{stage.name} sends no schema")
    schema = stage.item_schema(item) or stage.response_model.model_json_schema()
    assert costly_parts(schema) == []


def test_the_check_finds_what_it_is_for():
    assert costly_parts({"properties": {"a": {"type": "string", "maxLength": 120}}}) == ["maxLength=120"]
    assert costly_parts({"type": "string", "pattern": "^(What) [^?]{0,60} x$"}) == ["pattern run {0,60}"]
    assert costly_parts({"type": "string", "pattern": "^(?:(?:the|a) ){0,2}x$"}) == []
