"""Looking at a build's samples: in the terminal (rich) and as one self-contained HTML page.

Both views mark each hallucinated span of an answer in its category's colour and say its type
(category/subcategory and label); the page shows it on hover and filters by split and
category (also from the address: ``page.html#split=train&category=contradiction``). The
explore notebook renders with `sample_html` too.
"""

from __future__ import annotations

import html
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from pathlib import Path

from datasets import DatasetDict
from rich.console import Group
from rich.panel import Panel
from rich.text import Text

from lettuce_build.builds.storage.output import DATASET_DIR, read_saved
from lettuce_build.core.errors import CorruptOutput, NoSamples
from lettuce_build.core.schema import HallucinationSample, Span, row_to_sample
from lettuce_build.view.validate import RawRow, saved_rows

#: one colour per category, the terminal's (every terminal view: `show`, a build's summary) and the page's
CATEGORY_STYLES = {
    "contradiction": ("red", "#ffb3b3"),
    "unsupported_addition": ("yellow", "#ffe38a"),
    "fabricated_reference": ("magenta", "#e6b8ff"),
}
OTHER_STYLE = ("cyan", "#b3e5ff")
CONTEXT_CHARS = 400


def load_samples(
    out: Path, *, split: str | None = None, category: str | None = None, limit: int | None = None
) -> list[HallucinationSample]:
    """Samples of a build folder (its ``dataset/``), optionally of one split or one category
    (``clean`` for samples without spans)."""
    return list(islice(iter_samples(out, split=split, category=category), limit))


def iter_samples(
    out: Path, *, split: str | None = None, category: str | None = None
) -> Iterator[HallucinationSample]:
    """`load_samples` one at a time, read from the files a batch at a time: a page of a million
    samples holds one batch of them."""
    saved_splits(out, split)
    return _matching(saved_rows(out / DATASET_DIR, split), category)


def saved_splits(out: Path, split: str | None = None) -> DatasetDict:
    """The splits a build saved (its ``dataset/``, memory-mapped), or why there are none (or
    not ``split``)."""
    folder = out / DATASET_DIR
    if not folder.exists():
        raise NoSamples(f"{out}: the build made no samples; its failures: `lettuce-build failures {out}`")
    dataset = read_saved(folder)
    if not isinstance(dataset, DatasetDict):
        raise NoSamples(f"{folder}: expected the splits a build writes, found one dataset")
    if split is not None and split not in dataset:
        raise NoSamples(f"{out}: no split {split!r}; its splits: {', '.join(dataset)}")
    return dataset


def _matching(rows: Iterator[RawRow], category: str | None) -> Iterator[HallucinationSample]:
    for raw in rows:
        if raw.data is None:
            raise CorruptOutput(f"{raw.where}: {raw.error}; run the build again to write it anew")
        sample = row_to_sample(raw.data)
        if category is None or _categories(sample) & {category}:
            yield sample


def _categories(sample: HallucinationSample) -> set[str]:
    return {span.category for span in sample.labels} or {"clean"}


def span_type(span: Span) -> str:
    """How every view names a span's type: ``category/subcategory (label)``."""
    return f"{span.category}/{span.subcategory or '-'} ({span.label})"


def terminal_color(span: Span) -> str:
    return CATEGORY_STYLES.get(span.category, OTHER_STYLE)[0]


def answer_pieces(sample: HallucinationSample) -> Iterator[tuple[str, int | None]]:
    """The answer cut at its spans: (text, index of the span it belongs to, or None)."""
    cursor = 0
    for index, span in enumerate(sample.labels):
        yield sample.answer[cursor : span.start], None
        yield sample.answer[span.start : span.end], index
        cursor = span.end
    yield sample.answer[cursor:], None


def excerpt(context: str) -> str:
    return context if len(context) <= CONTEXT_CHARS else context[:CONTEXT_CHARS] + " [...]"


# --- terminal --------------------------------------------------------------------------------


def sample_panel(sample: HallucinationSample, number: int) -> Panel:
    answer = Text()
    for text, index in answer_pieces(sample):
        if index is None:
            answer.append(text)
            continue
        span = sample.labels[index]
        style = f"bold {terminal_color(span)}"
        answer.append(text, style=f"{style} underline")
        answer.append(f"^{index + 1}", style=style)
    legend = Text()
    for index, span in enumerate(sample.labels, start=1):
        legend.append(f"^{index} ", style=f"bold {terminal_color(span)}")
        legend.append(f"{span_type(span)}: {span.text!r}\n")
    if not sample.labels:
        legend.append("a clean sample: no hallucinated spans", style="dim")
    body = Group(
        Text.assemble(("question ", "bold"), sample.question),
        Text.assemble(("context  ", "bold"), (excerpt(sample.context), "dim")),
        Text.assemble(("answer   ", "bold"), answer),
        legend,
    )
    title = f"#{number} {sample.split} · {sample.dataset} · {', '.join(sorted(_categories(sample)))}"
    return Panel(body, title=title, title_align="left")


# --- HTML ------------------------------------------------------------------------------------


