"""`--verify`: a judge model checks what the build made, inside the stages' success tests.

- `AnswerJudgeStage` checks a clean answer: which of its sentences the context does not support.
  An answer with any fails the answer stage (``judge_unsupported``) and is retried.
- `SpanJudgeStage` checks an injected answer with its spans marked and the intended type not
  shown: per span a verdict (contradicted, unsupported, supported) and the judge's own category.
  A span judged supported fails the injection (``judge_supported``); balancing tops up for it.

Both are `CheckStage`s: the runner asks them about each item the checked stage finished (see
engine/runner.py). With two judges both must pass an item, and `judge_report` measures how far
they agree (Cohen's kappa) besides the rates the card and summary show.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, Literal

import regex
from pydantic import BaseModel, Field

from lettuce_build.core.sentences import split_sentences
from lettuce_build.core.taxonomy import INJECTABLE_CATEGORIES, SUPPORTED
from lettuce_build.engine.records import Judgement
from lettuce_build.engine.stage import CheckStage, ParseFailure, Sampling, Stage, item_language
from lettuce_build.llm.protocol import ChatRequest

JUDGE_CONTEXT_CHARS = 6000
#: judges answer with the most likely verdict: sampling would only add noise
JUDGE_SAMPLING = Sampling(temperature=0.0, max_tokens=300)
#: blank lines end a sentence too (code and lists have no full stops)
_BLANK_LINE = regex.compile(r"\n\s*\n")

Verdict = Literal["contradicted", "unsupported", "supported"]
VERDICTS: tuple[str, ...] = ("contradicted", "unsupported", "supported")


def answer_sentences(answer: str, language: str = "en") -> list[str]:
    """The sentences a judge is asked about, in order: a block holding code is asked whole."""
    found: list[str] = []
    for block in _BLANK_LINE.split(answer):
        found += [block.strip()] if "```" in block and block.strip() else split_sentences(block, language)
    return found


class Unsupported(BaseModel):
    unsupported: list[int] = Field(default_factory=list)


class AnswerJudgeStage(CheckStage):
    """Which sentences of a clean answer its evidence does not support (none: grounded)."""

    name = "judge_answer"
    prompt = "judge_answer"
    response_model = Unsupported
    sampling = JUDGE_SAMPLING

    def __init__(self, evidence_field: str = "context") -> None:
        self.evidence_field = evidence_field
        self.requires = ("question", "answer", evidence_field)

    def item_schema(self, item: dict[str, Any]) -> dict[str, Any] | None:
        count = len(answer_sentences(item["answer"], item_language(item)))
        number = {"type": "integer", "enum": list(range(1, count + 1))}
        listed = {"type": "array", "items": number, "maxItems": count}
        return {"type": "object", "properties": {"unsupported": listed}, "required": ["unsupported"]}

    def render(self, item: dict[str, Any]) -> ChatRequest:
        system, user = self.template.render(
            context=item[self.evidence_field][:JUDGE_CONTEXT_CHARS],
            question=item["question"],
            sentences=answer_sentences(item["answer"], item_language(item)),
        )
        return self.request(system, user)

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        sentences = answer_sentences(item["answer"], item_language(item))
        wrong = sorted({n for n in response.unsupported if not 1 <= n <= len(sentences)})
        if wrong:
            raise ParseFailure("judge_out_of_range", f"sentence numbers {wrong} of {len(sentences)}")
        unsupported = [sentences[n - 1] for n in sorted(set(response.unsupported))]
        verdict = {"sentences": len(sentences), "unsupported": unsupported}
        return {"judgement": json.dumps(verdict, ensure_ascii=False)}

    def rejection(self, verdict: dict[str, Any]) -> ParseFailure | None:
        if not verdict["unsupported"]:
            return None
        return ParseFailure("judge_unsupported", " | ".join(verdict["unsupported"])[:300])


class SpanVerdict(BaseModel):
    span: int
    verdict: Verdict
    category: str


class SpanVerdicts(BaseModel):
    spans: list[SpanVerdict]


def marked_answer(answer: str, labels: Sequence[dict[str, Any]]) -> str:
    """The answer with each span written [[n: text]], numbered in answer order."""
    pieces, at = [], 0
    for number, span in enumerate(sorted(labels, key=lambda s: s["start"]), start=1):
        pieces += [answer[at : span["start"]], f"[[{number}: {answer[span['start'] : span['end']]}]]"]
        at = span["end"]
    return "".join([*pieces, answer[at:]])


class SpanJudgeStage(CheckStage):
    """Per injected span: is it really false, and of which category (the intended one is not
    shown). Generator mode's diff spans are judged the same way."""

    name = "judge_spans"
    prompt = "judge_spans"
    response_model = SpanVerdicts
    sampling = JUDGE_SAMPLING

    def __init__(
        self,
        *,
        answer_field: str = "hallucinated_answer",
        labels_field: str = "labels",
        context_field: str = "context",
        question_field: str = "question",
    ) -> None:
        """The columns it reads: an injection's by default; a translation's translated ones."""
        self.answer_field, self.labels_field = answer_field, labels_field
        self.context_field, self.question_field = context_field, question_field
        self.requires = (context_field, question_field, answer_field, labels_field)

    def applies(self, item: dict[str, Any]) -> bool:
        return bool(item.get(self.labels_field))

    def item_schema(self, item: dict[str, Any]) -> dict[str, Any] | None:
        count = len(item[self.labels_field])
        entry = {
            "type": "object",
            "properties": {
                "span": {"type": "integer", "enum": list(range(1, count + 1))},
                "verdict": {"type": "string", "enum": list(VERDICTS)},
                "category": {"type": "string", "enum": [*INJECTABLE_CATEGORIES, SUPPORTED]},
            },
            "required": ["span", "verdict", "category"],
        }
        listed = {"type": "array", "items": entry, "minItems": count, "maxItems": count}
        return {"type": "object", "properties": {"spans": listed}, "required": ["spans"]}

    def render(self, item: dict[str, Any]) -> ChatRequest:
        system, user = self.template.render(
            context=item[self.context_field][:JUDGE_CONTEXT_CHARS],
            question=item[self.question_field],
            marked=marked_answer(item[self.answer_field], item[self.labels_field]),
        )
        return self.request(system, user)

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        spans = sorted(item[self.labels_field], key=lambda s: s["start"])
        given = {v.span: v for v in response.spans}
        missing = [n for n in range(1, len(spans) + 1) if n not in given]
        if missing:
            raise ParseFailure("judge_incomplete", f"no verdict for span(s) {missing} of {len(spans)}")
        verdict = {
            "spans": [
                {
                    "text": span["text"],
                    "verdict": given[number].verdict,
                    "category": given[number].category,
                    "intended": span["category"],
                }
                for number, span in enumerate(spans, start=1)
            ]
        }
        return {"judgement": json.dumps(verdict, ensure_ascii=False)}

    def rejection(self, verdict: dict[str, Any]) -> ParseFailure | None:
        supported = [s["text"] for s in verdict["spans"] if s["verdict"] == "supported"]
        if not supported:
            return None
        return ParseFailure("judge_supported", f"judged supported: {supported}"[:300])


