"""The embedded model's question is chosen among those turned from its answer's sentence: a
sentence with a shape is preferred as the focus, one question offered is taken without a call,
several are a schema enum; an English chunk with no shape fails without a call, and one in
another language is asked as a focused question."""

import pytest

from lettuce_build.engine.stage import ParseFailure
from lettuce_build.stages.question_choice import ChosenQuestionStage, shaped_sentences
from lettuce_build.stages.questions import Asked

CHUNK = (
    "Fastgrid pages rows. The default page size is 50 rows. To change it, pass `--rows`. "
    "You can also sort rows with the `--sort` option."
)


def item(chunk: str = CHUNK, question_type: str = "Instrumental/Procedural") -> dict:
    return {"key": "readme::fastgrid.md::0", "chunk": chunk, "question_type": question_type, "metadata": "{}"}


def test_the_focus_is_a_sentence_a_question_can_be_turned_from():
    stage = ChosenQuestionStage()
    assert stage.offered(item()), stage.focus(item())
    assert stage.focus(item()) != "Fastgrid pages rows."  # no shape: never the focus when others have one


def test_several_questions_are_a_choice_and_the_item_s_type_comes_first():
    stage = ChosenQuestionStage()
    you_can = item("Fastgrid pages rows on screen. You can sort rows with the `--sort` option.")
    offered = stage.offered(you_can)
    assert offered == ["How can you sort rows?", "Can you sort rows?"]
    assert stage.applies(you_can)
    assert stage.item_schema(you_can)["properties"]["question"]["enum"] == offered
    assert stage.parse(you_can, Asked(question=offered[1]))["question"] == offered[1]
    with pytest.raises(ParseFailure) as failure:
        stage.parse(you_can, Asked(question="How do I use fastgrid?"))
    assert failure.value.reason == "question_not_offered"
    verifying = stage.offered({**you_can, "question_type": "Verification"})
    assert verifying[0] == "Can you sort rows?"


def test_one_question_offered_is_taken_without_a_model_call():
    stage = ChosenQuestionStage()
    one = item("Fastgrid pages rows on screen. The package provides a pager and a sorter.")
    assert not stage.applies(one)
    assert stage.passed(one) == {
        "question": "What does the package provide?",
        "focus": "The package provides a pager and a sorter.",
    }


def test_an_english_chunk_with_no_shape_fails_without_a_model_call():
    stage = ChosenQuestionStage()
    plain = item("Fastgrid pages rows on screen. Rows scroll with the arrow keys on any terminal.")
    assert stage.offered(plain) == [] and not stage.applies(plain)
    with pytest.raises(ParseFailure) as failure:
        stage.passed(plain)
    assert failure.value.reason == "no_question_shape" and not failure.value.retry


def test_a_question_whose_words_point_at_another_sentence_is_not_offered():
    earlier = "Fastgrid is a library for large tables. This library provides a pager and a sorter."
    offered = [shape.question for shapes in shaped_sentences(earlier, None).values() for shape in shapes]
    assert offered == ["What is Fastgrid?"]  # "What does this library provide?" points at the first
    alone = "Fastgrid pages rows on screen. This library provides a pager and a sorter."
    assert [s.question for s in shaped_sentences(alone, None)[alone.split(". ")[1]]] == [
        "What does this library provide?"
    ]


def test_a_question_about_the_project_alone_points_at_the_first_sentence_naming_it():
    chunk = "# attrs\n\nattrs is a Python package for classes. Later, attrs is a dependency of many tools."
    shaped = shaped_sentences(chunk, "attrs")
    assert [s.question for s in shaped["attrs is a Python package for classes."]] == ["What is attrs?"]
    assert "Later, attrs is a dependency of many tools." not in shaped


def test_a_sentence_the_segmenter_joined_to_a_list_item_still_points_at_itself():
    # seen on fastcore's README: "- Use `from fastcore.module import *` freely. fastcore's modules
    # are built ..." is one sentence of the chunk and two of the evidence
    chunk = "Tips:\n\n- Use `from fastcore.module import *` freely. fastcore’s modules are built to be safe."
    assert any(
        "modules built" in s.question for shapes in shaped_sentences(chunk, None).values() for s in shapes
    )


def test_a_sentence_in_another_language_offers_no_english_question():
    stage = ChosenQuestionStage()
    german = {**item("Fastgrid pages rows on screen. The package provides a pager."), "language": "de"}
    assert stage.offered(german) == [] and stage.applies(german)  # the model writes it
    assert "pattern" in stage.item_schema(german)["properties"]["question"]
    assert "Write the question this fact answers" in stage.render(german).messages[-1].content


def test_a_written_question_brings_no_word_its_passage_lacks():
    stage = ChosenQuestionStage()
    plain = {
        **item("Fastgrid pages rows on screen. Rows scroll with the arrow keys on any terminal."),
        "language": "fr",
    }
    focus = stage.focus(plain)
    assert stage.parse(plain, Asked(question="How do rows scroll on a terminal?"))["focus"] == focus
    with pytest.raises(ParseFailure) as failure:  # seen live: "Can you use analysism to ...?"
        stage.parse(plain, Asked(question="Can you use analysism to scroll rows on a terminal?"))
    assert failure.value.reason == "question_off_focus"


