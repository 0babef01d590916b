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


def test_a_focused_question_is_asked_about_one_prose_sentence_of_its_chunk_drawn_by_the_seed():
    from lettuce_build.stages.answers import evidence_sentences
    from lettuce_build.stages.questions import QuestionStage

    chunk = (
        "# fastgrid\n\nfastgrid renders large tables in the terminal. It is written in Python and "
        "needs no compiler.\n\n![logo](https://example.com/logo.png)\n\nThe default page size is 50 "
        "rows, and the page-size option changes it.\n"
    )
    sentences = evidence_sentences(chunk)
    items = [{"key": f"doc::{n}", "chunk": chunk, "question_type": "Definition"} for n in range(12)]
    focused = QuestionStage(focused=True)
    foci = [focused.focus(item) for item in items]
    assert set(foci) <= set(sentences) and len(set(foci)) > 1  # each item its own sentence
    assert foci == [QuestionStage(focused=True).focus(item) for item in items]  # the same every run
    assert foci != [QuestionStage(focused=True, seed=7).focus(item) for item in items]
    user = focused.render(items[0]).messages[-1].content
    assert f"The sentence that answers the question:\n{foci[0]}" in user
    assert focused.prompt_version.startswith("question_focused")
    assert "answers the question:" not in QuestionStage().render(items[0]).messages[-1].content


@pytest.mark.parametrize(
    "question",
    ["<p>Is this device capable of running it?", "Is this device *exactly* capable of running it?"],
)
def test_a_question_with_html_or_emphasis_is_refused(question):
    from lettuce_build.stages.questions import question_problem

    assert question_problem(question)[0] == "markdown_in_question"


def test_a_question_that_repeats_the_prompt_is_refused():
    from lettuce_build.stages.questions import QuestionStage

    item = {
        "key": "k",
        "chunk": "fastgrid renders tables. It answers questions.",
        "question_type": "Definition",
    }
    echoed = 'An Exemplary Sentence: The sentence that answers the question: "Does fastgrid render tables?'
    with pytest.raises(ParseFailure, match="question_echoes_prompt"):
        QuestionStage(focused=True).parse(item, echoed)
    assert QuestionStage(focused=True).parse(item, "Does fastgrid render tables?") == {
        "question": "Does fastgrid render tables?"
    }
