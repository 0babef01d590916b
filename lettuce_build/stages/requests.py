"""A developer's request made from a GitHub issue: what a developer would type to a coding agent.

A SWE-bench issue is a multi-kilobyte report (tracebacks, reproduction steps, versions); a user
of a coding agent asks in one to three sentences. The code source's question is that request,
so a detector learns from the prompts it will see; the raw issue stays in the sample's metadata.
"""

from __future__ import annotations

import functools
from typing import Any, Literal

import regex
from datasets import Value
from pydantic import BaseModel

from lettuce_build.core import gates
from lettuce_build.core.sentences import complete_prefix, is_complete, sentence_count, split_sentences
from lettuce_build.engine.stage import ParseFailure, Sampling, Stage
from lettuce_build.llm.protocol import ChatRequest
from lettuce_build.stages.questions import QUOTES

#: the issue's first characters the prompt shows (the ask is at the top of an issue)
MAX_ISSUE_CHARS = 6_000
MIN_REQUEST_CHARS = 20
#: what the code source reserves for the question when it fits a context to the model
MAX_REQUEST_CHARS = 400
MAX_REQUEST_SENTENCES = 3

_PREFIX = regex.compile(r"^\s*(?:\*\*)?(?:developer\s+)?request\s*:\s*(?:\*\*)?\s*", regex.IGNORECASE)
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
    if sentence_count(request) > MAX_REQUEST_SENTENCES:
        return "request_too_many_sentences", f"{request[:80]!r} is over {MAX_REQUEST_SENTENCES} sentences"
    if problem := request_shape_problem(request):
        return problem
    if problem := gates.question_problem(request, issue):
        return problem
    return None


class RequestStage(Stage):
    """One short developer request per issue (the item's ``issue``), written as the ``question``."""

    name = "request"
    prompt = "developer_request"

    requires: tuple[str, ...] = ("issue",)
    outputs = {"question": Value("string")}
    max_attempts = 3
    sampling = Sampling(temperature=0.3, max_tokens=160)

    def salvage(self, text: str) -> str | None:
        """A cut response keeps its complete sentences."""
        return complete_prefix(text) or None

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


#: free: the model writes the request; chosen: it chooses one made of the issue's own sentences
RequestMode = Literal["free", "chosen"]
#: a request chosen from the issue takes at most this many of its body's sentences after the title
MAX_BODY_SENTENCES = 2
#: what an issue's prose may not hold to be a request's sentence: a version ("3.5.1"), a URL,
#: an environment ("I'm using python ...")
_NOT_ASKED = regex.compile(
    r"\b\d+\.\d+\.\d+|https?://|\b(?:i'?m|i am) (?:using|running|on)\b|^thanks?\b|^thank you"
    r"|error message|\w(?:Error|Exception):|<!--|-->|@|is your feature request|expected behaviou?r"
    r"|steps to reproduce|describe the bug",
    regex.IGNORECASE,
)
_FENCE = regex.compile(r"^\s*(```|~~~)")
#: a line of a report rather than prose: indented code, a shell or Python prompt, a traceback's
#: lines, a heading, a table, a quote, HTML
_REPORT_LINE = regex.compile(
    r"^(?:\t| {4})|^\s*(?:>>>|\$ |File \"|Traceback|[#|><]|[A-Za-z_.]*(?:Error|Exception)\b:)"
)
_MARKDOWN = regex.compile(r"\*\*|__|^#+\s*|^\[\w+\]:?\s*")
_COMMENT = regex.compile(r"<!--.*?(?:-->|$)", regex.DOTALL)
#: how a request that only states the issue is asked (a developer pasting an issue's title)
ASK = "Please fix this: "


