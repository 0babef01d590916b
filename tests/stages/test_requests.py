"""A developer's request from an issue: short, about the issue, never the issue's report."""

import pytest

from lettuce_build.engine.stage import ParseFailure
from lettuce_build.stages.requests import (
    ASK,
    ChosenRequestStage,
    RequestChoice,
    RequestStage,
    clean_request,
    issue_requests,
    request_problem,
    request_shape_problem,
)

ISSUE = """`Session.resolve_redirects` copies the original request for every redirect

When following redirects, the method method is reset. Reproduction:

```python
import requests
requests.post("http://httpbin.org/redirect-to?url=/get")
```

Traceback (most recent call last):
  File "x.py", line 3, in <module>
"""


def parse(text):
    return RequestStage().parse({"issue": ISSUE}, text)


def test_a_request_is_the_core_ask_in_the_developers_words():
    assert parse("Request: Make Session.resolve_redirects keep the method changed by a 303 redirect.") == {
        "question": "Make Session.resolve_redirects keep the method changed by a 303 redirect."
    }
    assert clean_request('  "Fix resolve_redirects so\n it keeps the method."  ') == (
        "Fix resolve_redirects so it keeps the method."
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Fix it.", "request_too_short"),
        ("Fix resolve_redirects. " * 30, "request_too_long"),
        ("Fix this: Traceback (most recent call last) in resolve_redirects.", "request_holds_report"),
        ("Fix redirects. Keep the method. Add a test. Update docs.", "request_too_many_sentences"),
        ("Please make the colour picker remember its palette.", "question_off_context"),
        # what a small model wrote instead of a request (seen on real flask/requests issues)
        ("Your request is already well-explained: resolve_redirects resets the method.", "request_is_reply"),
        ("You're right, resolve_redirects resets the method on redirects.", "request_is_reply"),
        ("The following code is a simple example of resolve_redirects.", "request_is_reply"),
        ("You can use resolve_redirects to follow each redirect.", "request_is_reply"),
        ("You would need to call resolve_redirects with the original method.", "request_is_reply"),
        ("The method of resolve_redirects is reset on every redirect.", "not_a_request"),
    ],
)
def test_what_is_not_a_request_fails_with_a_reason(text, reason):
    with pytest.raises(ParseFailure) as failure:
        parse(text)
    assert failure.value.reason == reason


def test_the_prompt_shows_the_issue_and_asks_for_the_request_only():
    request = RequestStage().render({"issue": ISSUE})
    system, user = (m.content for m in request.messages)
    assert "GitHub issue" in system and "No tracebacks" in system
    assert user.startswith("Issue:\n`Session.resolve_redirects`") and user.endswith("Request:")
    assert request_problem("Make resolve_redirects keep the redirect method.", ISSUE) is None


@pytest.mark.parametrize(
    "text",
    [
        "Can resolve_redirects keep the method of the original request?",
        "resolve_redirects should keep the method of the original request.",
        "The problem is that resolve_redirects resets the method; please keep it.",
        "Keep the original method in resolve_redirects when following redirects.",
    ],
)
def test_a_request_may_ask_by_question_imperative_or_plain_ask(text):
    assert parse(text) == {"question": text}


# --- requests chosen among the issue's own words (--answers extractive, the embedded model's) ---

#: real SWE-bench issues (flask-4045, requests-2148, requests-2317), shortened
TITLE_ASKS = """Raise error when blueprint name contains a dot
This is required since every dot is now significant since blueprints can be nested. An error was \
already added for endpoint names in 1.0, but should have been added for this as well.
"""
REPORT = """socket.error exception not caught/wrapped in a requests exception (ConnectionError perhaps?)
I just noticed a case where I had a socket reset on me, and was raised to me as a raw socket error.

```
  File "/home/x/requests/models.py", line 721, in text
    if not self.content:
socket.error: [Errno 104] Connection reset by peer
```

Not sure if this is by accident or design... in general, I guess I'd expect a requests exception.

I am using requests 2.3.0 on python 2.7.6.
"""
STATES = """method = builtin_str(method) problem
In requests/sessions.py is a command:

method = builtin_str(method)
Converts method from b'GET' to "b'GET'"
"""


def test_a_chosen_request_is_the_issues_title_then_its_first_plain_sentences():
    assert issue_requests(TITLE_ASKS) == (
        "Raise error when blueprint name contains a dot.",
        "Raise error when blueprint name contains a dot. This is required since every dot is now "
        "significant since blueprints can be nested.",
        "Raise error when blueprint name contains a dot. This is required since every dot is now "
        "significant since blueprints can be nested. An error was already added for endpoint names "
        "in 1.0, but should have been added for this as well.",
    )


def test_no_chosen_request_holds_a_traceback_code_a_version_or_a_cut_sentence():
    offered = issue_requests(REPORT)
    # its question mark asks already
    assert (
        offered[0]
        == "socket.error exception not caught/wrapped in a requests exception (ConnectionError perhaps?)."
    )
    for request in offered:
        assert "File" not in request and "Errno" not in request and "2.3.0" not in request
        assert request_problem(request, REPORT) is None
    # a line introducing what was cut ("is a command:") and a line of code are no sentences
    assert issue_requests(STATES) == ("Please fix this: method = builtin_str(method) problem.",)


def test_a_title_that_only_states_the_problem_is_asked():
    assert issue_requests(STATES)[0].startswith(ASK)
    assert all(request_shape_problem(r) is None for r in issue_requests(REPORT) + issue_requests(STATES))


def test_the_model_only_chooses_among_the_offered_requests_through_the_schema():
    stage = ChosenRequestStage()
    item = {"issue": TITLE_ASKS, "context": "File: flask/blueprints.py"}
    offered = issue_requests(TITLE_ASKS)
    assert stage.applies(item)
    assert stage.item_schema(item)["properties"]["request"]["enum"] == list(offered)
    user = stage.render(item).messages[-1].content
    assert all(f"- {r}" in user for r in offered)
    assert stage.parse(item, RequestChoice(request=offered[1])) == {"question": offered[1]}
    with pytest.raises(ParseFailure) as failure:
        stage.parse(item, RequestChoice(request="Make blueprints faster."))
    assert failure.value.reason == "request_not_offered"


def test_an_issue_with_one_request_takes_it_without_a_model_call_and_one_with_none_fails():
    stage = ChosenRequestStage()
    assert not stage.applies({"issue": STATES, "context": ""})
    assert stage.passed({"issue": STATES, "context": ""}) == {
        "question": "Please fix this: method = builtin_str(method) problem."
    }
    with pytest.raises(ParseFailure) as failure:
        stage.passed({"issue": "\n\n", "context": ""})
    assert failure.value.reason == "no_request_in_issue"


def test_a_request_naming_its_prompt_where_the_context_does_not_is_not_offered():
    # real case (psf/requests-3362): "an application/json document" over a context of code
    issue = (
        "Uncertain about iter_content(decode_unicode=True)\n"
        "When requesting an application/json document, iter_content returns bytes."
    )
    offered = ChosenRequestStage.offered({"issue": issue, "context": "File: requests/models.py"})
    assert offered == ["Please fix this: Uncertain about iter_content(decode_unicode=True)."]


def test_the_code_source_chooses_requests_with_extractive_answers_and_lets_capable_models_write():
    from lettuce_build.sources.base import StageSettings
    from lettuce_build.sources.code import CodeSource

    chosen = CodeSource().pipeline(StageSettings(answers="extractive")).inject[0]
    free = CodeSource().pipeline(StageSettings(answers="free")).inject[0]
    assert type(chosen) is ChosenRequestStage and type(free) is RequestStage
