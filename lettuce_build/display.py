"""Terminal views of samples and build summaries."""

from __future__ import annotations

import click

from lettuce_build.schema import HallucinationSample

CATEGORY_COLORS = {
    "contradiction": "red",
    "unsupported_addition": "yellow",
    "fabricated_reference": "magenta",
}


def highlight_answer(sample: HallucinationSample) -> str:
    """The answer with each span in its category's colour, tagged with its number."""
    pieces, cursor = [], 0
    for number, span in enumerate(sample.labels, start=1):
        pieces.append(sample.answer[cursor : span.start])
        color = CATEGORY_COLORS.get(span.category, "cyan")
        pieces.append(
            click.style(f"[{span.text}]", fg=color, bold=True) + click.style(f"^{number}", fg=color)
        )
        cursor = span.end
    pieces.append(sample.answer[cursor:])
    return "".join(pieces)


def render_sample(sample: HallucinationSample, context_chars: int = 400) -> str:
    context = (
        sample.context if len(sample.context) <= context_chars else sample.context[:context_chars] + " [...]"
    )
    lines = [
        click.style("question: ", bold=True) + sample.question,
        click.style("context:  ", bold=True) + context.replace("\n", "\n          "),
        click.style("answer:   ", bold=True) + highlight_answer(sample).replace("\n", "\n          "),
    ]
    for number, span in enumerate(sample.labels, start=1):
        lines.append(
            f"  ^{number} [{span.start}:{span.end}] {span.category}/{span.subcategory or '-'}"
            f" ({span.label}): {span.text!r}"
        )
    if not sample.labels:
        lines.append("  (a clean sample: no hallucinated spans)")
    return "\n".join(lines)
