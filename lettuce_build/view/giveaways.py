"""Give-aways: words of the answers alone that tell hallucinated rows from clean ones.

A detector should have to read the context to find a span. Where a word of the answer predicts
the class on its own (an added "not" in most hallucinated answers, and in few clean ones), a
detector learns the word instead, as NLI models learned hypothesis-only cues. `audit` counts,
for each word that enough answers hold, how many of those rows are hallucinated, and names the
words whose share is far from the data's own.
"""

from __future__ import annotations

import math
from collections import Counter

import regex
from pydantic import BaseModel, Field

from lettuce_build.rules.prose_words import NEGATIVES

#: a word of an answer: letters and digits, with an apostrophe's ending ("don't")
_WORD = regex.compile(r"[\p{L}\p{N}]+(?:['’][\p{L}]+)?")
#: a word counts once it is in this many answers (and in this share of them)
MIN_ROWS = 5
MIN_ROW_SHARE = 0.05
#: a word is a give-away when its rows' hallucinated share is this far from the data's, and that
#: many standard errors away: a word of few rows is far by chance (hundreds of words are tried)
MIN_DIFFERENCE = 0.2
MIN_STANDARD_ERRORS = 3.0
#: the give-aways named, the most common first
MAX_SHOWN = 8
#: every negative as one cue: "not", "never", "cannot" and a contracted "n't"
NEGATIVE = "(a negative)"


class Giveaway(BaseModel):
    """A word, how many answers hold it, and how many of those rows are hallucinated."""

    word: str
    rows: int
    hallucinated: int

    @property
    def share(self) -> float:
        return self.hallucinated / self.rows


class GiveawayReport(BaseModel):
    """The rows read, the hallucinated among them, and the give-aways found."""

    rows: int = 0
    hallucinated: int = 0
    words: list[Giveaway] = Field(default_factory=list)

    def lines(self) -> list[str]:
        if not self.rows:
            return []
        base = self.hallucinated / self.rows
        head = (
            f"answer-only give-aways (hallucinated share of the rows holding a word; all rows: {base:.2f}): "
        )
        if not self.words:
            return [head + "none"]
        named = (f"{g.word!r} {g.hallucinated}/{g.rows} ({g.share:.2f})" for g in self.words)
        return [head + ", ".join(named)]


class Giveaways:
    """Counts, answer by answer, the words each class's answers hold."""

    def __init__(self) -> None:
        self.rows = 0
        self.hallucinated = 0
        self._in_rows: Counter[str] = Counter()
        self._in_hallucinated: Counter[str] = Counter()

    def add(self, answer: str, hallucinated: bool) -> None:
        words = {word.lower().replace("’", "'") for word in _WORD.findall(answer)}
        if NEGATIVES.search(answer):
            words.add(NEGATIVE)
        self.rows += 1
        self._in_rows.update(words)
        if hallucinated:
            self.hallucinated += 1
            self._in_hallucinated.update(words)

    def merge(self, other: Giveaways) -> None:
        """Add the counts of other rows."""
        self.rows += other.rows
        self.hallucinated += other.hallucinated
        self._in_rows.update(other._in_rows)
        self._in_hallucinated.update(other._in_hallucinated)

    @property
    def report(self) -> GiveawayReport:
        report = GiveawayReport(rows=self.rows, hallucinated=self.hallucinated)
        if not self.rows:
            return report
        base = self.hallucinated / self.rows
        enough = max(MIN_ROWS, MIN_ROW_SHARE * self.rows)
        found = [
            Giveaway(word=word, rows=rows, hallucinated=self._in_hallucinated[word])
            for word, rows in self._in_rows.items()
            if rows >= enough
        ]
        telling = [g for g in found if _far(g, base)]
        report.words = sorted(telling, key=lambda g: (-g.rows, g.word))[:MAX_SHOWN]
        return report


def _far(giveaway: Giveaway, base: float) -> bool:
    """Whether the word's rows are hallucinated at a share far from ``base``, beyond chance."""
    difference = abs(giveaway.share - base)
    standard_error = math.sqrt(base * (1 - base) / giveaway.rows)
    return difference >= MIN_DIFFERENCE and difference >= MIN_STANDARD_ERRORS * standard_error
