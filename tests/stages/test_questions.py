"""Questions: one clean line, prefixes and quotes stripped, too short rejected."""

import pytest

from lettuce_build.engine.stage import ParseFailure
from lettuce_build.stages.questions import (
    QUESTION_TYPES,
    QuestionStage,
    clean_question,
    generate_question,
)

from ..support.scripted import ScriptedBackend


def test_there_are_eighteen_question_types():
    assert len(QUESTION_TYPES) == 18 and "Instrumental/Procedural" in QUESTION_TYPES


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ('Question: "How do I install fastgrid?"', "How do I install fastgrid?"),
        ("Q: What is the default page size?\nAnswer: 50", "What is the default page size?"),
        ("\n\n  'Which Python version is needed?'  ", "Which Python version is needed?"),
        ("**Question:** How fast are builds?", "How fast are builds?"),
    ],
)
def test_clean_question_strips_prefixes_quotes_and_extra_lines(raw, clean):
    assert clean_question(raw) == clean


def test_a_question_under_eight_characters_is_rejected():
    with pytest.raises(ParseFailure) as raised:
        QuestionStage().parse({}, "Q: Why?")
    assert raised.value.reason == "question_too_short"


def test_the_prompt_carries_the_type_and_the_truncated_chunk():
    request = QuestionStage(chunk_chars=20).render(
        {"chunk": "x" * 50 + "TAIL", "question_type": "Definition"}
    )
    user = request.messages[-1].content
    assert "Definition question (asks what something means)" in user and "TAIL" not in user
    assert request.temperature == 0.7 and request.max_tokens == 80


def test_the_single_item_call_for_notebooks():
    backend = ScriptedBackend(lambda r: "Question: What does fastgrid render?")
    assert (
        generate_question("fastgrid renders tables.", "Concept Completion", backend)
        == "What does fastgrid render?"
    )
