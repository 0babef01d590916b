"""Answers chosen from their context are reworded before any edit, faithfully: markup and link
targets dropped (link text kept), contractions made; what a sentence claims never changes, and
code is never touched. The sentences are real READMEs' (structlog, attrs)."""

import pytest

from lettuce_build.rules.rewording import it_for_subject, joined_list, led, reworded


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        (
            "*structlog* is not hamstrung by designs of yore.",
            "structlog isn't hamstrung by designs of yore.",
        ),
        (
            "It would not be possible without our [amazing sponsors](https://github.com/sponsors/hynek).",
            "It wouldn't be possible without our amazing sponsors.",
        ),
        (
            "`dataclasses` [are a descendant](https://hynek.me/articles/import-attrs/) of *attrs*.",
            "`dataclasses` are a descendant of attrs.",
        ),
        ("You cannot subclass it, and it is not a dict.", "You can't subclass it, and it's not a dict."),
        # links by reference (starlette's markdown, alembic's and tqdm's reStructuredText)
        (
            "Starlette is a lightweight [ASGI][asgi] framework/toolkit.",
            "Starlette is a lightweight ASGI framework/toolkit.",
        ),
        (
            "Alembic is a database migrations tool written by the author of "
            "`SQLAlchemy <http://www.sqlalchemy.org>`_.",
            "Alembic is a database migrations tool written by the author of SQLAlchemy.",
        ),
        ("All source code is hosted on `GitHub`__.", "All source code is hosted on GitHub."),
        # plainer words for wordy phrases (starlette's and httpx's documentation)
        (
            "In order to use it, Starlette allows you to mount applications such as `Flask`.",
            "To use it, Starlette lets you mount applications like `Flask`.",
        ),
        ("HTTPX is able to retry approximately 3 times.", "HTTPX can retry about 3 times."),
        # markdown's shortcut references (flask's README); a footnote or code keeps its brackets
        (
            "It began as a simple wrapper around [Werkzeug] and [Jinja], see [^1] and `[a]`.",
            "It began as a simple wrapper around Werkzeug and Jinja, see [^1] and `[a]`.",
        ),
        # single-underscore emphasis (black's README, uvicorn's documentation); snake_case stays
        (
            "_Black_ is the uncompromising Python code formatter.",
            "Black is the uncompromising Python code formatter.",
        ),
        (
            "The pool size is only 40 _tokens_, see pool_size.",
            "The pool size is only 40 tokens, see pool_size.",
        ),
    ],
)
def test_a_sentence_is_reworded_and_still_claims_what_it_did(sentence, expected):
    assert reworded(sentence) == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "This is what it is.",  # "it's" cannot end a clause
        "It is, in short, the fastest.",
        "Only `is not None` compares identity: use `x is not None`.",  # code stays as written
        "```python\nassert value is not None\n```",
    ],
)
def test_where_a_contraction_cannot_stand_or_code_is_the_text_stays(sentence):
    assert reworded(sentence) == sentence


def test_an_image_is_dropped_with_its_space():
    assert reworded("![logo](docs/logo.png) attrs is fast.") == "attrs is fast."


def test_inline_code_and_double_backtick_literals_are_no_links():
    assert reworded("Call ``fetch`` or `fetch()` then.") == "Call ``fetch`` or `fetch()` then."


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        # real sentences (attrs' README, httpx's and alembic's docs), as the rewording leaves them
        ("Types are entirely optional with attrs.", "Yes, types are entirely optional with attrs."),
        (
            "HTTP/2 doesn't change the core semantics of the request, but alters the way data is sent.",
            "No, HTTP/2 doesn't change the core semantics of the request, but alters the way data is sent.",
        ),
        (
            "Alembic is distributed under the MIT license.",
            "Yes, Alembic is distributed under the MIT license.",
        ),
        # where the sentence's own yes or no cannot be told, no lead
        (
            "Although GraphQL support is no longer built in, you can still use GraphQL with Starlette.",
            "Although GraphQL support is no longer built in, you can still use GraphQL with Starlette.",
        ),
        ("It isn't cached, and it's never retried.", "It isn't cached, and it's never retried."),
        # a negation inside an infinitive is no "no" (jinja's docs): as it is
        (
            "Future Jinja versions will try not to change it in a backwards incompatible way.",
            "Future Jinja versions will try not to change it in a backwards incompatible way.",
        ),
    ],
)
def test_a_yes_no_answer_is_led_by_the_yes_or_no_its_sentence_gives(answer, expected):
    assert led(answer, answer.split(". ")[0]) == expected


