"""A translated answer is kept only when its spans came back and the words around them are a
translation into the asked language: a copy of the English (or of one sentence), another
language, or tags around other words than the span's is a failure with its reason. Real
sentences of German, French, Polish and Chinese, translated by hand."""

import pytest

from lettuce_build.engine.stage import ParseFailure
from lettuce_build.stages.translation import (
    TranslateAnswerStage,
    TranslateContextStage,
    TranslatedContext,
    Translation,
)

ANSWER = (
    "Install Pebblemq with `pip install pebblemq`; it needs Python 3.10 or newer and listens on port 8080."
)
SPAN = (ANSWER.index("8080"), ANSWER.index("8080") + 4)
TRANSLATIONS = {
    "de": (
        "Installieren Sie Pebblemq mit <c1/>; es benötigt Python 3.10"
        " oder neuer und lauscht auf Port <h1>8080</h1>."
    ),
    "fr": (
        "Installez Pebblemq avec <c1/> ; il nécessite Python 3.10 ou"
        " plus récent et écoute sur le port <h1>8080</h1>."
    ),
    "pl": (
        "Zainstaluj Pebblemq poleceniem <c1/>; wymaga Pythona 3.10 lub"
        " nowszego i nasłuchuje na porcie <h1>8080</h1>."
    ),
    "zh": "使用 <c1/> 安装 Pebblemq；它需要 Python 3.10 或更高版本，并在端口 <h1>8080</h1> 上监听。",
}


def item(language: str) -> dict:
    return {
        "key": f"k::{language}",
        "language": language,
        "source_language": "en",
        "answer": ANSWER,
        "labels": [
            {
                "start": SPAN[0],
                "end": SPAN[1],
                "text": "8080",
                "label": "NUMERICAL",
                "category": "contradiction",
                "subcategory": "numerical",
            }
        ],
        "question": "How do I install Pebblemq?",
        "context": "Install Pebblemq with `pip install pebblemq`. It listens on port 5672.",
    }


@pytest.mark.parametrize("language", sorted(TRANSLATIONS))
def test_a_translation_keeps_its_span_at_its_new_offsets_and_the_code_verbatim(language):
    made = TranslateAnswerStage().parse(item(language), Translation(text=TRANSLATIONS[language]))
    answer, [label] = made["translated_answer"], made["translated_labels"]
    assert answer[label["start"] : label["end"]] == label["text"] == "8080"
    assert label["category"] == "contradiction" and "`pip install pebblemq`" in answer


def test_the_request_says_both_languages_and_carries_the_tags():
    request = TranslateAnswerStage().render(item("de"))
    assert "from English into German" in request.messages[-1].content
    assert "<h1>8080</h1>" in request.messages[-1].content and "<c1/>" in request.messages[-1].content


@pytest.mark.parametrize(
    ("language", "text", "reason"),
    [
        (
            "de",
            "Install Pebblemq with <c1/>; it needs Python 3.10 or newer and listens on port <h1>8080</h1>.",
            "not_translated",
        ),
        ("de", TRANSLATIONS["fr"], "wrong_language"),
        ("pl", TRANSLATIONS["de"], "wrong_language"),
        ("de", TRANSLATIONS["de"].replace("<h1>8080</h1>", "8080"), "span_lost"),
    ],
)
def test_a_copy_another_language_or_a_lost_span_fails_with_its_reason(language, text, reason):
    with pytest.raises(ParseFailure) as failed:
        TranslateAnswerStage().parse(item(language), Translation(text=text))
    assert failed.value.reason == reason


def test_the_context_and_question_are_translated_with_their_code_kept():
    translated = TranslatedContext(
        question="Wie installiere ich Pebblemq?",
        context="Installieren Sie Pebblemq mit <c1/>. Es lauscht auf Port 5672.",
    )
    made = TranslateContextStage().parse(item("de"), translated)
    assert (
        made["translated_context"]
        == "Installieren Sie Pebblemq mit `pip install pebblemq`. Es lauscht auf Port 5672."
    )
    copied = TranslatedContext(
        question="How do I install Pebblemq?", context="Install Pebblemq with <c1/>. It listens on port 5672."
    )
    with pytest.raises(ParseFailure) as failed:
        TranslateContextStage().parse(item("de"), copied)
    assert failed.value.reason == "not_translated"


#: three sentences, the last with a span that holds no number
THREE = "Pebblemq stores messages on disk. It replays them after a crash. It does not encrypt them."
GERMAN_THREE = (
    "Pebblemq speichert Nachrichten auf der Festplatte. Nach einem Absturz spielt es sie erneut ab. "
    "Es <h1>verschlüsselt sie nicht</h1>."
)


def spanned(answer: str, span: str, language: str = "de") -> dict:
    start = answer.index(span)
    label = {**item(language)["labels"][0], "start": start, "end": start + len(span), "text": span}
    return {**item(language), "answer": answer, "labels": [label]}


def test_a_span_that_stays_in_its_sentence_with_its_numbers_is_kept_in_any_notation():
    made = TranslateAnswerStage().parse(spanned(THREE, "does not encrypt"), Translation(text=GERMAN_THREE))
    [label] = made["translated_labels"]
    assert label["text"] == "verschlüsselt sie nicht"
    answer = "The queue holds 10,000 messages at most."
    french = "La file contient au plus <h1>10 000</h1> messages."
    made = TranslateAnswerStage().parse(spanned(answer, "10,000", "fr"), Translation(text=french))
    assert made["translated_labels"][0]["text"] == "10 000"


@pytest.mark.parametrize(
    ("answer", "span", "text", "reason"),
    [
        (  # the tags around the version, not the port: the span's number stayed outside it
            ANSWER,
            "8080",
            "Installieren Sie Pebblemq mit <c1/>; es benötigt Python <h1>3.10</h1> oder neuer und "
            "lauscht auf Port 8080.",
            "span_moved",
        ),
        (  # the tags around a word of the first sentence
            THREE,
            "does not encrypt",
            "Pebblemq <h1>speichert</h1> Nachrichten auf der Festplatte. Nach einem Absturz spielt es "
            "sie erneut ab. Es verschlüsselt sie nicht.",
            "span_moved",
        ),
        (  # one sentence left in English
            THREE,
            "does not encrypt",
            "Pebblemq speichert Nachrichten auf der Festplatte. It replays them after a crash. "
            "Es <h1>verschlüsselt sie nicht</h1>.",
            "not_translated",
        ),
    ],
)
def test_tags_around_other_words_or_a_sentence_left_in_english_fail_with_their_reason(
    answer, span, text, reason
):
    with pytest.raises(ParseFailure) as failed:
        TranslateAnswerStage().parse(spanned(answer, span), Translation(text=text))
    assert failed.value.reason == reason, failed.value.detail