def sample_html(sample: HallucinationSample) -> str:
    """One sample as an HTML card (styles from `PAGE_STYLE`): spans marked, their type on hover."""
    marked = []
    for text, index in answer_pieces(sample):
        if index is None:
            marked.append(html.escape(text))
            continue
        span = sample.labels[index]
        kind = html.escape(span_type(span), quote=True)
        color = CATEGORY_STYLES.get(span.category, OTHER_STYLE)[1]
        marked.append(
            f'<mark style="background:{color}" data-type="{kind}" title="{kind}">{html.escape(text)}'
            f"<sup>{index + 1}</sup></mark>"
        )
    categories = " ".join(sorted(_categories(sample)))
    return (
        f'<article class="sample" data-split="{html.escape(sample.split)}" '
        f'data-categories="{html.escape(categories)}">'
        f'<p class="meta">{html.escape(f"{sample.split} · {sample.dataset} · {categories}")}</p>'
        f"<p><b>question</b> {html.escape(sample.question)}</p>"
        f"<details><summary><b>context</b></summary><pre>{html.escape(sample.context)}</pre></details>"
        f'<p class="answer"><b>answer</b> {"".join(marked)}</p></article>'
    )


PAGE_STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; margin: 2em auto; max-width: 60em; color: #222; }
.sample { border: 1px solid #ddd; border-radius: 6px; padding: 0.6em 1em; margin: 1em 0; }
.meta { color: #777; font-size: 0.85em; margin: 0; }
.answer { white-space: pre-wrap; }
pre { white-space: pre-wrap; background: #f6f6f6; padding: 0.5em; }
mark { position: relative; padding: 0 0.15em; border-radius: 3px; }
mark:hover::after { content: attr(data-type); position: absolute; left: 0; top: 1.6em; z-index: 1;
  background: #222; color: #fff; font-size: 0.8em; padding: 0.2em 0.5em; border-radius: 3px;
  white-space: nowrap; }
.filters { position: sticky; top: 0; background: #fff; padding: 0.5em 0; }
.hidden { display: none; }
"""

PAGE_SCRIPT = """
const split = document.getElementById("split"), category = document.getElementById("category");
function apply() {
  let shown = 0;
  for (const card of document.querySelectorAll(".sample")) {
    const ok = (!split.value || card.dataset.split === split.value) &&
      (!category.value || card.dataset.categories.split(" ").includes(category.value));
    card.classList.toggle("hidden", !ok);
    shown += ok;
  }
  document.getElementById("shown").textContent = shown;
}
const wanted = new URLSearchParams(location.hash.slice(1));
split.value = wanted.get("split") || ""; category.value = wanted.get("category") || "";
split.onchange = category.onchange = apply;
apply();
"""


def page_html(samples: Iterable[HallucinationSample], title: str) -> str:
    """A self-contained page (no external file or script) of samples, filterable by split and category."""
    seen, cards = _Seen(), []
    for sample in samples:
        seen.add(sample)
        cards.append(sample_html(sample))
    head, tail = _page_frame(title, seen)
    return head + "".join(cards) + tail


def write_page(file: Path, samples: Iterable[HallucinationSample], title: Callable[[int], str]) -> int:
    """`page_html` written to ``file`` a sample at a time (its cards first to a scratch file
    beside it, since the head counts them); ``title``: the page's title for the number of
    samples. Returns that number."""
    seen = _Seen()
    with tempfile.TemporaryFile("w+", encoding="utf-8", dir=file.parent) as cards:
        for sample in samples:
            seen.add(sample)
            cards.write(sample_html(sample))
        cards.seek(0)
        head, tail = _page_frame(title(seen.count), seen)
        with file.open("w", encoding="utf-8") as page:
            page.write(head)
            shutil.copyfileobj(cards, page)
            page.write(tail)
    return seen.count


class _Seen:
    """What a page's head says of its samples: how many, and their splits and categories."""

    def __init__(self) -> None:
        self.count = 0
        self.splits: set[str] = set()
        self.categories: set[str] = set()

    def add(self, sample: HallucinationSample) -> None:
        self.count += 1
        self.splits.add(sample.split)
        self.categories |= _categories(sample)


def _page_frame(title: str, samples: _Seen) -> tuple[str, str]:
    """The page before its cards and after them."""

    def options(values: list[str]) -> str:
        return '<option value="">all</option>' + "".join(
            f'<option value="{html.escape(v)}">{html.escape(v)}</option>' for v in values
        )

    legend = " ".join(
        f'<mark style="background:{color}">{html.escape(name)}</mark>'
        for name, (_, color) in CATEGORY_STYLES.items()
    )
    head = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{PAGE_STYLE}</style></head><body><h1>{html.escape(title)}</h1>"
        f'<div class="filters">split <select id="split">{options(sorted(samples.splits))}</select> '
        f'category <select id="category">{options(sorted(samples.categories))}</select> '
        f'<span id="shown">{samples.count}</span> of {samples.count} shown · {legend}</div>'
    )
    return head, f"<script>{PAGE_SCRIPT}</script></body></html>"