def test_under_rule_made_edits_the_focus_is_a_sentence_the_rules_can_edit():
    """Drawn among every shaped sentence, an item asked about one no rule could edit only fails
    at its answer; from the drawn sentence on, the first the rules can edit under one of its
    questions is asked about, with those questions."""
    from lettuce_build.stages.prose_edits import InjectProseMenuStage

    chunk = (
        "The theme is read from the config folder. The package provides 3 loaders and a command line tool."
    )
    # numbers only: "Is the theme read from ...?" is otherwise offered an added "not" now and then
    stage = ChosenQuestionStage(editable=InjectProseMenuStage(allowed=["contradiction/numerical"]).offers)
    assert {"context", "donor"} <= set(stage.requires)
    for n in range(8):  # whichever sentence each key draws
        row = {**item(chunk), "key": f"readme::fastgrid.md::{n}", "context": chunk, "donor": ""}
        assert stage.focus(row) == "The package provides 3 loaders and a command line tool."
        # the number is no part of either question: both leave it to be changed
        assert set(stage.offered(row)) == {
            "How many loaders does the package provide?",
            "What does the package provide?",
        }
    drawn = {ChosenQuestionStage().focus({**item(chunk), "key": f"k{n}"}) for n in range(8)}
    assert "The theme is read from the config folder." in drawn  # without the rules, both are drawn


def test_a_sentence_whose_only_question_repeats_its_edit_is_passed_over():
    from lettuce_build.stages.prose_edits import InjectProseMenuStage

    # "Is the default page size 50 rows?" repeats "50": under it no number is left to change;
    # "What is the default page size?" leaves it
    chunk = "The default page size is 50 rows. There are 150 samples in the dataset, 50 of each class."
    stage = ChosenQuestionStage(editable=InjectProseMenuStage(allowed=["contradiction/numerical"]).offers)
    offered = set()
    for n in range(8):
        row = {**item(chunk), "key": f"readme::fastgrid.md::{n}", "context": chunk, "donor": ""}
        offered.update(stage.offered(row))
    assert offered == {"What is the default page size?", "How many samples are there in the dataset?"}


def test_a_chunk_whose_questions_leave_no_edit_fails_without_a_model_call():
    from lettuce_build.stages.prose_edits import InjectProseMenuStage

    chunk = "The theme is read from the config folder. Plugins live in a folder of their own."
    stage = ChosenQuestionStage(editable=InjectProseMenuStage(allowed=["contradiction/numerical"]).offers)
    row = {**item(chunk), "context": chunk, "donor": ""}
    assert not stage.applies(row)
    with pytest.raises(ParseFailure) as failure:
        stage.passed(row)
    assert failure.value.reason == "no_edit_rule" and not failure.value.retry


def test_a_chunk_no_shape_fits_is_asked_what_a_reader_should_know_of_a_sentence_s_topic():
    # uvicorn's documentation: neither sentence fits a shape
    chunk = (
        "Trusting proxies from the whole internet is risky. "
        "When running from CLI these are configured using `--forwarded-allow-ips`."
    )
    stage = ChosenQuestionStage()
    assert stage.passed(item(chunk)) == {
        "question": "What should I know about `--forwarded-allow-ips`?",
        "focus": "When running from CLI these are configured using `--forwarded-allow-ips`.",
    }


def test_a_sentence_a_shape_fits_is_asked_before_any_topic():
    chunk = "Rows scroll with `less` on any terminal. The package provides a pager and a sorter."
    assert ChosenQuestionStage().passed(item(chunk))["question"] == "What does the package provide?"


def test_a_sentence_whose_edits_are_spelled_from_the_context_is_the_focus_first():
    """Of two editable sentences, the one an edit spelled from the context can be made of comes
    first, for every item (clean ones too, so that both classes hold the same sentences)."""
    from lettuce_build.stages.prose_edits import SPELLED, InjectProseMenuStage, rule_edits

    chunk = (
        "The package provides a pager for Python. "
        "The server reads each request once, and the client sends it."
    )
    editable = rule_edits(InjectProseMenuStage())
    stage = ChosenQuestionStage(editable=editable)
    for key in (f"k{n}" for n in range(20)):
        row = {**item(chunk), "key": key, "context": chunk, "donor": "", "language": "en"}
        focus = stage.focus(row)
        assert focus.startswith("The server reads")
        answer = {**row, "question": stage.offered(row)[0], "answer": focus, "inject": True}
        assert editable(answer) == SPELLED


def test_a_sentence_whose_shapes_each_repeat_its_edits_is_asked_by_its_topic():
    """Marshmallow's documentation: "How is configuration added?" leaves "added" alone, and
    "Is configuration added ...?" too; the topic question leaves the answer its edit."""
    from lettuce_build.stages.prose_edits import InjectProseMenuStage, rule_edits

    chunk = "Marshmallow schemas are classes. Configuration is added using the ``class Meta`` paradigm."
    plain = {**item(chunk), "context": chunk, "donor": "", "language": "en"}
    assert ChosenQuestionStage().offered(plain) == [
        "How is configuration added?",
        "Is configuration added using the `class Meta` paradigm?",
    ]
    stage = ChosenQuestionStage(editable=rule_edits(InjectProseMenuStage()))
    assert stage.offered(plain) == ["What should I know about `class Meta`?"]
    assert stage.focus(plain) == "Configuration is added using the ``class Meta`` paradigm."
