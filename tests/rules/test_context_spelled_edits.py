"""Edits spelled from the context: a role swapped for its counterpart, a state for its opposite,
a common word for another of its class, and a sentence the context says of one name said of
another, each made of words the context spells, so that only reading finds them; and each
refused where the context would leave the edited claim true. Sentences from real documentation
(httpx, Uvicorn)."""

from random import Random

from lettuce_build.core.shortcuts import spelled
from lettuce_build.rules.context_additions import said_of_another
from lettuce_build.rules.opposites import opposites
from lettuce_build.rules.prose_mutations import RULE_TYPES, prose_edits
from lettuce_build.rules.swapped_names import swapped_names
from lettuce_build.rules.term_classes import class_swaps

TRANSPORT = (
    "A transport instance must implement the low-level Transport API which deals with sending a single "
    "request, and returning a response. You should either subclass httpx.BaseTransport to implement a "
    "transport to use with Client, or subclass httpx.AsyncBaseTransport to implement a transport to use "
    "with AsyncClient."
)
SERVERS = (
    "Hypercorn supports HTTP/1.1, HTTP/2, and WebSockets. "
    "Granian was initially part of the Quart web framework, before being separated out into a standalone "
    "ASGI server. Daphne is the first ASGI server implementation, originally developed to power Django "
    "Channels."
)


def test_a_role_is_swapped_for_its_counterpart_the_context_names():
    answer = "It deals with sending a single request, and returning a response."
    made = {(answer[s:e], new) for s, e, new, rule in opposites(answer, TRANSPORT) if rule == "role"}
    assert made == {("request", "response"), ("response", "request")}
    assert RULE_TYPES["role"] == ("contradiction", "relational")


def test_a_role_the_context_lists_beside_its_counterpart_is_not_swapped():
    context = "HTTPX supports request and response hooks. Hooks are called with the request."
    answer = "HTTPX supports request hooks."
    assert not list(opposites(answer, context))


def test_a_swap_the_context_says_with_the_same_words_around_it_is_refused():
    context = "HTTPX is an HTTP client. Uvicorn is an HTTP server. The HTTP server is fast."
    assert not [new for *_, new, _ in opposites("The HTTP client is fast.", context)]


def test_a_state_is_swapped_for_its_opposite():
    answer = "HTTP/2 support isn't enabled by default."
    [(start, end, new, rule)] = list(opposites(answer, "HTTP/2 support isn't enabled by default."))
    assert (answer[start:end], new, rule) == ("enabled", "disabled", "state")
    assert RULE_TYPES["state"] == ("contradiction", "value")


def test_a_common_word_is_swapped_for_another_of_its_class_the_context_spells():
    context = "The pool runs each call in a thread. A process is started only when asked for."
    answer = "The pool runs each call in a thread."
    [(start, end, new, rule)] = list(class_swaps(answer, context))
    assert (answer[start:end], new, rule) == ("thread", "process", "term")


def test_a_word_of_a_class_is_never_swapped_for_one_the_context_does_not_spell():
    answer = "The pool runs each call in a thread."
    assert not list(class_swaps(answer, answer))


def test_an_article_is_made_to_fit_the_word_swapped_in():
    context = "It returns a list. An integer counts the items."
    made = prose_edits("It returns a list.", context, donor="")
    assert [(e.original, e.hallucinated) for e in made if e.rule == "term"] == [("a list", "an integer")]


def test_a_sentence_about_one_name_is_added_about_another_the_context_makes_a_subject():
    answer = "Hypercorn supports HTTP/1.1, HTTP/2, and WebSockets."
    made = list(said_of_another(answer, SERVERS, Random(0)))
    assert made
    for start, end, new, rule in made:
        added = new[len(answer[start:end]) :].strip()
        assert rule == "addition" and spelled(added, SERVERS)
        assert added.split()[0] in {"Granian", "Daphne", "Hypercorn"}
        assert added not in SERVERS


def test_a_sentence_the_context_says_of_the_other_name_too_is_not_added():
    context = "Hypercorn supports HTTP/2. Daphne supports HTTP/2 as well. Daphne is an ASGI server."
    made = [new for *_, new, _ in said_of_another("Daphne is an ASGI server.", context, Random(0))]
    assert all("Daphne supports HTTP/2" not in new for new in made)


def test_the_menu_offers_edits_spelled_from_the_context_alongside_the_others():
    answer = "It deals with sending a single request, and returning a response."
    made = prose_edits(answer, TRANSPORT, donor="")
    assert any(edit.rule == "role" and spelled(edit.hallucinated, TRANSPORT) for edit in made)


def test_a_role_name_in_code_markup_is_left_alone():
    # ":class:" is reStructuredText's role, not a word of the claim
    answer = "The command now returns the :class:`.Script` object."
    assert not list(class_swaps(answer, answer + " A module holds it."))


def test_a_state_in_an_idiom_is_left_alone():
    answer = "You should keep any state local to the dispatch method."
    assert not list(opposites(answer, answer + " A remote call is slow."))


def test_two_names_of_an_answer_trade_places():
    # alembic's changelog: the relation is reversed, in the answer's own words
    answer = "The test suite for Alembic now makes use of SQLAlchemy's testing framework directly."
    [(start, end, new, rule)] = list(swapped_names(answer, answer))
    assert (answer[start:end], new, rule) == (
        "Alembic now makes use of SQLAlchemy",
        "SQLAlchemy now makes use of Alembic",
        "swap",
    )
    assert RULE_TYPES["swap"] == ("contradiction", "relational")


def test_names_in_a_list_or_in_two_clauses_do_not_trade_places():
    assert not list(swapped_names("Starlette and Uvicorn are part of Encode.", ""))
    assert not list(swapped_names("Rather than trusting Nginx, you can instruct Uvicorn to trust all.", ""))


FLAGS = (  # Click's docs on options
    "To have a flag pass a value to the decorated function set `flag_value`. This automatically sets "
    "`is_flag=True`. To mark the flag as default, set `default=True`."
)


def test_a_setting_is_swapped_for_another_setting_the_context_quotes():
    from lettuce_build.rules.code_swaps import code_swaps

    answer = "To mark the flag as default, set `default=True`."
    [(start, end, new, rule)] = list(code_swaps(answer, FLAGS))
    assert (answer[start:end], new, rule) == ("default=True", "is_flag=True", "code")
    assert not list(code_swaps(answer, "Set `default=True` or `is_flag=True` to mark the flag."))  # listed
