"""Give-aways: a word the answers alone hold that tells the classes apart is named with its
count; a word both classes hold alike, or too few answers hold, is not."""

from lettuce_build.view.giveaways import NEGATIVE, Giveaways


def test_a_word_mostly_in_hallucinated_answers_is_named_and_one_in_both_is_not():
    giveaways = Giveaways()
    for n in range(10):
        giveaways.add(f"The cache is not cleared on exit {n}.", hallucinated=True)
        giveaways.add(f"The cache is cleared on exit {n}.", hallucinated=False)
    report = giveaways.report
    assert [(g.word, g.rows, g.hallucinated) for g in report.words] == [(NEGATIVE, 10, 10), ("not", 10, 10)]
    assert report.lines() == [
        "answer-only give-aways (hallucinated share of the rows holding a word; all rows: 0.50): "
        "'(a negative)' 10/10 (1.00), 'not' 10/10 (1.00)"
    ]


def test_every_negative_counts_as_one_cue_and_rare_words_are_not_named():
    giveaways = Giveaways()
    for answer in (
        "It can't run.",
        "It never runs.",
        "It cannot run.",
        "It does not run.",
        "No, it runs.",
    ) * 2:
        giveaways.add(answer, hallucinated=True)
    for _ in range(10):
        giveaways.add("It runs.", hallucinated=False)
    assert [g.word for g in giveaways.report.words] == [NEGATIVE]  # each negative word is in 2 rows: too few


def test_a_word_of_few_rows_is_not_named_however_far_its_share():
    giveaways = Giveaways()
    for n in range(40):
        giveaways.add("The pool holds connections." + (" Rarely." if n < 5 else ""), hallucinated=n % 2 == 0)
    assert giveaways.report.words == []  # "rarely": 3 of 5 rows hallucinated, within chance


def test_balanced_data_has_none():
    giveaways = Giveaways()
    for n in range(10):
        giveaways.add("The pool holds 100 connections.", hallucinated=n % 2 == 0)
    assert giveaways.report.words == []
    assert giveaways.report.lines()[0].endswith("none")
