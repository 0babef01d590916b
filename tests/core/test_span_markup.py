"""Spans tagged for a translator and found again in its translation: kept only when every tag
and code placeholder comes back once, well formed; each other outcome refused with its reason.
The translations are hand-written ones of a real README answer, then broken as translators do."""

import pytest

from lettuce_build.core.errors import MarkupError
from lettuce_build.core.span_markup import mark, unmark, unmarked_words

ANSWER = (
    "Install Pebblemq with `pip install pebblemq`; it needs Python 3.10 or newer and listens on port 8080."
)
SPANS = [(ANSWER.index("3.10"), ANSWER.index("3.10") + 4), (ANSWER.index("8080"), ANSWER.index("8080") + 4)]
MARKED = mark(ANSWER, SPANS)

GERMAN = (
    "Installieren Sie Pebblemq mit <c1/>; es braucht Python"
    " <h1>3.10</h1> oder neuer und lauscht auf Port <h2>8080</h2>."
)
#: Polish puts the port first: the spans' order changes, their types do not
REORDERED = (
    "Pebblemq nasłuchuje na porcie <h2>8080</h2>, wymaga Pythona"
    " <h1>3.10</h1> lub nowszego; instalacja: <c1/>."
)


def test_the_code_goes_as_a_placeholder_and_each_span_in_its_numbered_tags():
    assert MARKED.text == (
        "Install Pebblemq with <c1/>; it needs Python <h1>3.10</h1>"
        " or newer and listens on port <h2>8080</h2>."
    )
    assert MARKED.code == ["`pip install pebblemq`"] and MARKED.spans == 2


def test_a_translation_gives_each_span_its_new_offsets_and_the_code_back_verbatim():
    text, spans = unmark(GERMAN, MARKED)
    assert "`pip install pebblemq`" in text and "<" not in text
    assert [text[a:b] for a, b in spans] == ["3.10", "8080"]


def test_spans_may_change_order_where_the_language_reorders():
    text, spans = unmark(REORDERED, MARKED)
    assert [text[a:b] for a, b in spans] == ["3.10", "8080"] and spans[1][0] < spans[0][0]


def test_a_span_inside_code_sends_that_code_as_text_with_its_tags():
    answer = "Run `serve --port 8080` to start it."
    marked = mark(answer, [(answer.index("8080"), answer.index("8080") + 4)])
    assert marked.code == [] and marked.text == "Run `serve --port <h1>8080</h1>` to start it."


@pytest.mark.parametrize(
    ("translation", "reason"),
    [
        (GERMAN.replace("<h2>8080</h2>", "8080"), "span_lost"),  # a tag dropped
        (GERMAN.replace("<h2>8080</h2>", "<h2>8080</h2> (<h2>8080</h2>)"), "span_duplicated"),  # doubled
        (
            GERMAN.replace("</h1>", "</hX>").replace("</h2>", "</h1>").replace("</hX>", "</h2>"),
            "span_moved",
        ),  # swapped
        (GERMAN.replace("<h1>3.10</h1>", "<h1> </h1>3.10"), "span_lost"),  # emptied
        (
            GERMAN.replace("<h1>3.10", "<h1>3.10 <h2>").replace("<h2>8080</h2>", "8080</h2>"),
            "span_moved",
        ),  # nested
        (GERMAN.replace("<h2>8080</h2>", "<h3>8080</h3>"), "span_duplicated"),  # a span nobody asked for
        (GERMAN.replace("<c1/>", "pip"), "code_lost"),
        (GERMAN.replace("<c1/>", "<c1/> <c1/>"), "code_lost"),
    ],
)
def test_a_translation_whose_marks_did_not_come_back_once_each_is_refused_with_the_reason(
    translation, reason
):
    with pytest.raises(MarkupError) as refused:
        unmark(translation, MARKED)
    assert refused.value.reason == reason


def test_a_clean_answer_stays_clean_and_a_tag_in_its_translation_is_refused():
    clean = mark("It listens on port 5672.", [])
    assert unmark("Es lauscht auf Port 5672.", clean) == ("Es lauscht auf Port 5672.", [])
    with pytest.raises(MarkupError):
        unmark("Es lauscht auf Port <h1>5672</h1>.", clean)


def test_the_words_a_language_is_told_by_leave_out_spans_and_code():
    assert unmarked_words(GERMAN) == (
        "Installieren Sie Pebblemq mit ; es braucht Python oder neuer und lauscht auf Port ."
    )
