"""What a translation kept and dropped, per language and reason: written beside its samples
(``OUT/translation.json``), printed at its end, and stated on its card."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pydantic import BaseModel, Field, field_validator

from lettuce_build.core.languages import name_of
from lettuce_build.llm.factory import ModelChoice
from lettuce_build.llm.pricing import Pricing

#: what a translation's report is written to, in its folder
REPORT_FILE = "translation.json"


class TranslationOptions(BaseModel):
    """What a translation is asked: which samples, into which languages, written where."""

    #: any of our layouts `validate` reads (a build folder: its dataset)
    source: Path
    languages: list[str] = Field(min_length=1)
    out: Path
    seed: int = 0
    #: at most this many samples of ``source`` (a trial run)
    limit: int | None = Field(default=None, ge=1)
    #: what the tokens cost (``--price-per-mtok``): the manifest and summary say the dollars
    pricing: Pricing | None = None
    #: the translating model and, with ``verify``, the judges of its spans
    models: ModelChoice = Field(default_factory=ModelChoice)

    @field_validator("languages")
    @classmethod
    def _known(cls, languages: list[str]) -> list[str]:
        for code in languages:
            name_of(code)  # an unknown code is refused before anything is read
        return list(dict.fromkeys(languages))


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
    #: what the translation's requests cost over all its runs into the folder (None: no price)
    dollars: float | None = None

    @classmethod
    def empty(cls, options: TranslationOptions, model: str) -> TranslationReport:
        """The report of a translation about to start."""
        languages = {code: LanguageReport() for code in options.languages}
        return cls(source=str(options.source), model=model, languages=languages)

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
        if self.dollars is not None:
            lines.append(f"  cost so far: ${self.dollars:.4f}")
        lines.append(f"samples in {out}/dataset; failures: `lettuce-build failures {out}`")
        return "\n".join(lines)

    def card_text(self) -> str:
        """The card's account of the translation: the languages, the model, and per language the
        share of samples kept and of those dropped, by reason."""
        names = ", ".join(f"{name_of(code)} ({code})" for code in self.languages)
        lines = [
            "## Translation",
            "",
            f"The samples of `{self.source}` translated into {names} by `{self.model}` with "
            "`lettuce-build translate`. Each answer was sent with its spans in numbered tags; a "
            "translation was kept only when every span came back exactly once and the text around "
            "the spans was in the asked language. The spans' types are the source's; their offsets "
            "are read from the translated answer.",
            "",
            "| language | asked | kept | dropped, by reason (share of asked) |",
            "| --- | ---: | ---: | --- |",
        ]
        for code, language in self.languages.items():
            dropped = ", ".join(
                f"{reason} {n / language.asked:.1%}" for reason, n in language.dropped.most_common()
            )
            lines.append(
                f"| {name_of(code)} ({code}) | {language.asked} | {language.kept} "
                f"({language.kept_share:.1%}) | {dropped or 'none'} |"
            )
        return "\n".join(lines) + "\n"
