"""Sentences end where sentences end: never inside an abbreviation, a version, a path or a URL."""

import pytest

from lettuce_build.core.sentences import (
    complete_prefix,
    is_complete,
    sentence_count,
    sentence_cut,
    split_sentences,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # seen live: an answer ended at "(a.k.a." when a hand regex split it
        (
            "It uses a bundle of SSL certificates (a.k.a. CA bundle) from certifi. It verifies them.",
            ["It uses a bundle of SSL certificates (a.k.a. CA bundle) from certifi.", "It verifies them."],
        ),
        (
            "Use a web framework, e.g. Flask or Django. Then deploy.",
            ["Use a web framework, e.g. Flask or Django.", "Then deploy."],
        ),
        ("It supports Python 3.10. It is fast.", ["It supports Python 3.10.", "It is fast."]),
        ("Install v2.0.1 first. Then run it.", ["Install v2.0.1 first.", "Then run it."]),
        ("Run ./bin/tool.sh now. It prints a report.", ["Run ./bin/tool.sh now.", "It prints a report."]),
        (
            "Files like data.csv are read. Others are not.",
            ["Files like data.csv are read.", "Others are not."],
        ),
        (
            "See https://github.com/psf/requests for more. It is great.",
            ["See https://github.com/psf/requests for more.", "It is great."],
        ),
    ],
)
def test_english_sentences_end_where_they_end(text, expected):
    assert split_sentences(text) == expected


@pytest.mark.parametrize(
    ("language", "text", "expected"),
    [
        (
            "de",
            "Der Preis beträgt ca. 5 Euro. Das ist z.B. günstig.",
            ["Der Preis beträgt ca. 5 Euro.", "Das ist z.B. günstig."],
        ),
        (
            "fr",
            "Il habite à Paris, p. ex. dans le 5e arr. Il travaille chez Renault.",
            ["Il habite à Paris, p. ex. dans le 5e arr.", "Il travaille chez Renault."],
        ),
        ("pl", "To jest np. krótkie zdanie. A to drugie.", ["To jest np. krótkie zdanie.", "A to drugie."]),
        ("zh", "这是一个句子。这是另一个句子！", ["这是一个句子。", "这是另一个句子！"]),
    ],
)
def test_sentences_in_other_languages(language, text, expected):
    assert split_sentences(text, language) == expected


def test_a_cut_response_keeps_its_complete_sentences():
    assert complete_prefix("It uses certifi (a.k.a. CA bundle). It verifies the cert") == (
        "It uses certifi (a.k.a. CA bundle)."
    )
    assert complete_prefix("no sentence ends here") == ""
    assert is_complete('He said "yes."') and not is_complete("It uses (a.k.a")


def test_a_long_text_is_cut_where_a_sentence_ends():
    text = "First sentence here. Second one, e.g. this. " + "x " * 50
    assert sentence_cut(text, 60) == "First sentence here. Second one, e.g. this."
    assert sentence_cut("short", 60) == "short"
    assert len(sentence_cut("word " * 40, 50)) <= 50  # no sentence end: a space


def test_counting_sentences():
    assert sentence_count("What is it (e.g. a tool)?") == 1
    assert sentence_count("What is it? Who made it?") == 2