def test_only_an_answer_opening_with_its_focus_is_led():
    assert (
        led("Data is signed. Types are optional.", "Types are optional.")
        == "Data is signed. Types are optional."
    )


@pytest.mark.parametrize(
    ("question", "answer", "expected"),
    [
        # real README sentences (httpx, uvicorn)
        ("What is HTTPX?", "HTTPX is a fully featured HTTP client.", "It is a fully featured HTTP client."),
        (
            "What does the default process manager monitor?",
            "The default process manager monitors the status of child processes.",
            "It monitors the status of child processes.",
        ),
        # a plural subject, a noun after the subject, a subject the question does not name: as it is
        ("What are WSGI applications?", "WSGI applications are a single callable.", None),
        ("What is Uvicorn?", "Uvicorn applications are fast.", None),
        ("What is HTTPX?", "Requests is the library HTTPX was modelled on.", None),
        # a plural subject before a modal (jinja's and click's docs): no "it"
        (
            "Will future Jinja versions try not to change it?",
            "Future Jinja versions will try not to change it in a backwards incompatible way.",
            None,
        ),
        # seen in a build of rich's README: "you" is asked about, and no "it"
        (
            "How can you use a Console object to generate sophisticated output?",
            "You can use a Console object to generate sophisticated output with minimal effort.",
            None,
        ),
        # seen in a build of black's README: "Style configuration" is named too, "options" no verb
        (
            "Are style configuration options deliberately limited?",
            "Style configuration options are deliberately limited and rarely added.",
            None,
        ),
    ],
)
def test_it_stands_for_the_subject_the_question_names(question, answer, expected):
    assert it_for_subject(answer, question) == (expected or answer)


def test_a_list_and_the_sentence_leading_it_are_joined_into_one_sentence():
    # attrs' README: the items continue their lead; a final "and ..." item is not doubled
    lead = "After *declaring* your attributes, *attrs* gives you:"
    items = [
        "a concise and explicit overview of the class's attributes,",
        "a nice human-readable `__repr__`,",
        "equality-checking methods,",
        "an initializer,",
        "and much more.",
    ]
    assert joined_list(lead, items) == (
        "After declaring your attributes, attrs gives you a concise and explicit overview of the "
        "class's attributes, a nice human-readable `__repr__`, equality-checking methods, an "
        "initializer and much more."
    )
    starlette = joined_list(
        "It is production-ready, and gives you the following:",
        [
            "A lightweight, low-complexity HTTP web framework.",
            "WebSocket support.",
            "In-process background tasks.",
        ],
    )
    assert starlette == (
        "It is production-ready, and gives you a lightweight, low-complexity HTTP web framework, "
        "WebSocket support and in-process background tasks."
    )


@pytest.mark.parametrize(
    ("lead", "items"),
    [
        # definitions (httpx), items that are sentences (alembic), a title for a lead
        (
            "The HTTPX project relies on these excellent libraries:",
            ["`h11` - HTTP/1.1 support.", "`certifi` - SSL certificates."],
        ),
        (
            "Alembic offers the following functionality:",
            ["Can emit ALTER statements to a database.", "Can run scripts."],
        ),
        ("Features:", ["Fast.", "Small."]),
        ("It gives you:", ["One thing."]),
    ],
)
def test_a_list_that_does_not_continue_its_lead_is_not_joined(lead, items):
    assert joined_list(lead, items) is None
