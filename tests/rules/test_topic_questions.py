"""A sentence no shape fits is asked what a reader should know about what it names: code it
quotes, a name it gives, or a subject opening with a determiner; a sentence naming nothing to
ask about, or crediting someone, offers nothing. Sentences from real documentation (click,
alembic, uvicorn, attrs)."""

import pytest

from lettuce_build.core.gates import question_problem
from lettuce_build.rules.topic_questions import topic_question


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        (
            "Click provides a {func}`get_app_dir` function which returns the most appropriate location "
            "for per-user config files for your application depending on the OS.",
            "What should I know about `get_app_dir`?",
        ),
        (
            "When running from CLI these are configured using `--forwarded-allow-ips`.",
            "What should I know about `--forwarded-allow-ips`?",
        ),
        (
            "To run under PyPy you'll want to use pure-python implementation instead.",
            "What should I know about PyPy?",
        ),
        (
            "The default type comparison logic will work for built in types as well as basic user "
            "defined types.",
            "What should I know about the default type comparison logic?",
        ),
    ],
)
def test_a_sentence_is_asked_about_what_it_names(sentence, expected):
    asked = topic_question(sentence, None)
    assert asked is not None and asked.question == expected
    assert question_problem(asked.question, sentence) is None  # no word about its prompt


@pytest.mark.parametrize(
    "sentence",
    [
        "Pull request courtesy Maciek Bryński.",  # a credit claims nothing
        "It may be very helpful to review this section first to get an overview of this API.",
        "Therefore it may be necessary to rename the table first.",
        "Change the default value to ``True``.",  # a literal is no topic
        "The starting points of a migration are shown here.",  # a subject cut at a preposition
    ],
)
def test_a_sentence_naming_nothing_to_ask_about_offers_nothing(sentence):
    assert topic_question(sentence, None) is None
