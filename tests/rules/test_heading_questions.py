"""A heading asks its question ("## Installation" -> "How do you install starlette?"), answered by
the first sentence under it that holds what the answer must (an install command, a license's
name); a heading that asks nothing, or no such sentence, offers nothing. Chunks after real
READMEs (starlette, alembic, httpx)."""

from lettuce_build.rules.heading_questions import headed_sections, heading_questions
from lettuce_build.rules.question_grammar import Shaped

STARLETTE = """## Installation

You'll also want to install an ASGI server, such as uvicorn, daphne, or hypercorn.

You can install all of these with `pip install starlette[full]`.

## License

Starlette is BSD licensed code.
"""


def sentences(chunk: str) -> tuple[str, ...]:
    from lettuce_build.stages.answers import evidence_sentences

    return evidence_sentences(chunk)


def test_a_heading_asks_and_the_first_sentence_holding_its_answer_answers():
    asked = heading_questions(STARLETTE, sentences(STARLETTE), "starlette")
    assert asked == {
        # the first sentence speaks of installing a server, not of how to install starlette
        "You can install all of these with `pip install starlette[full]`.": Shaped(
            "How do you install Starlette?", "Instrumental/Procedural"
        ),
        "Starlette is BSD licensed code.": Shaped(
            "Under what license is Starlette released?", "Concept Completion"
        ),
    }


def test_a_license_section_that_names_no_license_asks_nothing():
    chunk = "License\n=======\n\nSee the bundled LICENSE file for more details.\n"
    assert heading_questions(chunk, sentences(chunk), "marshmallow") == {}


def test_without_a_project_name_no_heading_asks():
    assert heading_questions(STARLETTE, sentences(STARLETTE), None) == {}


def test_headings_are_read_in_markdown_setext_and_restructuredtext():
    chunk = "# Alembic\n\nintro\n\nLicense\n-------\n\ntext\n\n## Usage ##\n\nmore\n"
    assert [heading for heading, _ in headed_sections(chunk)] == ["Alembic", "License", "Usage"]
