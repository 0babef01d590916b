"""What the checks that score with the build's own model share (plausibility, question fit):
how many they scored, what a backend without prompt log-probabilities left unscored, and the
quantiles their figures are reported at."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

#: the quantiles a check's figures are reported at
POINTS = (("p10", 0.1), ("p50", 0.5), ("p90", 0.9))


class ScoreReport(BaseModel):
    """How many a check scored, and those it could not (no prompt log-probabilities), and why."""

    scored: int = 0
    unscored: int = 0
    why_unscored: str = ""

    def reported(self, name: str, line: str, what: str) -> list[str]:
        """``line`` with the unscored ones said after it (``what``: items, questions), or only
        that nothing was scored."""
        if not self.scored:
            return (
                [f"{name}: not scored ({self.unscored} {what}: {self.why_unscored})"] if self.unscored else []
            )
        return [line] + (
            [f"not scored: {self.unscored} {what} ({self.why_unscored})"] if self.unscored else []
        )


def unscored(verdicts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The `ScoreReport` fields of the verdicts a backend could not score."""
    left = [v for v in verdicts if not v["scored"]]
    return {"unscored": len(left), "why_unscored": left[0]["why"] if left else ""}


def quantiles(values: Sequence[float], points: Sequence[tuple[str, float]] = POINTS) -> dict[str, float]:
    """``values`` at ``points`` (name, fraction); empty for no values."""
    ordered = sorted(values)
    if not ordered:
        return {}
    return {name: ordered[min(len(ordered) - 1, int(q * len(ordered)))] for name, q in points}
