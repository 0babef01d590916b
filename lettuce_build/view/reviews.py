"""People's verdicts on a build's samples (``OUT/reviews.jsonl``) and the figures made of them.

One line per verdict, appended whole (a single ``write`` of one line to a file opened for
appending, then ``fsync``), so a crash loses at most the verdict being written and never
damages an earlier one. A later verdict of the same reviewer on the same sample supersedes the
earlier: the file is the history, `latest` the state. The schema (`Verdict`):

- ``key``: the sample's key (every published row carries it in its metadata as ``key``);
- ``split``, ``reviewer``, ``time`` (seconds since the epoch, UTC);
- ``answer``: a clean sample's answer is supported by its context (true/false; null: not marked
  or a hallucinated sample);
- ``spans``: per labelled span, in the sample's order: ``start``, ``end``, ``false`` (the span
  really is false: true/false/null) and ``category`` (the category the reviewer gives it; the
  intended one when the reviewer agrees);
- ``question``: the question fits the context and its answer (true/false/null).
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from lettuce_build.core.schema import HallucinationSample

REVIEWS_FILE = "reviews.jsonl"


class SpanVerdict(BaseModel):
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    #: the span really is false (None: not marked)
    false: bool | None = None
    #: the category the reviewer gives the span (None: not marked)
    category: str | None = None


class Verdict(BaseModel):
    key: str = Field(min_length=1)
    split: str
    reviewer: str = Field(min_length=1, max_length=100)
    time: float = Field(default_factory=time.time)
    answer: bool | None = None
    spans: list[SpanVerdict] = Field(default_factory=list)
    question: bool | None = None


class ReviewLog:
    """``OUT/reviews.jsonl``: appended to by the review page and ``POST /api/verdicts``."""

    _lock = threading.Lock()  # one writer at a time within a process (the server's threads)

    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, verdict: Verdict) -> None:
        line = (verdict.model_dump_json() + "\n").encode()
        with self._lock:
            descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(descriptor, line)
                os.fsync(descriptor)
            finally:
                os.close(descriptor)

    def verdicts(self) -> list[Verdict]:
        """Every verdict in the file, in order; a line that is no verdict (a crash cut it) is
        left out."""
        if not self.path.is_file():  # none yet (or something else in its place: nothing to read)
            return []
        found = []
        for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                found.append(Verdict.model_validate_json(line))
            except ValidationError:
                continue
        return found

    def latest(self) -> dict[tuple[str, str], Verdict]:
        """Each reviewer's last verdict on each sample, by (reviewer, key)."""
        return {(v.reviewer, v.key): v for v in self.verdicts()}


class ReviewReport(BaseModel):
    """What people confirmed of a build's samples."""

    #: per split: (samples reviewed by anyone, samples in the split)
    reviewed: dict[str, tuple[int, int]]
    reviewers: list[str]
    #: clean answers marked, and marked supported
    answers: tuple[int, int] = (0, 0)
    #: spans marked, and marked really false
    spans: tuple[int, int] = (0, 0)
    #: false spans whose category was marked, and marked as the intended one
    categories: tuple[int, int] = (0, 0)
    #: questions marked, and marked fitting
    questions: tuple[int, int] = (0, 0)
    #: Cohen's kappa between two reviewers over the verdicts both gave, per pair
    kappa: dict[str, float] = Field(default_factory=dict)
    #: with ``--verify``: verdicts that agree with the judge (which passed every published
    #: answer and span), of those given
    judge_agreement: tuple[int, int] | None = None

    def lines(self) -> list[str]:
        def rate(pair: tuple[int, int]) -> str:
            total, yes = pair
            return f"{yes / total:.2f} ({yes} of {total})" if total else "none marked"

        shares = ", ".join(
            f"{split} {done / total:.0%} ({done} of {total})" if total else f"{split} none"
            for split, (done, total) in self.reviewed.items()
        )
        found = [
            f"reviewed by {len(self.reviewers)} reviewer(s): {shares}",
            f"clean answers confirmed supported: {rate(self.answers)}",
            f"spans confirmed false: {rate(self.spans)}; category as intended: {rate(self.categories)}",
            f"questions confirmed fitting: {rate(self.questions)}",
        ]
        found.extend(f"agreement {pair} (Cohen's kappa): {k:.2f}" for pair, k in self.kappa.items())
        if self.judge_agreement is not None:
            found.append(f"reviewers agree with the judge (--verify): {rate(self.judge_agreement)}")
        return found


