"""Wordy or formal words are said plainly, as a writer answering in their own words says them,
and what the sentence claims stays: the sentences are real documentation's (alembic, uvicorn,
click, flask, tox, httpx). Where a plain word would not fit the words after it, or a word is a
noun, the sentence keeps its word."""

import pytest

from lettuce_build.rules.plain_words import plainer
from lettuce_build.rules.rewording import reworded


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        (
            "Any error logging middleware should ensure that it re-raises the exception.",
            "Any error logging middleware should make sure that it re-raises the exception.",
        ),
        (
            "The recommended approach is to let your orchestration system manage the number of "
            "deployed containers rather than relying on the process manager inside the container.",
            "The recommended approach is to let your orchestration system manage the number of "
            "deployed containers instead of relying on the process manager inside the container.",
        ),
        (
            "This could be used to split commands into multiple Python modules.",
            "This could be used to split commands into several Python modules.",
        ),
        (
            "However, a command can be split over lines via the backslash character.",
            "But a command can be split over lines through the backslash character.",
        ),
        (
            "It is possible to provide categories when flashing a message.",
            "You can offer categories when flashing a message.",
        ),
        (
            "On all other backends, the target database will always generate some kind of name.",
            "On all other backends, the target database will always produce some kind of name.",
        ),
        ("Unicode requires extra care.", "Unicode needs extra care."),
        ("Finally, implement the completion.", "Lastly, implement the completion."),
    ],
)
def test_a_wordy_word_is_said_plainly(sentence, expected):
    assert plainer(sentence) == expected


@pytest.mark.parametrize(
    "sentence",
    [
        # a noun after a determiner, not the verb
        "Each retry is an attempt to reconnect.",
        # "instead of" takes no bare verb
        "Use the stream() interface rather than use the stream argument.",
        # "offer ... with" is no English
        "The extension works with Flask-SQLAlchemy to provide the user with a model.",
        # "a enough number"
        "It needs a sufficient number of workers.",
        # "to require a confirmation" asks for one: no "need"
        "The header may be sent by clients to require a confirmation from the server.",
    ],
)
def test_where_the_plain_word_would_not_fit_the_sentence_stays(sentence):
    assert plainer(sentence) == sentence


def test_code_is_never_reworded():
    sentence = "Use ``create`` or `provides` to create multiple apps."
    assert reworded(sentence) == "Use ``create`` or `provides` to make several apps."
