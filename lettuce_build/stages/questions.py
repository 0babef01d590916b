"""Derive one realistic user question that a document chunk can answer."""

from __future__ import annotations

from typing import Any

import regex
from datasets import Value

from lettuce_build.core import gates
from lettuce_build.core.seeding import fraction, item_parts
from lettuce_build.engine.runner import call_stage
from lettuce_build.engine.stage import ParseFailure, Sampling
from lettuce_build.llm.protocol import Backend, ChatRequest
from lettuce_build.stages.answers import evidence_sentences
from lettuce_build.stages.prompted import PromptedStage

QUESTION_TYPES: dict[str, str] = {
    "Verification": "asks whether something is true",
    "Disjunctive": "asks which of two or more alternatives holds",
    "Concept Completion": "asks who, what, when or where",
    "Example": "asks for an example of something",
    "Feature Specification": "asks for properties or features of something",
    "Quantification": "asks how much or how many",
    "Definition": "asks what something means",
    "Comparison": "asks how two things are alike or differ",
    "Interpretation": "asks what something implies or means in context",
    "Causal Antecedent": "asks what caused something",
    "Causal Consequence": "asks what follows from something",
    "Goal Orientation": "asks for the purpose of something",
    "Instrumental/Procedural": "asks how to do something",
    "Enablement": "asks what makes something possible",
    "Expectation": "asks why something expected did or did not happen",
    "Judgmental": "asks for an assessment grounded in the text",
    "Assertion": "states a gap in knowledge and asks to fill it",
    "Request/Directive": "asks the reader to do or provide something",
}

MIN_QUESTION_CHARS = 8
MAX_QUESTION_CHARS = 300
DEFAULT_CHUNK_CHARS = 6000

_PREFIX = regex.compile(r"^\s*(?:\*\*)?(?:question|q)\s*[:.)-]\s*(?:\*\*)?\s*", regex.IGNORECASE)
_QUOTES = "\"'“”‘’`*"
_DECORATION = regex.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*)+")
_RESIDUE = regex.compile(r"\{\{|\}\}|\{%|%\}|<\|")
_MARKDOWN = regex.compile(r"\]\(|!\[|^#+\s|\[[^\]]*\]\[|</?[A-Za-z][^>]*>|\*\w[^*]*\*")
_SENTENCE_BREAK = regex.compile(r"[.!?]\s+\S")


def question_problem(question: str) -> tuple[str, str] | None:
    """(reason, detail) when ``question`` does not read as one question, else None."""
    if len(question) < MIN_QUESTION_CHARS:
        return "question_too_short", f"{question!r} is under {MIN_QUESTION_CHARS} characters"
    if len(question) > MAX_QUESTION_CHARS:
        return "question_too_long", f"{len(question)} characters (> {MAX_QUESTION_CHARS})"
    if _RESIDUE.search(question):
        return "template_residue", f"{question[:80]!r} holds template syntax"
    if _MARKDOWN.search(question):
        return "markdown_in_question", f"{question[:80]!r} holds markdown or HTML (links, tags, emphasis)"
    if not question.endswith("?"):
        return "not_a_question", f"{question[:80]!r} does not end with a question mark"
    if _SENTENCE_BREAK.search(question[:-1]):
        return "several_sentences", f"{question[:80]!r} is more than one sentence"
    return None


def _clean_line(line: str) -> str:
    line = _DECORATION.sub("", line)
    line = _PREFIX.sub("", line).strip().strip(_QUOTES).strip()
    return _PREFIX.sub("", line).strip()


def clean_question(text: str) -> str:
    """The first line of the response that reads as a question, without "Question:"/"Q:" prefixes,
    heading or list markers, or surrounding quotes; else its first non-empty line, so cleaned.

    Small models wrap the question in chatter ("Sure! Here is one:\n\nQuestion: ...?"): the
    question itself is kept, never the chatter.
    """
    lines = [cleaned for line in text.splitlines() if (cleaned := _clean_line(line))]
    return next((line for line in lines if question_problem(line) is None), lines[0] if lines else "")


class QuestionStage(PromptedStage):
    """One question of a given type that a chunk answers.

    ``focused``: the question is tied to one prose sentence of the chunk (drawn with the build's
    seed), which the prompt shows as the sentence that answers it. A small model's questions
    about a whole chunk often miss it (measured: see the README); asked about one sentence it
    writes one that the chunk answers, and an extractive answer can choose that sentence.
    """

    name = "question"
    prompt = "question"

    requires = ("chunk", "question_type")
    # a small model writes a usable question about half the time; attempts are 80 tokens each
    max_attempts = 4
    outputs = {"question": Value("string")}
    sampling = Sampling(temperature=0.7, max_tokens=80)

    def __init__(
        self, chunk_chars: int = DEFAULT_CHUNK_CHARS, *, focused: bool = False, seed: int = 0
    ) -> None:
        self.chunk_chars = chunk_chars
        self.focused = focused
        self.prompt = "question_focused" if focused else "question"
        #: the build's seed: which sentence a focused question is about is drawn with it
        self.seed = seed

    def focus(self, item: dict[str, Any]) -> str:
        """The sentence a focused question is about (the chunk's opening, when it has no prose
        sentence: its answer will fail for want of sentences anyway)."""
        sentences = evidence_sentences(item["chunk"][: self.chunk_chars])
        if not sentences:
            return item["chunk"][:MAX_QUESTION_CHARS]
        return sentences[int(fraction(*item_parts(item["key"], self.seed), "focus") * len(sentences))]

    def salvage(self, text: str) -> str | None:
        """Only the first line is used: a cut response keeps its complete lines."""
        return text[: text.rfind("\n")] if "\n" in text else None

    def render(self, item: dict[str, Any]) -> ChatRequest:
        question_type = item["question_type"]
        system, user = self.template.render(
            question_type=question_type,
            question_type_definition=QUESTION_TYPES[question_type],
            chunk=item["chunk"][: self.chunk_chars],
            focus=self.focus(item) if self.focused else None,
        )
        return self.request(system, user)

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        question = clean_question(response)
        if problem := question_problem(question) or gates.question_problem(question, item["chunk"]):
            raise ParseFailure(*problem)
        if run := gates.echo(question, self.template.instructions):
            raise ParseFailure("question_echoes_prompt", f"the question repeats the instructions: {run!r}")
        return {"question": question}


def generate_question(chunk: str, question_type: str, backend: Backend, *, seed: int = 0) -> str:
    """One question for one chunk (uncached)."""
    item = {"key": chunk[:64], "chunk": chunk, "question_type": question_type}
    return call_stage(QuestionStage(), item, backend, seed=seed)["question"]
