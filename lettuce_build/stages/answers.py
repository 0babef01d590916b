"""Generate an answer that is correct by construction: grounded strictly in the evidence."""

from __future__ import annotations

import functools
from typing import Any, Literal

import regex
from datasets import Value
from pydantic import BaseModel, Field

from lettuce_build.core.gates import DEFAULT_GATES, GateConfig, answer_problem, content_words, markup_share
from lettuce_build.engine.runner import call_stage
from lettuce_build.engine.stage import CutText, ParseFailure, Sampling
from lettuce_build.llm.protocol import Backend, ChatRequest
from lettuce_build.stages.prompted import PromptedStage

MIN_ANSWER_CHARS = 40
_SENTENCE_END = regex.compile(r"[.!?](?=\s)|[.!?]$")
DEFAULT_EVIDENCE_CHARS = 6000


class AnswerStage(PromptedStage):
    """A grounded answer to the item's question from its evidence column (default ``context``)."""

    name = "answer"

    outputs = {"answer": Value("string"), "answer_cut": Value("bool")}
    #: the penalty keeps small models out of loops (measured: see the README's "Labels that are true")
    sampling = Sampling(temperature=0.7, max_tokens=400, repetition_penalty=1.15)

    def __init__(
        self,
        evidence_chars: int = DEFAULT_EVIDENCE_CHARS,
        evidence_field: str = "context",
        prompt: str = "answer",
        prose: bool = True,
        gates: GateConfig = DEFAULT_GATES,
    ) -> None:
        self.prompt = prompt  # "answer", or a source's own style ("answer_tool_output")
        self.evidence_field = evidence_field  # what the answer is grounded in (tool_output: the gold lines)
        self.requires = ("question", evidence_field)
        self.evidence_chars = evidence_chars
        #: the answer should read as prose (markup may not dominate it): not for tool output
        self.prose = prose
        self.gates = gates

    def render(self, item: dict[str, Any]) -> ChatRequest:
        system, user = self.template.render(
            evidence=item[self.evidence_field][: self.evidence_chars], question=item["question"]
        )
        return self.request(system, user)

    def salvage(self, text: str) -> str | None:
        """An answer cut at max_tokens keeps its complete sentences (and no half code block)."""
        ends = [m.end() for m in _SENTENCE_END.finditer(text)]
        kept = text[: ends[-1]] if ends else ""
        if kept.count("```") % 2:
            kept = kept[: kept.rfind("```")]
        return kept.rstrip() or None

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        answer = response.strip()
        if len(answer) < MIN_ANSWER_CHARS:
            raise ParseFailure("answer_too_short", f"{len(answer)} characters (< {MIN_ANSWER_CHARS})")
        evidence = item[self.evidence_field][: self.evidence_chars]
        if problem := answer_problem(
            answer, evidence, instructions=self.template.instructions, prose=self.prose, config=self.gates
        ):
            raise ParseFailure(*problem)
        return {"answer": answer, "answer_cut": isinstance(response, CutText)}


#: extractive answers choose among at most this many sentences of the evidence
MAX_SENTENCES = 40
MIN_SENTENCE_CHARS = 30
MAX_SENTENCE_CHARS = 300
_FENCE = regex.compile(r"^\s*(```|~~~)")
_LIST_MARKER = regex.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
#: an HTML comment is not read on the page (READMEs keep licence headers in them)
_COMMENT = regex.compile(r"<!--.*?(?:-->|$)", regex.DOTALL)
_SPLIT = regex.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[])")


