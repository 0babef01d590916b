"""The spelling baseline marks each answer word its context never spells as hallucinated: where
it labels the rows well, the data teaches spelling, not reading. Its scores, from real README
sentences (httpx's)."""

from lettuce_build.core.shortcuts import BLIND_EXAMPLE_F1, SpellingBaseline

CONTEXT = (
    "HTTPX is a fully featured HTTP client for Python 3, which provides sync and async APIs, and "
    "support for both HTTP/1.1 and HTTP/2. Install HTTPX using pip: pip install httpx."
)


def spans_of(answer, *texts, kind="entity"):
    return [(answer.index(t), answer.index(t) + len(t), kind) for t in texts]


def test_copied_clean_answers_and_spans_bringing_new_words_are_labelled_by_spelling_alone():
    baseline = SpellingBaseline()
    baseline.add("HTTPX is a fully featured HTTP client for Python 3.", CONTEXT, [])
    wrong = "HTTPX is a fully featured FTP client for Python 3."
    baseline.add(wrong, CONTEXT, spans_of(wrong, "FTP"))
    report = baseline.report()
    assert (report.example_f1, report.word_f1) == (1.0, 1.0)
    assert (report.spans.novel, report.spans.spans) == (1, 1)
    assert "the rows can be labelled by spelling alone" in "\n".join(report.lines())


def test_a_contradiction_spelled_from_the_context_and_a_reworded_clean_answer_defeat_it():
    baseline = SpellingBaseline()
    # faithful, reworded: "library" and "offers" are not the context's words
    baseline.add(
        "It is a full-featured HTTP library for Python 3 that offers sync and async APIs.", CONTEXT, []
    )
    swapped = "HTTPX provides sync and async APIs for Python 2."  # "2": the context's (HTTP/2), wrong role
    baseline.add(swapped, CONTEXT, spans_of(swapped, "Python 2", kind="number"))
    report = baseline.report()
    # the clean row is marked, the hallucinated one is not
    assert report.example_f1 == 0.0 < BLIND_EXAMPLE_F1
    assert report.spans.novel == 0 and report.by_subcategory["number"].spans == 1
    assert "labelled by spelling alone" not in "\n".join(report.lines())


def test_no_rows_no_lines():
    assert SpellingBaseline().report().lines() == []