def review_report(
    samples: Iterable[HallucinationSample], verdicts: Iterable[Verdict], judged: bool = False
) -> ReviewReport:
    """The figures of ``verdicts`` over ``samples`` (the published rows, keyed by their
    metadata's ``key``, read once: only the reviewed ones are kept); ``judged``: the build ran
    ``--verify``."""
    verdicts = list(verdicts)  # as many as people gave
    reviewed = {v.key for v in verdicts}
    by_key: dict[str, HallucinationSample] = {}
    totals: Counter[str] = Counter()
    for sample in samples:
        totals[sample.split] += 1
        if (key := str(sample.metadata.get("key") or "")) in reviewed:
            by_key[key] = sample
    latest = {(v.reviewer, v.key): v for v in verdicts if v.key in by_key}
    done: Counter[str] = Counter(by_key[key].split for key in {key for _, key in latest})
    answers, spans, categories, questions = [0, 0], [0, 0], [0, 0], [0, 0]
    marks: dict[str, dict[tuple[str, int], bool]] = {}  # reviewer -> (key, item) -> verdict
    for (reviewer, key), verdict in latest.items():
        sample = by_key[key]
        mine = marks.setdefault(reviewer, {})
        if not sample.labels and verdict.answer is not None:
            _count(answers, verdict.answer)
            mine[(key, -1)] = verdict.answer
        if verdict.question is not None:
            _count(questions, verdict.question)
        for index, (span, said) in enumerate(zip(sample.labels, verdict.spans, strict=False)):
            if said.false is None:
                continue
            _count(spans, said.false)
            mine[(key, index)] = said.false
            if said.false and said.category is not None:
                _count(categories, said.category == span.category)
    reviewers = sorted(marks)
    kappa = {}
    for i, first in enumerate(reviewers):
        for second in reviewers[i + 1 :]:
            shared = sorted(set(marks[first]) & set(marks[second]))
            if shared:
                kappa[f"{first}/{second}"] = cohen_kappa(
                    [marks[first][item] for item in shared], [marks[second][item] for item in shared]
                )
    judge = None
    if judged:  # a published row passed the judge: its answer grounded, its spans unsupported
        given = [said for mine in marks.values() for said in mine.values()]
        judge = (len(given), sum(given))
    return ReviewReport(
        reviewed={split: (done[split], totals[split]) for split in sorted(totals)},
        reviewers=sorted({reviewer for reviewer, _ in latest}),
        answers=(answers[0], answers[1]),
        spans=(spans[0], spans[1]),
        categories=(categories[0], categories[1]),
        questions=(questions[0], questions[1]),
        kappa=kappa,
        judge_agreement=judge,
    )


def confirmed(sample: HallucinationSample, verdicts: Iterable[Verdict]) -> bool:
    """Whether the reviewers confirmed ``sample`` whole: at least one reviewed it, and every
    reviewer's last verdict marks its clean answer supported (or each span false, of the
    intended category) and its question fitting where they marked it."""
    mine = [v for v in verdicts if v.key == sample.metadata.get("key")]
    latest = {v.reviewer: v for v in mine}
    if not latest:
        return False
    for verdict in latest.values():
        if verdict.question is False:
            return False
        if not sample.labels and verdict.answer is not True:
            return False
        if sample.labels:
            if len(verdict.spans) != len(sample.labels):
                return False
            for span, said in zip(sample.labels, verdict.spans, strict=True):
                if said.false is not True or (said.category not in (None, span.category)):
                    return False
    return True


def cohen_kappa(first: Sequence[bool], second: Sequence[bool]) -> float:
    """Agreement of two raters on yes/no verdicts beyond chance: 1 agree always, 0 as chance."""
    n = len(first)
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    yes_a, yes_b = sum(first) / n, sum(second) / n
    chance = yes_a * yes_b + (1 - yes_a) * (1 - yes_b)
    if chance >= 1.0:  # both said the same one thing throughout: agreement is all there is
        return 1.0 if observed == 1.0 else 0.0
    return (observed - chance) / (1 - chance)


def _count(pair: list[int], yes: bool) -> None:
    pair[0] += 1
    pair[1] += bool(yes)
