"""What the checks that score with the build's own model share (plausibility, question fit):
how many they scored, what a backend without prompt log-probabilities left unscored, and the
quantiles their figures are reported at."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel

from lettuce_build.engine.records import Judgement

#: the quantiles a check's figures are reported at
POINTS = (("p10", 0.1), ("p50", 0.5), ("p90", 0.9))


class ScoreReport(BaseModel):
    """How many a check scored, and those it could not (no prompt log-probabilities), and why.
    A check's report says its name, what it leaves unscored, and what its scores found."""

    #: the check's name in a summary, and what it cannot score (items, questions)
    title: ClassVar[str]
    unscored_kind: ClassVar[str]

    scored: int = 0
    unscored: int = 0
    why_unscored: str = ""

    def found(self) -> str:
        """What the scores found, in the words of the summary line after the check's name."""
        raise NotImplementedError

    def lines(self) -> list[str]:
        """The summary's line, with the unscored ones said after it, or only that nothing was
        scored."""
        what = self.unscored_kind
        if not self.scored:
            return (
                [f"{self.title}: not scored ({self.unscored} {what}: {self.why_unscored})"]
                if self.unscored
                else []
            )
        return [f"{self.title}: {self.found()}"] + (
            [f"not scored: {self.unscored} {what} ({self.why_unscored})"] if self.unscored else []
        )


class Tally:
    """What a report keeps of one check's verdicts, read one at a time: the scored figures as
    machine floats (8 bytes each: a build's verdicts are never all in memory) and the verdicts
    a backend could not score."""

    def __init__(self) -> None:
        self.figures = array("d")
        self.unscored = 0
        self.why_unscored = ""

    def fields(self) -> dict[str, Any]:
        """The `ScoreReport` fields of the verdicts a backend could not score."""
        return {"unscored": self.unscored, "why_unscored": self.why_unscored}


def tally(
    judgements: Iterable[Judgement], check: str, figures: Callable[[dict[str, Any]], Iterable[float]]
) -> Tally | None:
    """The ``figures`` of each of ``check``'s verdicts, and those it could not score (None: the
    check judged nothing)."""
    found: Tally | None = None
    for judgement in judgements:
        if judgement.check != check:
            continue
        found = found or Tally()
        if not judgement.verdict["scored"]:
            found.unscored += 1
            found.why_unscored = found.why_unscored or judgement.verdict["why"]
        found.figures.extend(figures(judgement.verdict))
    return found


def spread(quantiles: Mapping[str, float]) -> str:
    """Quantiles as a summary line says them: ``p10 -2.1, p50 -0.4``."""
    return ", ".join(f"{name} {value:.1f}" for name, value in quantiles.items())


def quantiles(values: Sequence[float], points: Sequence[tuple[str, float]] = POINTS) -> dict[str, float]:
    """``values`` at ``points`` (name, fraction); empty for no values."""
    ordered = np.sort(np.asarray(values, dtype=np.float64))
    if not len(ordered):
        return {}
    return {name: float(ordered[min(len(ordered) - 1, int(q * len(ordered)))]) for name, q in points}
