"""What a detector with a token window sees of each sample (`audit --tokenizer T --max-length N`).

LettuceDetect tokenizes the prompt and the answer as a pair and truncates the prompt first
(``truncation="only_first"``): a sample longer than the window loses context; an answer that
does not fit the window beside the pair's special tokens cannot be truncated that way at all
(the tokenizer refuses), and each of its spans is lost to training. A tokenizer that adds no
special tokens to a pair (a decoder's, such as SmolLM2's) puts LettuceDetect's answer start,
counted back from a trailing separator, one token off: its labels then miss the spans.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from lettuce_build.core.errors import OutputError


class WindowCounts(BaseModel):
    samples: int = 0
    #: samples longer than the window: the prompt is cut
    prompt_cut: int = 0
    #: samples whose answer alone does not fit: no truncation of the prompt makes it fit
    answer_too_long: int = 0
    spans: int = 0
    spans_lost: int = 0


class WindowReport(BaseModel):
    tokenizer: str
    #: special tokens the tokenizer adds to a (prompt, answer) pair
    pair_special_tokens: int
    #: per window length, per "dataset split"
    windows: dict[int, dict[str, WindowCounts]] = Field(default_factory=dict)

    @property
    def warning(self) -> str | None:
        if self.pair_special_tokens:
            return None
        return (
            f"{self.tokenizer} adds no special tokens to a (prompt, answer) pair: LettuceDetect counts "
            "the answer's start back from a final separator, so its token labels would be one token off "
            "and miss the spans; give the tokenizer a pair template (an encoder's [CLS] A [SEP] B [SEP])"
        )


class TokenWindows:
    """Counts, sample by sample, what windows of ``lengths`` tokens keep."""

    def __init__(self, tokenizer: str, lengths: Sequence[int]) -> None:
        from transformers import AutoTokenizer

        try:
            self.tokenizer: Any = AutoTokenizer.from_pretrained(tokenizer)
        except (OSError, ValueError) as err:
            first = (str(err).strip().splitlines() or [type(err).__name__])[0][:200]
            raise OutputError(f"--tokenizer {tokenizer}: cannot load it ({first})") from err
        pair = len(self.tokenizer("a", "b")["input_ids"])
        alone = len(self._ids("a")) + len(self._ids("b"))
        self.report = WindowReport(tokenizer=tokenizer, pair_special_tokens=pair - alone)
        self.lengths = sorted(set(lengths))

    def _ids(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def add(self, group: str, prompt: str, answer: str, offsets: Sequence[tuple[int, int]]) -> None:
        prompt_tokens, answer_tokens = len(self._ids(prompt)), len(self._ids(answer))
        specials = self.report.pair_special_tokens
        for length in self.lengths:
            counts = self.report.windows.setdefault(length, {}).setdefault(group, WindowCounts())
            counts.samples += 1
            counts.spans += len(offsets)
            if prompt_tokens + answer_tokens + specials <= length:
                continue
            counts.prompt_cut += 1
            if answer_tokens + specials > length:
                counts.answer_too_long += 1
                counts.spans_lost += len(offsets)


def window_text(report: WindowReport) -> list[str]:
    lines = [f"  token windows ({report.tokenizer}, {report.pair_special_tokens} special tokens per pair):"]
    if report.warning:
        lines.append(f"    warning: {report.warning}")
    for length, groups in sorted(report.windows.items()):
        lines.append(f"    max length {length}:")
        for group, c in sorted(groups.items()):
            share = c.prompt_cut / c.samples if c.samples else 0.0
            lines.append(
                f"      {group}: {c.prompt_cut} of {c.samples} samples over ({share:.1%}: context cut), "
                f"{c.answer_too_long} whose answer alone does not fit; spans lost {c.spans_lost} of {c.spans}"
            )
    return lines