def _paragraphs(evidence: str) -> list[str]:
    """The evidence's prose paragraphs with hard-wrapped lines joined; a list item is a paragraph
    of its own; code fences, headings, tables, quotes, HTML and HTML comments are left out."""
    paragraphs: list[str] = []
    current: list[str] = []
    in_fence = False

    def flush() -> None:
        if current:
            paragraphs.append(" ".join(current))
            current.clear()

    for line in _COMMENT.sub("\n", evidence).splitlines():
        stripped = line.strip()
        if _FENCE.match(line):
            flush()
            in_fence = not in_fence
        elif in_fence or not stripped or stripped.startswith(("#", "|", ">", "<")):
            flush()
        elif _LIST_MARKER.match(line):
            flush()
            current.append(_LIST_MARKER.sub("", line).strip())
        else:
            current.append(stripped)
    flush()
    return paragraphs


@functools.lru_cache(maxsize=256)
def evidence_sentences(evidence: str) -> tuple[str, ...]:
    """The evidence's prose sentences an extractive answer may choose, in order: no URLs or
    markup, no questions, of a readable length. Cached: an item's schema, prompt and parse all
    read them."""
    found: list[str] = []
    for paragraph in _paragraphs(evidence):
        for sentence in _SPLIT.split(paragraph):
            sentence = sentence.strip()
            if (
                MIN_SENTENCE_CHARS <= len(sentence) <= MAX_SENTENCE_CHARS
                and not sentence.endswith(("?", ":"))  # ":" introduces what follows, not a claim
                and markup_share(sentence) == 0.0
                and len(content_words(sentence)) >= 3
                and sentence not in found
            ):
                found.append(sentence)
    return tuple(found[:MAX_SENTENCES])


class Extracted(BaseModel):
    sentences: list[str] = Field(min_length=1, max_length=3)


AnswerMode = Literal["free", "extractive"]


class ExtractiveAnswerStage(AnswerStage):
    """An answer made of one to three sentences of the evidence, chosen by the model through a
    JSON-schema enum: true by construction, which a small model's free answers are not (the
    embedded model's were unsupported, looping or questions back; see the README). A detector
    trained only on copied sentences learns less than one trained on free answers: builds with
    capable models keep those (``--answers free``)."""

    response_model = Extracted

    def __init__(self, evidence_chars: int = DEFAULT_EVIDENCE_CHARS, evidence_field: str = "context") -> None:
        super().__init__(evidence_chars, evidence_field, prompt="answer_extractive")

    def _sentences(self, item: dict[str, Any]) -> tuple[str, ...]:
        return evidence_sentences(item[self.evidence_field][: self.evidence_chars])

    def item_schema(self, item: dict[str, Any]) -> dict[str, Any] | None:
        sentences = self._sentences(item)
        if not sentences:
            return None
        choice = {"type": "string", "enum": list(sentences)}
        listed = {"type": "array", "items": choice, "minItems": 1, "maxItems": 3}
        return {"type": "object", "properties": {"sentences": listed}, "required": ["sentences"]}

    def render(self, item: dict[str, Any]) -> ChatRequest:
        system, user = self.template.render(question=item["question"], sentences=self._sentences(item))
        return self.request(system, user)

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        offered = self._sentences(item)
        if not offered:
            raise ParseFailure(
                "no_sentences", "the evidence has no prose sentence to answer with", retry=False
            )
        chosen = set(response.sentences)
        picked = [s for s in offered if s in chosen]  # evidence order, each once
        if not picked:
            raise ParseFailure(
                "not_from_evidence", f"none of {response.sentences!r} is a sentence of the evidence"
            )
        # a list item has no full stop of its own: joined bare, two items would read as one sentence
        return super().parse(item, " ".join(s if s[-1] in ".!?" else f"{s}." for s in picked))


def answer_stage(mode: AnswerMode) -> AnswerStage:
    """The answer stage of a document source in this mode."""
    return ExtractiveAnswerStage() if mode == "extractive" else AnswerStage()


def generate_grounded_answer(question: str, evidence: str, backend: Backend, *, seed: int = 0) -> str:
    """One grounded answer (uncached)."""
    item = {"key": question[:64], "question": question, "context": evidence}
    return call_stage(AnswerStage(), item, backend, seed=seed)["answer"]
