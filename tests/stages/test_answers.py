"""Grounded answers: evidence truncated, short answers rejected."""

import pytest

from lettuce_build.core import english
from lettuce_build.engine.stage import ParseFailure
from lettuce_build.stages.answers import AnswerStage


def test_an_answer_under_forty_characters_is_rejected():
    with pytest.raises(ParseFailure) as raised:
        AnswerStage().parse({}, "  Use pip.  ")
    assert raised.value.reason == "answer_too_short"


def test_sampling_defaults_follow_the_spec():
    request = AnswerStage().render({"context": "evidence", "question": "q?"})
    assert (request.temperature, request.max_tokens) == (0.7, 400)


def test_a_sentence_that_introduces_a_block_is_never_offered():
    from lettuce_build.stages.answers import evidence_sentences

    evidence = (
        "Point quillmap at a notes folder and choose an output directory:\n\n    quillmap notes/ site/\n"
    )
    assert evidence_sentences(evidence) == ()


def test_a_sentence_cut_where_its_list_began_is_never_offered():
    """Sphinx's documentation, a paragraph that ends where its list of languages begins: the
    answer ended "... for more languages, like." (a sentence ending on "as", "and", "the" ...)."""
    from lettuce_build.stages.answers import evidence_sentences

    evidence = (
        "There are four additional built-in domains: C, C++, JavaScript, and reStructuredText. "
        "Third-party extensions may define domains for more languages, such as"
    )
    assert evidence_sentences(evidence) == (
        "There are four additional built-in domains: C, C++, JavaScript, and reStructuredText.",
    )
    assert evidence_sentences("The pool keeps idle connections until you close them and") == ()
    assert evidence_sentences("Use the pager as you like, on any terminal.") != ()


def test_a_restructuredtext_heading_is_left_out_like_a_markdown_one():
    """Faker's README: the answer opened "Accessing the `random` instance ------------."."""
    from lettuce_build.stages.answers import evidence_sentences

    evidence = (
        "Accessing the `random` instance\n-------------------------------\n\n"
        "By default all generators share the same instance of ``random.Random``, which can be "
        "accessed with ``from faker.generator import random``.\n"
    )
    assert evidence_sentences(evidence) == (
        "By default all generators share the same instance of ``random.Random``, which can be "
        "accessed with ``from faker.generator import random``.",
    )


def test_sentences_inside_an_html_comment_are_never_offered():
    from lettuce_build.stages.answers import evidence_sentences

    evidence = (
        "<!---\nCopyright 2021 The HuggingFace Team. All rights reserved.\nLicensed under the Apache "
        "License, Version 2.0 (the License); you may not use this file.\n-->\n\n"
        "fastgrid renders large tables in the terminal and needs no compiler.\n"
    )
    assert evidence_sentences(evidence) == (
        "fastgrid renders large tables in the terminal and needs no compiler.",
    )


def test_a_link_target_wrapped_onto_its_own_line_continues_the_sentence_and_is_no_html():
    """Tornado's README: the target of "`FriendFeed" opens the next line; read as HTML, the
    line was dropped and the answer ended "developed at `FriendFeed."."""
    from lettuce_build.stages.answers import evidence_sentences

    evidence = (
        "`Tornado <http://www.tornadoweb.org>`_ is a Python web framework and\n"
        "asynchronous networking library, originally developed at `FriendFeed\n"
        "<http://friendfeed.com>`_.  By using non-blocking network I/O, Tornado\n"
        "can scale to tens of thousands of open connections.\n\n"
        '<p align="center">Tornado is maintained by volunteers.</p>\n'
    )
    assert evidence_sentences(evidence) == (
        "`Tornado <http://www.tornadoweb.org>`_ is a Python web framework and asynchronous networking "
        "library, originally developed at `FriendFeed <http://friendfeed.com>`_.",
        "By using non-blocking network I/O, Tornado can scale to tens of thousands of open connections.",
    )


def test_a_focused_answer_is_its_questions_sentence_with_the_neighbours_the_model_chose():
    from lettuce_build.stages.answers import Extracted, ExtractiveAnswerStage, evidence_sentences

    evidence = (
        "fastgrid renders large tables in the terminal. It is written in Python and needs no compiler. "
        "The default page size is 50 rows. The page-size option changes it. Themes are set in a TOML "
        "file. Plugins live in a folder of their own. Exports go to CSV or JSON files."
    )
    sentences = evidence_sentences(evidence)
    focus = "The default page size is 50 rows."
    item = {"question": "How many rows does a page show?", "focus": focus, "context": evidence}
    stage = ExtractiveAnswerStage(focused=True)
    offered = stage.item_schema(item)["properties"]["sentences"]["items"]["enum"]
    assert offered == list(sentences[0:5])  # two sentences either side of the focus
    # the model chose a neighbour but not the focus: the focus answers the question, so it stays
    made = stage.parse(item, Extracted(sentences=["The page-size option changes it."]))
    assert made["answer"] == "The default page size is 50 rows. The page-size option changes it."
    assert "focus" in stage.requires and "focus" not in ExtractiveAnswerStage().requires