def _prose(body: str) -> list[str]:
    """The body's prose paragraphs, hard-wrapped lines joined; code fences and report lines out."""
    paragraphs: list[str] = []
    current: list[str] = []
    in_fence = False
    for line in _COMMENT.sub("\n", body).splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        introduces = line.rstrip().endswith(":")  # "Expected behavior:", "**Default server name:**"
        if in_fence or _FENCE.match(line) or not line.strip() or _REPORT_LINE.match(line) or introduces:
            if current:
                paragraphs.append(" ".join(current))
                current = []
            continue
        current.append(_MARKDOWN.sub("", line.strip()))
    if current:
        paragraphs.append(" ".join(current))
    return paragraphs


def _sentence(text: str) -> str:
    text = " ".join(_MARKDOWN.sub("", text).split()).strip()
    return text if text[-1:] in ".!?" else f"{text}."


@functools.lru_cache(maxsize=256)
def issue_requests(issue: str) -> tuple[str, ...]:
    """Requests made of the issue's own words, shortest first: its title, then the title with
    its body's first plain sentences (one, then two). A request that asks nothing (a title that
    states a problem) is asked with `ASK`. Each passes `request_problem`: it is true of the issue
    by construction, and shaped as a request."""
    lines = issue.strip().splitlines()
    if not lines or not lines[0].strip():
        return ()
    title = _sentence(lines[0])
    body = [
        sentence
        for paragraph in _prose("\n".join(lines[1:]))
        for sentence in split_sentences(paragraph)
        if MIN_REQUEST_CHARS <= len(sentence) <= MAX_REQUEST_CHARS // 2
        and is_complete(sentence)  # not cut where code followed ("make sure that")
        and regex.match(r"[\p{Lu}`\"']", sentence.strip())  # not the rest of a cut one ("and it stops.")
        and not _NOT_ASKED.search(sentence.strip())
        and not _REPORT.search(sentence)
    ][:MAX_BODY_SENTENCES]
    requests: list[str] = []
    for taken in range(len(body) + 1):
        request = " ".join([title, *(_sentence(s) for s in body[:taken])])
        if request_shape_problem(request) is not None:
            request = ASK + request
        if request not in requests and request_problem(request, issue) is None:
            requests.append(request)
    return tuple(requests)


class RequestChoice(BaseModel):
    request: str


class ChosenRequestStage(RequestStage):
    """The developer request chosen among `issue_requests` through a JSON-schema enum: true of
    the issue by construction, which a small model's free requests were not (on real flask and
    requests issues the embedded model's were too long, replies or reports: no request passed
    the gates). A request that names its prompt where the sample's context does not ("the
    document" of an issue, over code) is not offered: the sample's reader sees the context, not
    the issue. An issue with one such request takes it without a model call."""

    prompt = "developer_request_choice"
    response_model = RequestChoice
    requires = ("issue", "context")
    sampling = Sampling(temperature=0.3, max_tokens=200)

    @staticmethod
    def offered(item: dict[str, Any]) -> list[str]:
        return [r for r in issue_requests(item["issue"]) if not gates.prompt_words(r, item["context"])]

    def applies(self, item: dict[str, Any]) -> bool:
        return len(self.offered(item)) > 1

    def passed(self, item: dict[str, Any]) -> dict[str, Any]:
        offered = self.offered(item)
        if not offered:
            raise ParseFailure(
                "no_request_in_issue", "the issue has no title or plain sentence to ask with", retry=False
            )
        return {"question": offered[0]}

    def item_schema(self, item: dict[str, Any]) -> dict[str, Any] | None:
        choice = {"type": "string", "enum": self.offered(item)}
        return {"type": "object", "properties": {"request": choice}, "required": ["request"]}

    def render(self, item: dict[str, Any]) -> ChatRequest:
        system, user = self.template.render(requests=self.offered(item))
        return self.request(system, user)

    def salvage(self, text: str) -> str | None:
        return None

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        if response.request not in self.offered(item):
            raise ParseFailure("request_not_offered", f"{response.request[:80]!r} is not one of the offered")
        return {"question": response.request}


def request_stage(mode: RequestMode) -> RequestStage:
    """The code source's request stage in this mode."""
    return ChosenRequestStage() if mode == "chosen" else RequestStage()
