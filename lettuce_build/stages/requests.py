"""A developer's request made from a GitHub issue: what a developer would type to a coding agent.

A SWE-bench issue is a multi-kilobyte report (tracebacks, reproduction steps, versions); a user
of a coding agent asks in one to three sentences. The code source's question is that request,
so a detector learns from the prompts it will see; the raw issue stays in the sample's metadata.
"""

from __future__ import annotations

from typing import Any

import regex
from datasets import Value

from lettuce_build.core import gates
from lettuce_build.engine.stage import ParseFailure, Sampling
from lettuce_build.llm.protocol import ChatRequest
from lettuce_build.stages.prompted import PromptedStage
from lettuce_build.stages.questions import QUOTES

#: the issue's first characters the prompt shows (the ask is at the top of an issue)
MAX_ISSUE_CHARS = 6_000
MIN_REQUEST_CHARS = 20
#: what the code source reserves for the question when it fits a context to the model
MAX_REQUEST_CHARS = 400
MAX_REQUEST_SENTENCES = 3

_PREFIX = regex.compile(r"^\s*(?:\*\*)?(?:developer\s+)?request\s*:\s*(?:\*\*)?\s*", regex.IGNORECASE)
_SENTENCE_END = regex.compile(r"[.!?](?=\s|$)")
#: what belongs to the issue, never to a request: a traceback, a fence, a prompt of a shell
_REPORT = regex.compile(
    r"Traceback \(most recent call last\)|```|^\s*(?:>>>|\$) |^\s*File \"", regex.MULTILINE
)

#: how a reply opens, never a request (seen live from a small model: "You're right, ...",
#: "Your request is already well-explained", "No, I'm sorry ...", "The following code is ...")
_REPLY = regex.compile(
    r"^(?:you(?:'re| are) right|your (?:request|question|issue)|(?:no|yes|sure|certainly|of course)\b"
    r"|i'?m (?:sorry|here|glad|happy)|i am (?:sorry|here|glad|happy)|thanks?\b|thank you|great\b"
    r"|the following|here(?:'s| is| are)\b|the (?:solution|answer) is)"
    r"|you (?:can|could|should|would|must|need|may|might)\b|\bas an ai\b|\bi'?m here to help\b",
    regex.IGNORECASE,
)
#: what makes a sentence an ask: a question, a word of asking, or an imperative verb first
_ASK = regex.compile(
    r"\?|\b(?:please|can you|could you|would you|will you|i need|i want|i'd like|i would like"
    r"|we need|we want|should|shouldn't|must|(?:it|this|that) needs? to|make sure)\b",
    regex.IGNORECASE,
)
_IMPERATIVE = regex.compile(
    r"^(?:add|allow|avoid|catch|change|convert|correct|decode|detect|document|drop|encode|ensure"
    r"|expose|extend|fix|forward|handle|ignore|implement|improve|include|keep|let|make|move|pass"
    r"|prevent|raise|refactor|reject|remove|rename|replace|report|respect|return|show|skip|sort"
    r"|stop|support|treat|update|use|validate|warn|wrap)\b",
    regex.IGNORECASE,
)


def request_shape_problem(request: str) -> tuple[str, str] | None:
    """(reason, detail) when ``request`` reads as a reply or a statement, not as an ask."""
    if match := _REPLY.search(request):
        return "request_is_reply", f"{request[:80]!r} answers like an assistant ({match.group()!r})"
    if not _ASK.search(request) and not _IMPERATIVE.match(request):
        return "not_a_request", f"{request[:80]!r} asks nothing: no question, imperative or ask"
    return None


def clean_request(text: str) -> str:
    """The response without a "Request:" prefix or surrounding quotes, its lines joined."""
    text = " ".join(line.strip() for line in text.strip().splitlines() if line.strip())
    return _PREFIX.sub("", text).strip().strip(QUOTES).strip()


def request_problem(request: str, issue: str) -> tuple[str, str] | None:
    """(reason, detail) when ``request`` is not a short request about ``issue``, else None."""
    if len(request) < MIN_REQUEST_CHARS:
        return "request_too_short", f"{request!r} is under {MIN_REQUEST_CHARS} characters"
    if len(request) > MAX_REQUEST_CHARS:
        return "request_too_long", f"{len(request)} characters (> {MAX_REQUEST_CHARS})"
    if match := _REPORT.search(request):
        copied = match.group().strip()
        return "request_holds_report", f"{request[:80]!r} copies the issue's report ({copied!r})"
    if len(_SENTENCE_END.findall(request)) > MAX_REQUEST_SENTENCES:
        return "request_too_many_sentences", f"{request[:80]!r} is over {MAX_REQUEST_SENTENCES} sentences"
    if problem := request_shape_problem(request):
        return problem
    if problem := gates.question_problem(request, issue):
        return problem
    return None


class RequestStage(PromptedStage):
    """One short developer request per issue (the item's ``issue``), written as the ``question``."""

    name = "request"
    prompt = "developer_request"

    requires = ("issue",)
    outputs = {"question": Value("string")}
    max_attempts = 3
    sampling = Sampling(temperature=0.3, max_tokens=160)

    def salvage(self, text: str) -> str | None:
        """A cut response keeps its complete sentences."""
        ends = list(_SENTENCE_END.finditer(text))
        return text[: ends[-1].end()] if ends else None

    def render(self, item: dict[str, Any]) -> ChatRequest:
        system, user = self.template.render(issue=item["issue"][:MAX_ISSUE_CHARS])
        return self.request(system, user)

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        request = clean_request(response)
        if problem := request_problem(request, item["issue"]):
            raise ParseFailure(*problem)
        if run := gates.echo(request, self.template.instructions):
            raise ParseFailure("request_echoes_prompt", f"the request repeats the instructions: {run!r}")
        return {"question": request}
