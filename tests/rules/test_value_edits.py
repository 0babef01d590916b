"""Values are contradicted with the context's own: a count, year or version of the answer is
replaced first by one of the same kind the context gives in another role, and invented only
where it has none; a value the context lists beside the original, or after which a sentence of
the context says the same, is refused. The sentences are httpx's documentation."""

from lettuce_build.rules.context_values import refused
from lettuce_build.rules.prose_mutations import prose_edits

TIMEOUTS = (
    "HTTPX is careful to enforce timeouts everywhere by default. The default behavior is to raise a "
    "TimeoutException after 5 seconds of network inactivity. You can set a pool timeout of 10 "
    "seconds and a connect timeout of 60 seconds instead."
)
RELEASES = (
    "HTTPX is tested on Python 3.9, 3.10, 3.11 and 3.12. Its first release was in 2019; 1.0 came in 2025."
)


def edits(answer, context, rule):
    return [(e.original, e.hallucinated) for e in prose_edits(answer, context, donor="") if e.rule == rule]


def test_a_duration_takes_another_the_context_gives_before_one_is_invented():
    answer = "The default behavior is to raise a TimeoutException after 5 seconds of network inactivity."
    [(original, new)] = edits(answer, TIMEOUTS, "duration")
    assert original == "5 seconds" and new in {"10 seconds", "60 seconds"}


def test_a_year_takes_another_year_of_the_context():
    answer = "Its first release was in 2019."
    assert edits(answer, RELEASES, "date") == [("2019", "2025")]


def test_a_value_the_context_lists_beside_the_original_is_refused():
    answer = "HTTPX is tested on Python 3.9."
    assert refused(answer, (26, 29), "3.10", context=RELEASES)
    assert not refused(answer, (26, 29), "3.8", context=RELEASES)
    assert all(new not in {"Python 3.10", "3.10"} for _, new in edits(answer, RELEASES, "version"))


def test_a_value_after_which_the_context_says_the_same_is_refused():
    answer = "You can set a pool timeout of 5 seconds."
    start = answer.index("5")
    assert refused(answer, (start, start + 1), "10", context=TIMEOUTS)


def test_with_no_value_of_its_kind_in_the_context_one_is_invented():
    answer = "The pool holds 100 connections."
    [(original, new)] = edits(answer, "The pool holds 100 connections.", "number")
    assert original == "100 connections" and new.split()[0] in {"101", "200", "99"}


def test_a_version_takes_another_of_its_series_never_another_package_s():
    """redis-py's README: "redis-py 5.1 supports Python 3.8+" beside "redis-py 4.5.0" made
    "Python [4.5.0]+", a Python that does not exist."""
    context = (
        "redis-py 5.1 supports Python 3.8+. Support for Python 3.7 ended with redis-py 4.5.0 and "
        "4.6.1, which still install on it."
    )
    answer = "redis-py 5.1 supports Python 3.8+."
    for seed in range(8):  # whichever the draw: the one version of Python's series
        made = [
            (e.original, e.hallucinated) for e in prose_edits(answer, context, donor="", seed=(str(seed),))
        ]
        assert ("Python 3.8", "Python 3.7") in made
        assert not any("4.5.0" in new or "4.6.1" in new for _, new in made)
