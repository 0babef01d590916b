"""The rules a set of injected spans must pass (core/edits.py makes the spans from edits)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Literal

import regex
from pydantic import BaseModel, Field

from lettuce_build.core.schema import Span
from lettuce_build.core.taxonomy import FABRICATED_REFERENCE

SpanFailureReason = Literal[
    "no_labels",
    "prompt_residue",
    "unbalanced_fences",
    "no_code_fences",
    "coverage_too_high",
    "span_too_short",
    "span_too_long",
    "overlapping_or_unsorted_labels",
    "leaky_label_text",
    "label_outside_code_block",
    "fabrication_not_absent",
]


class CoverageCap(BaseModel):
    max_answer_chars: int
    max_coverage: float


class ValidationConfig(BaseModel):
    """Every threshold of span validation, defaulting to spec/generation.md."""

    min_span_chars: int = 4
    max_span_chars: int = 500
    coverage_caps: list[CoverageCap] = Field(
        default_factory=lambda: [
            CoverageCap(max_answer_chars=200, max_coverage=0.80),
            CoverageCap(max_answer_chars=500, max_coverage=0.60),
            CoverageCap(max_answer_chars=1500, max_coverage=0.45),
        ]
    )
    coverage_cap_longer: float = 0.40
    leaky_words: list[str] = Field(
        default_factory=lambda: [
            "bug",
            "buggy",
            "wrong",
            "wrongly",
            "incorrect",
            "incorrectly",
            "deprecated",
            "hallucination",
            "hallucinated",
            "fabricated",
            "fake",
            "erroneous",
            "mistake",
            "mistakenly",
            "typo",
        ]
    )
    prompt_residue_phrases: list[str] = Field(
        default_factory=lambda: [
            "hallucinated",
            "hallucination_type",
            "original:",
            "explanation:",
            '"changes"',
            "here is the modified",
            "here's the modified",
            "as an ai",
            "<|im_start|>",
            "<|im_end|>",
            "<|endoftext|>",
        ]
    )

    def coverage_cap(self, answer_chars: int) -> float:
        for cap in sorted(self.coverage_caps, key=lambda c: c.max_answer_chars):
            if answer_chars <= cap.max_answer_chars:
                return cap.max_coverage
        return self.coverage_cap_longer


class SpanFailure(BaseModel):
    reason: SpanFailureReason
    message: str


_FENCE_LINE = regex.compile(r"^[ \t]*(```|~~~)", regex.MULTILINE)
_IDENTIFIER = regex.compile(r"[\p{L}_][\p{L}\p{N}_]*")


def fenced_regions(answer: str) -> list[tuple[int, int]]:
    """Character ranges of the insides of fenced code blocks (an unclosed fence runs to the end)."""
    fences = list(_FENCE_LINE.finditer(answer))
    regions: list[tuple[int, int]] = []
    for opening, closing in zip(fences[::2], fences[1::2] + [None], strict=False):
        line_end = answer.find("\n", opening.start())
        inside_start = len(answer) if line_end == -1 else line_end + 1
        inside_end = len(answer) if closing is None else closing.start()
        regions.append((inside_start, inside_end))
    return regions


def _appears_as_word(word: str, text: str) -> bool:
    # a pattern is compiled per word: first the test that rules out most
    if word not in text:
        return False
    return regex.search(rf"(?<![\p{{L}}\p{{N}}_]){regex.escape(word)}(?![\p{{L}}\p{{N}}_])", text) is not None


@functools.lru_cache(maxsize=8)  # compiled once per word list, not once per answer
def _leaky_pattern(words: tuple[str, ...]) -> regex.Pattern[str]:
    return regex.compile(r"\b(" + "|".join(regex.escape(w) for w in words) + r")\b", regex.IGNORECASE)


def validate_spans(
    answer: str,
    spans: Sequence[Span],
    *,
    config: ValidationConfig | None = None,
    clean_answer: str | None = None,
    context: str | None = None,
    require_fences: bool = False,
    enforce_in_fence: bool = False,
) -> list[SpanFailure]:
    """Every named reason the injected answer fails for; an empty list means it passes.

    ``clean_answer`` lets prompt residue ignore phrases the clean answer
    already had; ``context`` and ``clean_answer`` are needed for the
    fabricated-reference check, which runs only when both are given.
    """
    config = config or ValidationConfig()
    failures: list[SpanFailure] = []

    def fail(reason: SpanFailureReason, message: str) -> None:
        failures.append(SpanFailure(reason=reason, message=message))

    if not spans:
        fail("no_labels", "no edit survived")

    lowered, lowered_clean = answer.lower(), (clean_answer or "").lower()
    residue = [p for p in config.prompt_residue_phrases if p in lowered and p not in lowered_clean]
    if residue:
        fail("prompt_residue", f"injector prompt phrases leaked into the answer: {residue}")

    fence_count = len(_FENCE_LINE.findall(answer))
    if require_fences:
        if fence_count == 0:
            fail("no_code_fences", "the answer needs a fenced code block and has none")
        elif fence_count % 2:
            fail("unbalanced_fences", f"{fence_count} fence lines: one block is never closed")

    covered = sum(span.end - span.start for span in spans)
    if answer:
        coverage = covered / len(answer)
        cap = config.coverage_cap(len(answer))
        if coverage > cap:
            fail(
                "coverage_too_high",
                f"{covered}/{len(answer)} chars labelled ({coverage:.2f}) exceeds the cap {cap:.2f}",
            )

    previous_end = -1
    regions = fenced_regions(answer) if enforce_in_fence and fence_count else None
    leaky = _leaky_pattern(tuple(config.leaky_words))
    for i, span in enumerate(spans):
        length = span.end - span.start
        if length < config.min_span_chars:
            fail("span_too_short", f"span {i} is {length} chars (< {config.min_span_chars})")
        if length > config.max_span_chars:
            fail("span_too_long", f"span {i} is {length} chars (> {config.max_span_chars})")
        if span.start < previous_end or span.end < span.start:
            fail("overlapping_or_unsorted_labels", f"span {i} starts at {span.start}, before {previous_end}")
        previous_end = max(previous_end, span.end)
        if match := leaky.search(span.text):
            fail("leaky_label_text", f"span {i} contains the giveaway word {match.group(0)!r}")
        if regions is not None and not any(s <= span.start and span.end <= e for s, e in regions):
            fail(
                "label_outside_code_block",
                f"span {i} [{span.start}, {span.end}) is outside every fenced block",
            )
        if (
            span.category == FABRICATED_REFERENCE
            and context is not None
            and clean_answer is not None
            and not any(
                not _appears_as_word(token, context) and not _appears_as_word(token, clean_answer)
                for token in _IDENTIFIER.findall(span.text)
            )
        ):
            fail(
                "fabrication_not_absent",
                f"span {i} {span.text!r} introduces no name absent from both context and clean answer",
            )
    return failures