class JudgeReport(BaseModel):
    """What the judges found, as the summary, manifest and card show it. Rates count every
    verdict (retried answers and every judge included)."""

    judges: list[str]
    answers_judged: int = 0
    answers_grounded: int = 0
    injections_judged: int = 0
    injections_confirmed: int = 0
    #: spans judged false whose judged category is the intended one
    spans_false: int = 0
    categories_agreeing: int = 0
    #: with two judges: Cohen's kappa of their verdicts on the same answers and spans (None: one
    #: judge, nothing judged by both, or no variation to agree on)
    kappa_answers: float | None = None
    kappa_spans: float | None = None

    @property
    def groundedness(self) -> float | None:
        return self.answers_grounded / self.answers_judged if self.answers_judged else None

    @property
    def confirmed(self) -> float | None:
        return self.injections_confirmed / self.injections_judged if self.injections_judged else None

    @property
    def category_agreement(self) -> float | None:
        return self.categories_agreeing / self.spans_false if self.spans_false else None

    def lines(self) -> list[str]:
        """The figures as a few readable lines (summary and card)."""

        def rate(value: float | None, part: int, whole: int) -> str:
            return "none judged" if value is None else f"{value:.2f} ({part} of {whole})"

        def kappa(value: float | None) -> str:
            return "n/a" if value is None else f"{value:.2f}"

        lines = [
            f"judged by {', '.join(self.judges)}",
            "clean answers grounded: " + rate(self.groundedness, self.answers_grounded, self.answers_judged),
            "injections confirmed false: "
            + rate(self.confirmed, self.injections_confirmed, self.injections_judged),
            "judged category = intended: "
            + rate(self.category_agreement, self.categories_agreeing, self.spans_false),
        ]
        if len(self.judges) > 1:
            lines.append(
                f"agreement of the judges (Cohen's kappa): answers {kappa(self.kappa_answers)}, "
                f"spans {kappa(self.kappa_spans)}"
            )
        return lines


