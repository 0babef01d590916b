"""Translating a sample: its answer with each span tagged, then its question and context.

The answer goes first (the shorter request, and the one most often refused): its spans come back
in tags, and their new offsets are read from the translated text (core/span_markup.py). A
translation is kept only when every tag and code placeholder came back once, well formed, and
the words around the spans are a translation into the asked language: not a copy of the source
(``not_translated``, whole or a sentence of it), not another language (``wrong_language``), and
each span still holds its numbers and its sentence (stages/translation_checks.py). Anything else
is a failure row with its reason, never a sample whose spans moved.

Work items carry ``language`` (the target's code), ``source_language``, and the sample's
``answer``, ``labels`` (its spans, `SPAN_FEATURES`), ``question`` and ``context``. With
``--verify`` the judges read the translated spans against the translated context as they read
injected ones (`SpanJudgeStage`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from datasets import List, Value
from pydantic import BaseModel

from lettuce_build.core.errors import MarkupError
from lettuce_build.core.languages import name_of
from lettuce_build.core.schema import SPAN_FEATURES
from lettuce_build.core.span_markup import Marked, mark, unmark, unmarked_words
from lettuce_build.engine.stage import ParseFailure, Sampling, Stage
from lettuce_build.llm.protocol import ChatRequest
from lettuce_build.stages.judge import SpanJudgeStage
from lettuce_build.stages.translation_checks import NOT_TRANSLATED, checked_language, checked_places

#: what a text of n characters may take to translate, in tokens: generous for the scripts that
#: take a token a character (Chinese, Japanese), bounded by the stage's ``max_tokens``
_TOKENS_PER_CHAR, _TOKENS_OVER = 0.6, 64


class Translation(BaseModel):
    text: str


class TranslatedContext(BaseModel):
    question: str
    context: str


def _budget(stage: Stage, text: str) -> int:
    return min(stage.sampling.max_tokens, round(len(text) * _TOKENS_PER_CHAR) + _TOKENS_OVER)


class TranslateAnswerStage(Stage):
    """The answer translated with its spans tagged; outputs the text and its spans, each at its new
    offsets with its type."""

    name = "translate_answer"
    prompt = "translate_answer"
    response_model = Translation
    requires = ("answer", "labels", "language", "source_language")
    outputs: ClassVar[dict[str, Any]] = {
        "translated_answer": Value("string"),
        "translated_labels": List(SPAN_FEATURES),
    }
    #: a little randomness: a retry of a translation that lost a tag must be able to differ
    sampling = Sampling(temperature=0.3, max_tokens=1024)

    @staticmethod
    def marked(item: dict[str, Any]) -> Marked:
        return mark(item["answer"], [(span["start"], span["end"]) for span in item["labels"]])

    def render(self, item: dict[str, Any]) -> ChatRequest:
        marked = self.marked(item)
        system, user = self.template.render(
            source=name_of(item["source_language"]), target=name_of(item["language"]), text=marked.text
        )
        request = self.request(system, user)
        return request.with_params(max_tokens=_budget(self, marked.text))

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        marked = self.marked(item)
        text = response.text.strip()
        try:
            answer, spans = unmark(text, marked)
        except MarkupError as err:
            raise ParseFailure(err.reason, err.detail) from None
        checked_language(
            unmarked_words(marked.text), unmarked_words(text), item["source_language"], item["language"]
        )
        checked_places(item, answer, spans)
        labels = [
            {**label, "start": start, "end": end, "text": answer[start:end]}
            for label, (start, end) in zip(item["labels"], spans, strict=True)
        ]
        return {"translated_answer": answer, "translated_labels": sorted(labels, key=lambda s: s["start"])}


class TranslateContextStage(Stage):
    """The question and the context translated, their code kept verbatim."""

    name = "translate_context"
    prompt = "translate_context"
    response_model = TranslatedContext
    requires = ("question", "context", "language", "source_language")
    outputs: ClassVar[dict[str, Any]] = {
        "translated_question": Value("string"),
        "translated_context": Value("string"),
    }
    sampling = Sampling(temperature=0.3, max_tokens=4096)

    def check(self) -> SpanJudgeStage:
        """With the whole sample translated, a judge reads each translated span against the
        translated context, as it reads an injected one."""
        return SpanJudgeStage(
            answer_field="translated_answer",
            labels_field="translated_labels",
            context_field="translated_context",
            question_field="translated_question",
        )

    def render(self, item: dict[str, Any]) -> ChatRequest:
        question, context = mark(item["question"], []), mark(item["context"], [])
        system, user = self.template.render(
            source=name_of(item["source_language"]),
            target=name_of(item["language"]),
            question=question.text,
            context=context.text,
        )
        request = self.request(system, user)
        return request.with_params(max_tokens=_budget(self, question.text + context.text))

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        translated: dict[str, str] = {}
        marked = {field: mark(item[field], []) for field in ("question", "context")}
        for field, text in (("question", response.question), ("context", response.context)):
            try:
                translated[field], _ = unmark(text.strip(), marked[field])
            except MarkupError as err:
                raise ParseFailure(err.reason, f"{field}: {err.detail}") from None
        if bool(item["question"].strip()) != bool(translated["question"].strip()):
            raise ParseFailure(NOT_TRANSLATED, "the question was dropped, or one was made up")
        source = " ".join(unmarked_words(marked[f].text) for f in ("question", "context"))
        words = " ".join(unmarked_words(mark(translated[f], []).text) for f in ("question", "context"))
        checked_language(source, words, item["source_language"], item["language"])
        return {
            "translated_question": translated["question"],
            "translated_context": translated["context"],
        }
