"""A developer's request from an issue: short, about the issue, never the issue's report."""

import pytest

from lettuce_build.engine.stage import ParseFailure
from lettuce_build.stages.requests import RequestStage, clean_request, request_problem

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
