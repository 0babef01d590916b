"""A sentence is asked by any verb it has, not only the closed list's: what its subject does it
to, what it will do, whether it should. Sentences from real documentation (uvicorn, starlette,
structlog, httpx)."""

import pytest

from lettuce_build.rules.question_grammar import Shaped
from lettuce_build.rules.verb_questions import present_base, verb_questions


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "The default process manager monitors the status of child processes and automatically "
            "restarts child processes that die unexpectedly",
            Shaped("What does the default process manager monitor?", "Feature Specification"),
        ),
        ("The pool invokes the partial function, once for each element of `workers`",
         Shaped("What does the pool invoke?", "Feature Specification")),
        (
            "HTTPX needs to verify the identity of the requested host",
            Shaped("What does HTTPX need to verify?", "Feature Specification"),
        ),
        (
            "HTTPX defaults to including reasonable timeouts for all network operations",
            Shaped("What does HTTPX default to?", "Feature Specification"),
        ),
        (
            "A process manager will handle the socket setup, start-up multiple server processes",
            Shaped("What will a process manager handle?", "Feature Specification"),
        ),
        (
            "Middleware classes should not modify their state outside of the `__init__` method",
            Shaped("Should Middleware classes modify their state outside of the `__init__` method?",
                   "Verification"),
        ),
    ],
)  # fmt: skip
def test_a_sentence_is_asked_by_its_verb(text, expected):
    assert expected in verb_questions(text, None)


@pytest.mark.parametrize(
    "text",
    [
        "HTTPX makes a guess at the encoding to use",  # a light verb asks nothing
        "The process monitors restart crashed workers",  # "monitors" is the subject's noun here
        "This includes checking for no response sent",  # "this" stands for what came before
        "`requests` allows event hooks to mutate `Request` objects",  # the closed list's verb: its own shape
        "It blends in with native libraries of your chosen backend",  # "it" with no name: no subject
    ],
)
def test_a_verb_that_asks_nothing_offers_nothing(text):
    assert verb_questions(text, None) == []


def test_it_stands_for_the_name_given():
    asked = verb_questions("It monitors the status of the child process", "Uvicorn")
    assert asked == [Shaped("What does Uvicorn monitor?", "Feature Specification")]


def test_only_a_verb_in_the_third_person_present_has_a_base():
    assert present_base("eliminates") == "eliminate"
    assert present_base("status") is None and present_base("news") is None
    assert present_base("Restarts") is None  # a capital opens a sentence or a name, no verb
