"""What every export format is: a writer of our samples in another tool's layout, and a reader
that turns that layout back into our rows, so that `validate` and `audit` check an export with
the same counts as the build it came from."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

from pydantic import BaseModel, Field

from lettuce_build.core.schema import HallucinationSample, Violation
from lettuce_build.core.tables import iter_records
from lettuce_build.core.taxonomy import sample_category


class Foreign(NamedTuple):
    """One record of an export, read back: a row in our schema (metadata an object, the category
    by name), or what is wrong with it."""

    where: str
    row: dict[str, Any] | None = None
    problem: Violation | None = None


class ExportCounts(BaseModel):
    """What an export wrote."""

    samples: int = 0
    spans: int = 0
    #: records written (a spans export writes one per span)
    records: int = 0
    by_split: Counter[str] = Field(default_factory=Counter)
    #: what a reader of the format should know (one line each)
    notes: list[str] = Field(default_factory=list)

    def add(self, sample: HallucinationSample, records: int = 1) -> None:
        self.samples += 1
        self.spans += len(sample.labels)
        self.records += records
        self.by_split[sample.split] += 1


class ExportFormat(ABC):
    name: ClassVar[str]
    #: one line for `export --help`
    summary: ClassVar[str]
    #: the format is a folder of files (else one file)
    folder: ClassVar[bool] = False

    @abstractmethod
    def write(self, samples: Iterable[HallucinationSample], out: Path) -> ExportCounts:
        """Write ``samples`` to ``out`` (a file, or a folder when `folder`)."""

    @abstractmethod
    def read(self, path: Path) -> Iterator[Foreign]:
        """The export at ``path`` as our rows, every record it cannot read named in its place."""

    def recognises(self, record: dict[str, Any]) -> bool:
        """Whether a record (the first of a file) is of this format; folder formats: never."""
        return False


class JsonLinesFormat(ExportFormat):
    """A format of JSON lines: each sample written as the records `records_of` makes of it (none:
    the sample is not in the export, and not counted)."""

    @abstractmethod
    def records_of(self, number: int, sample: HallucinationSample) -> list[dict[str, Any]]:
        """The records of the ``number``-th sample."""

    def write(self, samples: Iterable[HallucinationSample], out: Path) -> ExportCounts:
        counts = ExportCounts()
        with out.open("w", encoding="utf-8") as file:
            for number, sample in enumerate(samples):
                if written := self.records_of(number, sample):
                    file.writelines(json_line(record) for record in written)
                    counts.add(sample, records=len(written))
        return counts


def records(path: Path) -> Iterator[tuple[str, dict[str, Any] | Violation]]:
    """(where, record) of each record of a JSON array or JSONL file; one that is no JSON object
    is a `Violation` in its place."""
    for line in iter_records(path):
        where = f"{path}:{line.number}"
        if line.row is None:
            yield where, Violation(field="(line)", reason=str(line.reason), message=str(line.message))
        else:
            yield where, line.row


def bad(where: str, field: str, reason: str, message: str) -> Foreign:
    return Foreign(where, problem=Violation(field=field, reason=reason, message=message))


def json_line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"


def categorised(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with its sample-level category and subcategory, from its spans when it has none."""
    if row.get("category") is None:
        found = sample_category([(span["category"], span["subcategory"]) for span in row["labels"]])
        row["category"], row["subcategory"] = found.category, found.subcategory
    return row


def checked_spans(answer: str, labels: Any, where: str) -> list[dict[str, Any]] | Foreign:
    """A record's spans as ours (``text`` taken from the answer), or what is wrong with them:
    offsets that are no integers or fall outside the answer."""
    if not isinstance(labels, list):
        return bad(where, "labels", "not_a_list", f"expected a list of spans, got {type(labels).__name__}")
    spans = []
    for i, label in enumerate(labels):
        start, end = (label.get("start"), label.get("end")) if isinstance(label, dict) else (None, None)
        if not isinstance(start, int) or not isinstance(end, int) or isinstance(start, bool):
            message = "expected an object with integer start and end"
            return bad(where, f"labels[{i}]", "malformed_span", message)
        if not 0 <= start < end <= len(answer):
            message = f"[{start}, {end}) must satisfy 0 <= start < end <= {len(answer)} (len(answer))"
            return bad(where, f"labels[{i}]", "span_out_of_range", message)
        category = label.get("category") or label.get("label") or ""
        spans.append(
            {
                "start": start,
                "end": end,
                "text": answer[start:end],
                "label": str(label.get("label") or category),
                "category": str(category),
                "subcategory": label.get("subcategory"),
            }
        )
    return spans
