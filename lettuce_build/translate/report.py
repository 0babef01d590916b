"""What a translation kept and dropped, per language and reason: written beside its samples
(``OUT/translation.json``), printed at its end, and stated on its card."""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel, Field

from lettuce_build.core.languages import name_of

#: what a translation's report is written to, in its folder
REPORT_FILE = "translation.json"


class LanguageReport(BaseModel):
    asked: int = 0
    kept: int = 0
    #: samples dropped, by failure reason (``span_lost``, ``wrong_language``, ...)
    dropped: Counter[str] = Field(default_factory=Counter)

    @property
    def kept_share(self) -> float:
        return self.kept / self.asked if self.asked else 0.0


class TranslationReport(BaseModel):
    source: str
    model: str
    #: rows read from the source
    rows: int = 0
    #: rows not translated, by reason (unreadable, invalid, already in the language)
    skipped: Counter[str] = Field(default_factory=Counter)
    languages: dict[str, LanguageReport] = Field(default_factory=dict)

    def text(self, out: str) -> str:
        """The summary a translation prints: per language, the samples kept and why the others
        were dropped; then where the samples are."""
        lines = [f"translated {self.rows} samples of {self.source} with {self.model}"]
        if self.skipped:
            lines.append("  not translated: " + ", ".join(f"{n} {r}" for r, n in self.skipped.most_common()))
        for code, language in self.languages.items():
            dropped = ", ".join(f"{n} {reason}" for reason, n in language.dropped.most_common()) or "none"
            lines.append(
                f"  {name_of(code)} ({code}): kept {language.kept} of {language.asked} "
                f"({language.kept_share:.0%}); dropped: {dropped}"
            )
        lines.append(f"samples in {out}/dataset; failures: `lettuce-build failures {out}`")
        return "\n".join(lines)
