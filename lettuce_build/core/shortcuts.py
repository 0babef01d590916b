"""How far a string matcher gets without reading: the spelling baseline.

It marks each answer word that no word of its context spells (`words`, case folded) as
hallucinated, and a row hallucinated when it marks any. Where that scores well, the data
teaches spelling, not reading: clean answers copied from their context and spans that bring a
word the context lacks let a detector label rows without understanding them. Reported beside
the answer-only give-aways by `audit`, a build's summary, the card and the review page, with
the share of spans that hold a word the context never spells, overall and per subcategory.

Streaming: each row adds to a few counters, so any number of rows fits in memory.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from pydantic import BaseModel, Field

from lettuce_build.core.words import word_spans, words

#: what calling every row hallucinated scores at a ratio of 0.5 (2 * 0.5 / 1.5): a baseline at
#: or above it reads nothing a coin with the ratio would not
BLIND_EXAMPLE_F1 = 2 / 3


class SpanShare(BaseModel):
    """Spans of one kind, and how many hold a word their context never spells."""

    spans: int = 0
    novel: int = 0

    @property
    def share(self) -> float:
        return self.novel / self.spans if self.spans else 0.0


class Marked(BaseModel):
    """What the baseline marked of one kind of unit (rows, or words): marked and hallucinated,
    marked and clean, hallucinated and not marked."""

    true: int = 0
    false: int = 0
    missed: int = 0

    def add(self, *, marked: bool, hallucinated: bool) -> None:
        self.true += marked and hallucinated
        self.false += marked and not hallucinated
        self.missed += hallucinated and not marked

    def add_counts(self, true: int, false: int, missed: int) -> None:
        self.true += true
        self.false += false
        self.missed += missed

    @property
    def f1(self) -> float:
        return 2 * self.true / (2 * self.true + self.false + self.missed) if self.true else 0.0


class ShortcutReport(BaseModel):
    """The spelling baseline's scores: example-level and word-level F1, and the spans it finds."""

    rows: int = 0
    #: example level (a row is marked when any word of it is) and word level (a word in a span
    #: is hallucinated)
    examples: Marked = Field(default_factory=Marked)
    words: Marked = Field(default_factory=Marked)
    spans: SpanShare = Field(default_factory=SpanShare)
    by_subcategory: dict[str, SpanShare] = Field(default_factory=dict)

    @property
    def example_f1(self) -> float:
        return self.examples.f1

    @property
    def word_f1(self) -> float:
        return self.words.f1

    def lines(self) -> list[str]:
        """The report in a few lines (none before a row is read)."""
        if not self.rows:
            return []
        kinds = ", ".join(
            f"{kind} {share.novel}/{share.spans}" for kind, share in sorted(self.by_subcategory.items())
        )
        lines = [
            f"spelling baseline (an answer word its context never spells marks a hallucination): "
            f"example F1 {self.example_f1:.2f} (calling every row hallucinated: "
            f"{BLIND_EXAMPLE_F1:.2f} at a ratio of 0.5), word F1 {self.word_f1:.2f}",
            f"spans holding a word the context never spells: {self.spans.novel} of {self.spans.spans} "
            f"({self.spans.share:.0%})" + (f"; by subcategory: {kinds}" if kinds else ""),
        ]
        if self.example_f1 > BLIND_EXAMPLE_F1:
            lines.append("  the rows can be labelled by spelling alone: a detector learns little reading")
        return lines


@functools.lru_cache(maxsize=16)  # a context is read by the rows of its item together
def _spelled(context: str) -> frozenset[str]:
    return frozenset(words(context))


def spelled(text: str, context: str) -> bool:
    """Whether every word of ``text`` is one ``context`` spells: the baseline cannot flag it."""
    said = _spelled(context)
    return all(word in said for word in words(text))


class SpellingBaseline:
    """The baseline over rows added one at a time (`add`), reported at the end (`report`)."""

    def __init__(self) -> None:
        self._report = ShortcutReport()

    def add(self, answer: str, context: str, spans: Sequence[tuple[int, int, str]]) -> None:
        """One row: ``spans`` as (start, end, subcategory) in ``answer``; none for a clean row."""
        report = self._report
        report.rows += 1
        spelled = _spelled(context)
        # counted in locals, then added once: a pydantic field set per word took half of
        # `audit`'s time at scale
        true = false = missed = 0
        for start, end, word in word_spans(answer):
            inside = bool(spans) and any(s < end and start < e for s, e, _ in spans)
            if word not in spelled:
                true += inside
                false += not inside
            else:
                missed += inside
        report.words.add_counts(true, false, missed)
        report.examples.add(marked=true + false > 0, hallucinated=bool(spans))
        for start, end, kind in spans:
            novel = any(word not in spelled for word in words(answer[start:end]))
            for share in (report.spans, report.by_subcategory.setdefault(kind, SpanShare())):
                share.spans += 1
                share.novel += novel

    def merge(self, other: SpellingBaseline) -> None:
        """Add the counts of other rows."""
        mine, theirs = self._report, other._report
        mine.rows += theirs.rows
        for marked, more in ((mine.examples, theirs.examples), (mine.words, theirs.words)):
            marked.add_counts(more.true, more.false, more.missed)
        for kind, share in [(None, theirs.spans), *theirs.by_subcategory.items()]:
            into = mine.spans if kind is None else mine.by_subcategory.setdefault(kind, SpanShare())
            into.spans += share.spans
            into.novel += share.novel

    def report(self) -> ShortcutReport:
        return self._report.model_copy(deep=True)
