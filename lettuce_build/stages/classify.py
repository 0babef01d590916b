"""Classify a natural (untyped) hallucinated span into the taxonomy: the inverse of injection.

The span is marked inside the answer; the model returns a category among the
three injectable ones and, optionally, a subcategory. It never edits text or
invents spans. An out-of-set subcategory becomes null. One work item per span:
`explode_spans` makes them, `gather_labels` puts an item back together and
fails the whole item if any of its spans failed (no label is ever guessed).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal

from datasets import Value
from pydantic import BaseModel

from lettuce_build.core.taxonomy import (
    CATEGORY_DEFINITIONS,
    DEFAULT_TAXONOMY,
    INJECTABLE_CATEGORIES,
    Taxonomy,
)
from lettuce_build.engine.stage import ParseFailure, Sampling, Stage, length_checked
from lettuce_build.llm.protocol import ChatRequest

SPAN_KEY_SEPARATOR = "::span"


class SpanClass(BaseModel):
    category: Literal["contradiction", "unsupported_addition", "fabricated_reference"]
    # checked after decoding, never in the schema (see `length_checked`)
    subcategory: Annotated[str, length_checked(max_chars=40)] | None = None


def mark_span(answer: str, start: int, end: int) -> str:
    return f"{answer[:start]}[[{answer[start:end]}]]{answer[end:]}"


class ClassifyStage(Stage):
    """The taxonomy category (and subcategory) of one natural span of an answer."""

    name = "classify"
    prompt = "classify"

    response_model = SpanClass
    retries_failures_on_rerun = True  # an item with an unclassified span is tried afresh next run
    requires = ("context", "answer", "span_start", "span_end")
    outputs = {"span_category": Value("string"), "span_subcategory": Value("string")}
    sampling = Sampling(temperature=0.0, max_tokens=128)

    def __init__(self, taxonomy: Taxonomy = DEFAULT_TAXONOMY, context_chars: int = 6000) -> None:
        self.taxonomy = taxonomy
        self.context_chars = context_chars

    def render(self, item: dict[str, Any]) -> ChatRequest:
        start, end = item["span_start"], item["span_end"]
        system, user = self.template.render(
            categories={c: CATEGORY_DEFINITIONS[c] for c in INJECTABLE_CATEGORIES},
            subcategories={c: self.taxonomy.subcategories[c] for c in INJECTABLE_CATEGORIES},
            context=item["context"][: self.context_chars],
            marked_answer=mark_span(item["answer"], start, end),
            span_text=item["answer"][start:end],
        )
        return self.request(system, user)

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        if response.category not in INJECTABLE_CATEGORIES:  # defensive: a server may ignore the schema
            raise ParseFailure("invalid_category", f"{response.category!r}")
        subcategory = response.subcategory
        if subcategory is not None and not self.taxonomy.is_valid(response.category, subcategory):
            subcategory = None
        return {"span_category": response.category, "span_subcategory": subcategory}


def explode_spans(items: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One classify work item per (item, span); items carry ``key``, ``context``, ``answer``, ``spans``."""
    rows = []
    for item in items:
        for index, (start, end) in enumerate(item["spans"]):
            rows.append(
                {
                    "key": f"{item['key']}{SPAN_KEY_SEPARATOR}{index}",
                    "item_key": item["key"],
                    "span_index": index,
                    "context": item["context"],
                    "answer": item["answer"],
                    "span_start": start,
                    "span_end": end,
                }
            )
    return rows


def gather_labels(
    span_rows: Iterable[dict[str, Any]], failed_keys: Iterable[str], span_counts: dict[str, int]
) -> tuple[dict[str, list[dict[str, Any]]], set[str]]:
    """Labels per item key, in span order; and the item keys with any unclassified span."""
    failed_items = {key.split(SPAN_KEY_SEPARATOR)[0] for key in failed_keys}
    labels: dict[str, list[dict[str, Any]]] = {}
    for row in span_rows:
        labels.setdefault(row["item_key"], []).append(row)
    complete = {}
    for key, rows in labels.items():
        if key in failed_items or len(rows) != span_counts.get(key, -1):
            failed_items.add(key)
            continue
        complete[key] = sorted(rows, key=lambda r: r["span_index"])
    return complete, failed_items
