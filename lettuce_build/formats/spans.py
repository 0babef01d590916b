"""One row per hallucinated span, for a classifier of span types (a taxonomy head): the span,
its offsets in the answer, its category and subcategory, with the answer, question and context
it stands in. Clean answers have no span and no row: reading the export back gives the
hallucinated samples, each with all of its spans."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lettuce_build.core.schema import HallucinationSample, normal_split
from lettuce_build.formats import base

#: what a span row repeats of its sample (the sample's own fields)
SAMPLE_FIELDS = ("prompt", "context", "question", "answer", "task_type", "language", "context_modality")


class SpansFormat(base.JsonLinesFormat):
    name = "spans"
    summary = "one row per hallucinated span (text, offsets, category, subcategory, and its sample)"

    def records_of(self, number: int, sample: HallucinationSample) -> list[dict[str, Any]]:
        shared = {field: getattr(sample, field) for field in SAMPLE_FIELDS}
        return [
            {
                "sample": number,
                "span_index": index,
                **span.model_dump(),
                "split": sample.split,
                "dataset": sample.dataset,
                **shared,
                "metadata": sample.metadata,
            }
            for index, span in enumerate(sample.labels)
        ]

    def read(self, path: Path) -> Iterator[base.Foreign]:
        group: list[tuple[str, dict[str, Any]]] = []
        for where, record in base.records(path):
            if not isinstance(record, dict):
                yield base.Foreign(where, problem=record)
                continue
            if group and record.get("sample") != group[0][1].get("sample"):
                yield _sample(group)
                group = []
            group.append((where, record))
        if group:
            yield _sample(group)

    def recognises(self, record: dict[str, Any]) -> bool:
        return {"span_index", "start", "end", "answer"} <= set(record)


def _sample(group: list[tuple[str, dict[str, Any]]]) -> base.Foreign:
    """A sample from the rows of its spans (consecutive, as the export writes them)."""
    where, first = group[0]
    if not isinstance(first.get("answer"), str):
        kind = type(first.get("answer")).__name__
        return base.bad(where, "answer", "not_a_string", f"expected a string, got {kind}")
    spans = base.checked_spans(first["answer"], [record for _, record in group], where)
    if isinstance(spans, base.Foreign):
        return spans
    return base.Foreign(
        where,
        row=base.categorised(
            {
                **{field: first.get(field) for field in SAMPLE_FIELDS},
                "labels": spans,
                "split": normal_split(first.get("split")),
                "dataset": str(first.get("dataset") or "(unknown)"),
                "category": None,
                "metadata": first.get("metadata") or {},
            }
        ),
    )
