"""Questions a document's headings ask: "## Installation" over "You can install all of these
with `pip install starlette[full]`." asks "How do you install starlette?", and the first
sentence under it that speaks of installing answers. A reader looks under the heading for the
answer, so the question points there whatever other sentence shares its words.

Measured on real READMEs: half their chunks had no sentence a question could be turned from,
though most sat under a heading such as these. Only the headings below ask anything; each
names the word its answer must hold (an "Installation" section opening with "Python 3.9+ is
required." does not answer how to install), and all need the document's project name.
"""

from __future__ import annotations

from collections import Counter

import regex

from lettuce_build.rules.question_grammar import Shaped, plain


class _Heading:
    """A heading's words, the question it asks and the word its answer must hold."""

    def __init__(self, heading: str, question: str, question_type: str, answer_holds: str) -> None:
        self.heading = regex.compile(rf"(?:{heading})", regex.I)
        self.question = question
        self.question_type = question_type
        #: a pattern that may hold "{name}", the project's name
        self.answer_holds = answer_holds


_HEADINGS = (
    _Heading(
        r"install(?:ation|ing)?|getting started|quick ?start", "How do you install {name}?",
        "Instrumental/Procedural", r"\b(?:pip|conda|pipx|uv|poetry) (?:install|add)\b",
    ),
    _Heading(
        r"requirements?|dependencies|prerequisites", "What does {name} require?",
        "Feature Specification", r"\b(?:requir|depend|needs?\b)",
    ),
    _Heading(
        r"(?:main |key )?features|highlights", "What features does {name} offer?",
        "Feature Specification", r"\b{name}\b.* (?:supports|offers|provides|includes|allows|lets)\b",
    ),
    _Heading(
        r"licen[cs](?:e|ing)", "Under what license is {name} released?", "Concept Completion",
        r"\b(?:MIT|BSD|Apache|L?GPL|MPL|ISC|Unlicense|public domain)\b",
    ),
    _Heading(
        r"contribut(?:e|ing|ion|ions|ors)|how to contribute", "How can you contribute to {name}?",
        "Instrumental/Procedural", r"\bto contribute|contributions are welcome|pull requests?|open an issue",
    ),
    _Heading(
        r"(?:basic )?usage|how to use|using", "How do you use {name}?",
        "Instrumental/Procedural", r"\b(?:use|using|run|call|import)\b",
    ),
    _Heading(r"why|motivation|rationale", "Why would you use {name}?", "Goal Orientation", r"\w"),
    _Heading(
        r"configuration|configuring|settings", "How do you configure {name}?",
        "Instrumental/Procedural", r"config|setting|option",
    ),
    _Heading(
        r"(?:running )?(?:the )?tests?|testing", "How do you run the tests of {name}?",
        "Instrumental/Procedural", r"\btests?\b",
    ),
    _Heading(
        r"security|reporting (?:a )?(?:security )?(?:issue|vulnerabilit(?:y|ies))s?",
        "How do you report a security issue in {name}?", "Instrumental/Procedural", r"report|vulnerab",
    ),
    _Heading(
        r"support|getting help|help|community|questions", "Where can you get help with {name}?",
        "Instrumental/Procedural", r"\b(?:ask|help|discuss|chat|forum|questions?)\b",
    ),
    _Heading(r"overview|introduction|about", "What is {name}?", "Definition", r"^\W*{name}\W* (?:is|are) "),
)  # fmt: skip

#: a heading line: markdown's "## Installation", or a line underlined (setext, reStructuredText)
_ATX = regex.compile(r"^ {0,3}#{1,6}[ \t]+(?P<text>.+?)[ \t#]*$")
_UNDERLINE = regex.compile(r"^([=\-~^*+#])\1{2,}\s*$")


def headed_sections(chunk: str) -> list[tuple[str, str]]:
    """(heading, the text under it up to the next heading) for each heading of ``chunk``."""
    lines = chunk.split("\n")
    heads: list[tuple[int, str]] = []
    for index, line in enumerate(lines):
        if match := _ATX.match(line):
            heads.append((index, match["text"]))
        elif index + 1 < len(lines) and _UNDERLINE.match(lines[index + 1]) and line.strip():
            if not _UNDERLINE.match(line):
                heads.append((index, line.strip()))
    bounds = [*(at for at, _ in heads), len(lines)]
    return [(text, "\n".join(lines[at + 1 : bounds[n + 1]])) for n, (at, text) in enumerate(heads)]


def heading_questions(chunk: str, sentences: tuple[str, ...], name: str | None) -> dict[str, Shaped]:
    """The question each known heading of ``chunk`` asks, keyed by the sentence answering it:
    the first of ``sentences`` (the chunk's answering ones) under it that holds its word."""
    if not name:
        return {}
    asked: dict[str, Shaped] = {}
    for heading, section in headed_sections(chunk):
        words = regex.sub(rf"(?i)\b{regex.escape(name)}\b|[^\p{{L}}\s]", " ", heading)
        topic = " ".join(words.split())
        rule = next((h for h in _HEADINGS if h.heading.fullmatch(topic)), None)
        if rule is None:
            continue
        holds = regex.compile(rule.answer_holds.replace("{name}", regex.escape(name)), regex.I)
        under = (s for s in sentences if s in section and holds.search(plain(s)))
        if (answer := next(under, None)) and answer not in asked:
            asked[answer] = Shaped(rule.question.format(name=_spelled(name, chunk)), rule.question_type)
    return asked


def _spelled(name: str, chunk: str) -> str:
    """``name`` as the chunk spells it, capitalised where it ever is ("alembic.rst" is about
    "Alembic"; "httpx" in its URLs and code, "HTTPX" in its prose)."""
    found = Counter(regex.findall(rf"(?i)(?<![\w.-]){regex.escape(name)}(?![\w-])", chunk))
    capitalised = [spelling for spelling, _ in found.most_common() if not spelling.islower()]
    return capitalised[0] if capitalised else name
