"""Questions: one clean line, prefixes and quotes stripped, too short rejected."""

import pytest

from lettuce_build.engine.stage import ParseFailure
from lettuce_build.stages.questions import (
    QUESTION_TYPES,
    QuestionStage,
    clean_question,
)


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


FASTGRID = (
    "# fastgrid\n\nfastgrid renders large tables in the terminal. It is written in Python and "
    "needs no compiler.\n\n![logo](https://example.com/logo.png)\n\nThe default page size is 50 "
    "rows, and the page-size option changes it.\n"
)


def test_a_focused_question_is_asked_about_one_prose_sentence_of_its_chunk_drawn_by_the_seed():
    from lettuce_build.stages.answers import evidence_sentences
    from lettuce_build.stages.questions import FocusedQuestionStage

    sentences = evidence_sentences(FASTGRID)
    items = [{"key": f"doc::{n}", "chunk": FASTGRID, "question_type": "Definition"} for n in range(12)]
    focused = FocusedQuestionStage()
    foci = [focused.focus(item) for item in items]
    assert set(foci) <= set(sentences) and len(set(foci)) > 1  # each item its own sentence
    assert foci == [FocusedQuestionStage().focus(item) for item in items]  # the same every run
    assert foci != [FocusedQuestionStage(seed=7).focus(item) for item in items]
    user = focused.render(items[0]).messages[-1].content
    assert f"Fact: {foci[0]}" in user and "Passage: " in user and "![logo]" not in user
    assert focused.prompt_version.startswith("question_focused")
    assert "Fact:" not in QuestionStage().render(items[0]).messages[-1].content


def test_a_focused_question_is_decoded_under_its_types_openers_and_a_term_of_its_sentence():
    import regex

    from lettuce_build.stages.questions import Asked, FocusedQuestionStage, focus_terms

    chunk = "The default page size is 50 rows, and the page-size option changes it."
    item = {"key": "doc::0", "chunk": chunk, "question_type": "Quantification"}
    pattern = FocusedQuestionStage().item_schema(item)["properties"]["question"]["pattern"]
    assert focus_terms(item["chunk"]) == ["page-size", "changes", "default", "option", "page", "rows", "size"]
    assert regex.fullmatch(pattern, "How many rows does a fastgrid page show?")
    assert regex.fullmatch(pattern, "What is the default page size?")  # two short lead words at most
    assert not regex.fullmatch(pattern, "What is fastgrid?")  # no term of the sentence
    assert not regex.fullmatch(pattern, "Which page?")  # not a Quantification opener
    assert regex.fullmatch(pattern, "How many rows?") and regex.fullmatch(pattern, "How many page-size rows?")
    assert not regex.fullmatch(pattern, "How many stars does it have?")  # no term of the sentence
    assert not regex.fullmatch(pattern, "How many rows are shown")  # no question mark
    assert not regex.fullmatch(pattern, "How many rows? Or pages?")  # two questions
    assert not regex.fullmatch(pattern, "How many [rows](https://x.y)?")  # markup
    # what the pattern does not hold (it has no bounded run: a grammar compile per request of
    # seconds) is checked after decoding: a term inside another word, the length
    with pytest.raises(ParseFailure, match="question_off_focus"):
        FocusedQuestionStage().parse(item, Asked(question="How many pages are there?"))
    long = "How many rows of the table " + " ".join(f"c{i}" for i in range(40)) + "?"
    with pytest.raises(ParseFailure, match="question_too_long"):
        FocusedQuestionStage().parse(item, Asked(question=long))


def test_a_focused_question_keeps_its_sentence_for_the_answer():
    from lettuce_build.stages.questions import Asked, FocusedQuestionStage, focus_terms

    item = {"key": "doc::0", "chunk": FASTGRID, "question_type": "Quantification"}
    stage = FocusedQuestionStage()
    term = focus_terms(stage.focus(item))[0]
    made = stage.parse(item, Asked(question=f"How  many {term} does fastgrid have?"))
    assert made == {"question": f"How many {term} does fastgrid have?", "focus": stage.focus(item)}


@pytest.mark.parametrize(
    "question",
    ["<p>Is this device capable of running it?", "Is this device *exactly* capable of running it?"],
)
def test_a_question_with_html_or_emphasis_is_refused(question):
    from lettuce_build.stages.questions import question_problem

    assert question_problem(question)[0] == "markdown_in_question"


def test_a_question_that_repeats_the_prompt_is_refused():
    from lettuce_build.stages.questions import Asked, FocusedQuestionStage

    item = {"key": "k", "chunk": FASTGRID, "question_type": "Definition"}
    copied = Asked(question="How does fastgrid page rows, as a user would type it into a search box?")
    with pytest.raises(ParseFailure, match="question_echoes_prompt"):
        FocusedQuestionStage().parse(item, copied)
    own = FocusedQuestionStage().parse(item, Asked(question="What is fastgrid written in?"))
    assert own["question"] == "What is fastgrid written in?"


def test_a_question_about_its_prompt_is_refused_unless_the_context_speaks_of_it_too():
    from lettuce_build.core.gates import question_problem

    assert question_problem("What is the sentence about fastgrid?", FASTGRID)[0] == "question_about_prompt"
    spoken_of = "fastgrid splits each sentence."
    assert question_problem("What does fastgrid do with a sentence?", spoken_of) is None


def test_a_focused_question_mostly_of_words_its_passage_lacks_asks_about_something_else():
    from lettuce_build.stages.questions import Asked, FocusedQuestionStage, foreign_words

    # real case (annotated-types' README, the embedded model): a question about another package
    chunk = (
        "This package provides metadata objects which can be used to represent common constraints "
        "such as upper and lower bounds on scalar values and collection sizes."
    )
    item = {"key": "doc::0", "chunk": chunk, "question_type": "Procedure"}
    off = "How do you create a custom countdown timer using this package?"
    assert foreign_words(off, chunk) == ["create", "custom", "countdown", "timer"]
    with pytest.raises(ParseFailure, match="question_off_focus"):
        FocusedQuestionStage().parse(item, Asked(question=off))
    fits = "What metadata objects does this package provide for upper bounds?"
    assert FocusedQuestionStage().parse(item, Asked(question=fits))["question"] == fits