def test_a_focused_answer_leaves_out_a_chosen_neighbour_about_something_else():
    """A neighbour that shares no content word with the question or its sentence would take the
    injected error into a sentence off the question, even where the focus alone is short."""
    from lettuce_build.stages.answers import Extracted, ExtractiveAnswerStage

    evidence = (
        "fastgrid renders large tables in the terminal. It is written in Python and needs no compiler. "
        "The default page size is 50 rows, and the page-size option changes it. Themes are set in a "
        "TOML file. Plugins live in a folder of their own."
    )
    focus = "The default page size is 50 rows, and the page-size option changes it."
    item = {"question": "How many rows does a page show?", "focus": focus, "context": evidence}
    stage = ExtractiveAnswerStage(focused=True)
    chosen = ["It is written in Python and needs no compiler.", "Themes are set in a TOML file."]
    assert stage.parse(item, Extracted(sentences=chosen))["answer"] == focus
    alone = "The default page holds 50 rows."  # 31 characters: a sentence, asked about
    short = {**item, "focus": alone, "context": evidence.replace(focus, alone)}
    assert stage.parse(short, Extracted(sentences=chosen))["answer"] == alone


def test_a_word_most_of_the_passage_says_ties_no_neighbour_to_the_question():
    from lettuce_build.stages.answers import Extracted, ExtractiveAnswerStage

    # seen live: "All about FastAPI, right from the source." joined an answer on Typer
    evidence = (
        "All about FastAPI, right from the source. FastAPI runs anywhere Python runs. "
        "Typer is the little sibling of FastAPI, made for command line apps. FastAPI is fast."
    )
    focus = "Typer is the little sibling of FastAPI, made for command line apps."
    item = {"question": "Is Typer the little sibling of FastAPI?", "focus": focus, "context": evidence}
    chosen = ["All about FastAPI, right from the source."]
    answer = ExtractiveAnswerStage(focused=True).parse(item, Extracted(sentences=chosen))["answer"]
    # led by the yes its sentence gives, "it" for the subject the question names
    assert answer == "Yes, it's the little sibling of FastAPI, made for command line apps."


@pytest.mark.skipif(not english.known(), reason="Debian's wamerican word list is not installed")
def test_a_fragment_of_a_list_is_never_offered_but_a_lowercase_name_is():
    from lettuce_build.stages.answers import evidence_sentences

    evidence = (
        "Classes get:\n\n- a nice human-readable `__repr__` for every class you write.\n\n"
        "httpx supports HTTP/2 and asynchronous requests for every client.\n"
    )
    assert evidence_sentences(evidence) == (
        "httpx supports HTTP/2 and asynchronous requests for every client.",
    )


def test_an_answer_the_edit_rules_could_not_edit_is_no_sample_when_the_build_edits_by_rule():
    """Kept, it could only be published clean, and clean rows would be the answers hard to edit
    (short, no number, no name): a give-away a detector learns without reading the context."""
    from lettuce_build.sources.base import StageSettings
    from lettuce_build.sources.documents import ReadmeSource
    from lettuce_build.stages.answers import Extracted, ExtractiveAnswerStage

    evidence = (
        "fastgrid renders tables in the terminal. The default page holds 50 rows. "
        "Themes make the tables pleasant to read."
    )
    stage = ReadmeSource().pipeline(StageSettings(answers="extractive", edit_anchors="rules")).inject[1]
    assert isinstance(stage, ExtractiveAnswerStage) and "donor" in stage.requires
    item = {"key": "k", "context": evidence, "donor": "", "question": "What do themes do?", "focus": None}
    with pytest.raises(ParseFailure) as failure:
        plain = "Themes make the tables pleasant to read."
        stage.parse({**item, "focus": plain}, Extracted(sentences=[plain]))
    assert failure.value.reason == "no_edit_rule"
    focus = "The default page holds 50 rows."  # a number: the rules change it
    question = "How many rows does the default page hold?"
    made = stage.parse({**item, "question": question, "focus": focus}, Extracted(sentences=[focus]))
    assert made["answer"] == focus
    # a build whose model writes its edits keeps every answer: none can be checked before it asks
    written = ReadmeSource().pipeline(StageSettings(answers="extractive", edit_anchors="constrained"))
    assert written.inject[1].editable is None