def cohen_kappa(pairs: Sequence[tuple[Hashable, Hashable]]) -> float | None:
    """Cohen's kappa of two raters' labels on the same items; None when it is undefined (no
    items, or both raters always giving the one same label)."""
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(first[label] * second[label] for label in first) / (n * n)
    if expected == 1.0:
        return None
    return (observed - expected) / (1 - expected)


#: per judged attempt (stage, key, attempt), each judge's labels
LabelsByItem = dict[tuple[str, str, int], dict[str, list[Hashable]]]


def judge_report(judges: Sequence[str], judgements: Iterable[Judgement]) -> JudgeReport:
    """The figures of a build's verdicts (``judges``: the judges' models, in order), read one at
    a time. Agreement needs each item's labels from the first two judges: those labels (not the
    verdicts) are the only thing kept per item, and only when there are two judges."""
    report = JudgeReport(judges=list(judges))
    answers: LabelsByItem = {}
    spans: LabelsByItem = {}
    for j in judgements:
        if "unsupported" in j.verdict:
            report.answers_judged += 1
            report.answers_grounded += j.passed
            if len(judges) > 1:
                answers.setdefault((j.stage, j.key, j.attempt), {})[j.check] = [not j.verdict["unsupported"]]
        if "spans" in j.verdict:
            report.injections_judged += 1
            report.injections_confirmed += j.passed
            false = [s for s in j.verdict["spans"] if s["verdict"] != "supported"]
            report.spans_false += len(false)
            report.categories_agreeing += sum(s["category"] == s["intended"] for s in false)
            if len(judges) > 1:
                labels: list[Hashable] = [s["verdict"] for s in j.verdict["spans"]]
                spans.setdefault((j.stage, j.key, j.attempt), {})[j.check] = labels
    if len(judges) > 1:
        report.kappa_answers = cohen_kappa(_paired(answers))
        report.kappa_spans = cohen_kappa(_paired(spans))
    return report


def _paired(by_item: LabelsByItem) -> list[tuple[Hashable, Hashable]]:
    """The first two judges' labels on what both judged (the same attempt of the same item)."""
    pairs: list[tuple[Hashable, Hashable]] = []
    for verdicts in by_item.values():
        if len(verdicts) >= 2:
            first, second = list(verdicts.values())[:2]
            pairs.extend(zip(first, second, strict=False))
    return pairs


def judge_spans(stage: Stage) -> SpanJudgeStage:
    """What a verifying build's judge asks of an injecting stage (its `Stage.check`): each span
    false against the context, and of its type."""
    return SpanJudgeStage()
