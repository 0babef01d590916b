"""Questions that ask for their answers, by the model's own likelihood.

A question can pass every gate and still not ask for its answer ("What is the code?", "Can you
use RAG prose with Python?"). The build's model tells: after the context and the question, it
scores the sentence the question was asked about (its ``focus``, the core of its extractive
answer); after the same context and a generic question, the same sentence again. A question
that asks for its answer makes it more likely; one that asks for something else does not. The
gain is their difference in nats; a question whose gain is under `MIN_GAIN` fails the question
stage (``question_unfit``) and is asked again with a new seed, like any failure.

One scoring request per question, two prefills, nothing generated (as the plausibility check:
stages/plausibility.py). The question sits in the assistant's text before the scored sentence,
so both prefills share one prompt. A backend that gives no prompt log-probabilities answers
``scored: false``: the question passes and the summary says how many were not scored.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from pydantic import Field

from lettuce_build.engine.records import Judgement
from lettuce_build.engine.stage import CheckStage, ParseFailure, Sampling
from lettuce_build.llm.protocol import ChatRequest, Scores
from lettuce_build.stages.scored import ScoreReport, quantiles, spread, tally

#: a question must make its answer more likely than the generic one does. Measured on 16 real
#: READMEs with the embedded model (26 questions, benchmarks/prose_quality.py): the 13 with a
#: negative gain were all unusable ("What is the use FP8 for W4A16, W8A16, or WnA16?", "What
#: is the main goal of Python?"); above zero good and poor questions mix at every gain (7.7
#: "How does a client fail in three ways?", 2.5 a garbled one), so a higher bar costs good
#: questions as often as poor ones
MIN_GAIN = 0.0
#: the question every question is measured against: it asks for nothing in particular
GENERIC_QUESTION = "What does the text say?"
CONTEXT_CHARS = 3000
#: the words a question answered by yes or no opens with, which the gain cannot judge (see
#: `QuestionFitCheck.applies`)
YES_NO_OPENERS = frozenset("is are was were does do did can could will would should must has have".split())
SYSTEM = "Read the text, then answer the question with a sentence of it."


def _prefix(question: str) -> str:
    return f"Question: {question}\nAnswer: "


class QuestionFitCheck(CheckStage):
    """How much more likely a question makes its focus sentence than a generic question does."""

    name = "question_fit"
    prompt_version = "question-fit-v1"
    response_model = Scores
    sampling = Sampling(temperature=0.0, max_tokens=2000)  # bounds the scores' JSON (nothing is generated)
    requires = ("chunk", "question", "focus")

    def __init__(
        self, min_gain: float = MIN_GAIN, *, scores_item: Callable[[dict[str, Any]], bool] | None = None
    ) -> None:
        self.min_gain = min_gain
        #: which of a stage's questions the check scores (None: every one it can)
        self.scores_item = scores_item

    def applies(self, item: dict[str, Any]) -> bool:
        # a yes/no question makes any quoted sentence less likely, whatever it asks (seen: "Do
        # you use sorting with the --sort option with a column name?" scored -4.1 over "Sorting
        # uses the `--sort` option with a column name."): the gain cannot judge it
        scored = self.scores_item is None or self.scores_item(item)
        return bool(item.get("focus")) and not is_yes_no(item["question"]) and scored

    def render(self, item: dict[str, Any]) -> ChatRequest:
        user = f"Text:\n{item['chunk'][:CONTEXT_CHARS]}"
        pairs = ((_prefix(item["question"]), item["focus"]), (_prefix(GENERIC_QUESTION), item["focus"]))
        return self.request(SYSTEM, user).with_params(continuations=pairs)

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        scores: Scores = response
        if not scores.scored:
            return {"judgement": json.dumps({"scored": False, "why": scores.why})}
        if len(scores.logprobs) != 2:  # a server's answer to another request
            raise ParseFailure("scores_mismatch", f"{len(scores.logprobs)} scores for 2 texts")
        asked, generic = (sum(logprobs) for logprobs in scores.logprobs)
        verdict = {"scored": True, "gain": round(asked - generic, 4), "question": item["question"]}
        return {"judgement": json.dumps(verdict, ensure_ascii=False)}

    def rejection(self, verdict: dict[str, Any]) -> ParseFailure | None:
        if not verdict["scored"] or verdict["gain"] >= self.min_gain:
            return None
        detail = (
            f"{verdict['question'][:80]!r} makes its answer {verdict['gain']:.1f} nats more likely than "
            f"{GENERIC_QUESTION!r} does (at least {self.min_gain:g})"
        )
        return ParseFailure("question_unfit", detail)


def is_yes_no(question: str) -> bool:
    """Whether ``question`` is answered by yes or no (it opens with an auxiliary verb)."""
    return question.split(" ", 1)[0].lower() in YES_NO_OPENERS


class QuestionFitReport(ScoreReport):
    """What the question check found, as the summary, manifest and card show it (``scored``:
    questions, every attempt counted)."""

    title = "question fit"
    unscored_kind = "questions"

    min_gain: float = MIN_GAIN
    #: questions refused
    refused: int = 0
    #: the gain (nats) of the kept and of the refused questions at these quantiles
    kept: dict[str, float] = Field(default_factory=dict)
    refused_gains: dict[str, float] = Field(default_factory=dict)

    def found(self) -> str:
        return (
            f"{self.scored} questions scored, {self.refused} refused (likelihood gain over "
            f"a generic question < {self.min_gain:g} nats); kept gains: {spread(self.kept)}"
        )


def question_fit_report(
    judgements: Iterable[Judgement], min_gain: float = MIN_GAIN
) -> QuestionFitReport | None:
    """The figures of a build's question verdicts (None: none was checked)."""
    gains = tally(
        judgements, QuestionFitCheck.name, lambda verdict: [verdict["gain"]] if verdict["scored"] else []
    )
    if gains is None:
        return None
    figures = np.asarray(gains.figures, dtype=np.float64)
    return QuestionFitReport(
        min_gain=min_gain,
        scored=len(figures),
        refused=int((figures < min_gain).sum()),
        kept=quantiles(figures[figures >= min_gain].tolist()),
        refused_gains=quantiles(figures[figures < min_gain].tolist()),
        **gains.fields(),
    )
