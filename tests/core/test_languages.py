"""The checks that cut sentences or count words, on real sentences of German, French, Polish and
Chinese: each language's abbreviations end no sentence, Chinese is cut into words, a question is
told by its own question mark, and support is counted in the answer's words. The language of a
text is told by a model inside its wheel."""

import pytest

from lettuce_build.core.gates import answer_problem, asks_question, repeated, replaces_sentence_by_fragment
from lettuce_build.core.languages import identify, name_of
from lettuce_build.core.sentences import split_sentences
from lettuce_build.core.words import content_words, support, words
from lettuce_build.sources.chunking import ChunkConfig, chunk_markdown

#: per language: two sentences (the first with an abbreviation of the language), a context that
#: supports them, a claim it does not support, and a question
TEXTS = {
    "de": (
        ["Der Server lauscht u. a. auf Port 8080.", "Er braucht Python 3.10 oder neuer."],
        "Pebblemq ist eine Nachrichtenwarteschlange. Der Server lauscht standardmäßig auf Port 8080 "
        "und braucht Python 3.10 oder neuer.",
        "Die Warteschlange verschlüsselt jede Nachricht mit einem geheimen Schlüssel aus Lissabon.",
        "Wie installiere ich Pebblemq?",
    ),
    "fr": (
        ["Installez-le, p. ex. avec pip.", "Le serveur écoute sur le port 8080."],
        "Pebblemq est une file de messages. Installez-le avec pip ; le serveur écoute sur le port 8080.",
        "La file chiffre chaque message avec une clé secrète venue de Lisbonne.",
        "Comment installer Pebblemq ?",
    ),
    "pl": (
        ["Serwer nasłuchuje np. na porcie 8080.", "Wymaga Pythona 3.10 lub nowszego."],
        "Pebblemq to kolejka wiadomości. Serwer nasłuchuje domyślnie na porcie 8080 i wymaga Pythona "
        "3.10 lub nowszego.",
        "Kolejka szyfruje każdą wiadomość tajnym kluczem przywiezionym z Lizbony.",
        "Jak zainstalować Pebblemq?",
    ),
    "zh": (
        ["服务器默认监听8080端口。", "它需要Python 3.10或更高版本。"],
        "Pebblemq是一个消息队列。服务器默认监听8080端口，它需要Python 3.10或更高版本。",
        "队列使用来自里斯本的秘密钥匙加密每一条消息。",
        "如何安装Pebblemq？",
    ),
}
LANGUAGES = sorted(TEXTS)


@pytest.mark.parametrize("language", LANGUAGES)
def test_sentences_end_where_the_language_ends_them(language):
    sentences, *_ = TEXTS[language]
    joined = ("" if language == "zh" else " ").join(sentences)
    assert split_sentences(joined, language) == sentences


@pytest.mark.parametrize(
    ("language", "sentences"),
    [
        (
            "pl",
            [
                "Biblioteka obsługuje m.in. pliki CSV, tj. dane tabelaryczne.",
                "Waży ok. 5 MB i działa na tzw. serwerach brzegowych.",
                "To jest blok.",
                "Działa np. na Linuksie.",
            ],
        ),
        ("fr", ["Il lit les fichiers, c.-à-d. les tableaux.", "M. Dupont l'a écrit en 2019."]),
    ],
)
def test_an_abbreviation_the_segmenter_lacks_ends_no_sentence(language, sentences):
    assert split_sentences(" ".join(sentences), language) == sentences


def test_chinese_is_cut_into_words_and_spaced_scripts_by_their_spaces():
    assert words("服务器默认监听8080端口") == ["服务器", "默认", "监听", "8080", "端口"]
    assert words("Serwer nasłuchuje na porcie 8080") == ["serwer", "nasłuchuje", "na", "porcie", "8080"]
    assert "端口" in content_words("它在8080端口上运行。")


@pytest.mark.parametrize("language", LANGUAGES)
def test_an_answer_is_supported_by_its_context_in_its_own_words(language):
    sentences, context, unsupported_claim, _ = TEXTS[language]
    answer = ("" if language == "zh" else " ").join(sentences)
    assert support(answer, context)[0] >= 0.75
    assert answer_problem(answer, context, language=language) is None
    assert support(unsupported_claim, context)[0] < 0.5
    problem = answer_problem(unsupported_claim, context, language=language)
    assert problem is not None and problem[0] == "answer_unsupported"


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_question_and_a_loop_are_told_in_every_language(language):
    sentences, _, _, question = TEXTS[language]
    assert asks_question(f"{sentences[0]} {question}", language) == question
    assert asks_question(" ".join(sentences), language) is None
    looping = ("" if language == "zh" else " ").join([sentences[1]] * 3)
    assert repeated(looping, language=language)
    assert not repeated(" ".join(sentences), language=language)


def test_a_chinese_sentence_turned_into_a_word_is_a_fragment_and_one_rewritten_is_not():
    sentence = TEXTS["zh"][0][1]
    assert replaces_sentence_by_fragment(sentence, "版本")
    assert not replaces_sentence_by_fragment(sentence, "它需要Python 3.8或更低版本。")


def test_an_oversized_section_is_cut_where_a_sentence_of_its_language_ends():
    section = "# Pebblemq\n\n" + " ".join(TEXTS["de"][0] * 40)
    [chunk] = chunk_markdown(section, ChunkConfig(min_chars=100, max_chars=600), "de")
    assert chunk.endswith(("auf Port 8080.", "oder neuer.")) and len(chunk) <= 600  # never at "u."


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_language_of_a_text_is_told_by_the_model_in_the_wheel(language):
    sentences, context, _, _ = TEXTS[language]
    assert identify(context) == language and name_of(language)
    assert identify("8080") is None  # too few letters to tell
