"""The rows `lettuce-build audit` reads, from any output: a build folder, a saved dataset, parquet
or JSONL in the sample schema, or an export in another layout (LettuceDetect's and the others of
lettuce_build.formats), each row it cannot read named in its place."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from lettuce_build.core.errors import OutputError
from lettuce_build.core.schema import Violation, read_sample
from lettuce_build.core.tables import iter_records
from lettuce_build.formats import Foreign, format_of
from lettuce_build.view.validate import RawRow, read_rows


class Row(BaseModel):
    """What the report reads of a row, in either format."""

    where: str
    #: the row's work item key where it records one (lettuce-build's rows), else where it is
    key: str = ""
    context: str
    question: str
    answer: str
    split: str = "train"
    dataset: str = "(unknown)"
    modality: str = "prose"
    #: the language the row is written in: its sentences are cut by that language's rules
    language: str = "en"
    #: (text, category) of each labelled span
    spans: list[tuple[str, str]] = Field(default_factory=list)
    #: (start, end) of each labelled span in the answer
    offsets: list[tuple[int, int]] = Field(default_factory=list)
    #: each labelled span's subcategory (its category where it has none)
    kinds: list[str] = Field(default_factory=list)
    #: what a detector reads before the answer
    prompt: str = ""
    category: str | None = None
    #: (original, replacement) of each applied edit, when the row records them (lettuce-build's)
    edits: list[tuple[str, str]] = Field(default_factory=list)


class Unreadable(BaseModel):
    """A row the report could not read: where, which field, and what was expected."""

    where: str
    field: str
    reason: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.field}: {self.reason} - {self.message}"


def foreign_row(found: Foreign) -> Row | Unreadable:
    """A record of an export (LettuceDetect's format and the others, see lettuce_build.formats)
    as the report reads it: its context (LettuceDetect's prompt where it has none) is what the
    answer is checked against."""
    if found.row is None:
        problem = found.problem
        assert problem is not None
        return Unreadable(
            where=found.where, field=problem.field, reason=problem.reason, message=problem.message
        )
    row = found.row
    given = row.get("metadata")
    metadata: dict[str, Any] = given if isinstance(given, dict) else {}
    return Row(
        where=found.where,
        context=str(row.get("context") or ""),
        question=str(row.get("question") or ""),
        answer=row["answer"],
        split=str(row.get("split") or "train"),
        dataset=str(row.get("dataset") or "(unknown)"),
        modality=str(row.get("context_modality") or "prose"),
        language=str(row.get("language") or "en"),
        spans=[(span["text"], span["category"]) for span in row["labels"]],
        offsets=[(span["start"], span["end"]) for span in row["labels"]],
        kinds=[str(span.get("subcategory") or span["category"]) for span in row["labels"]],
        prompt=str(row.get("prompt") or ""),
        category=(row.get("category") or "hallucinated") if row["labels"] else None,
        edits=edits_of(metadata),
        key=str(metadata.get("key") or found.where),
    )


def edits_of(metadata: dict[str, Any]) -> list[tuple[str, str]]:
    """(original, replacement) of each edit a row's metadata records (lettuce-build's rows)."""
    applied = (metadata.get("injection") or {}).get("applied", [])
    return [(str(e.get("original", "")), str(e.get("hallucinated", ""))) for e in applied]


#: what is read of a row before it is made a `Row`: a record of an export, or one of our rows
Record = Foreign | RawRow


def records_of(path: Path) -> Iterator[Record]:
    """The records of any output the report reads (a build folder: its published dataset/ only;
    an export of another layout: read back as our rows), in order."""
    if path.is_file() and path.suffix == ".json":
        first = next(iter_records(path), None)
        if first is not None and first.reason == "not_json":  # the whole file: nothing to report on
            raise OutputError(f"{path}: {first.message}")
    layout = format_of(path)
    if layout is not None and layout.name != "jsonl":
        yield from layout.read(path)
        return
    yield from read_rows(path / "dataset" if (path / "dataset").is_dir() else path)


def rows_of(path: Path) -> Iterator[Row | Unreadable]:
    """The rows of any output the report reads, each row it cannot read named in its place."""
    return map(row_of, records_of(path))


def row_of(record: Record) -> Row | Unreadable:
    """A record as the report reads it (made where it is checked: in a pool's worker at scale)."""
    if isinstance(record, Foreign):
        return foreign_row(record)
    if record.error is not None:
        v = record.error
        return Unreadable(where=record.where, field=v.field, reason=v.reason, message=v.message)
    sample = read_sample(record.data or {})
    if isinstance(sample, Violation):
        v = sample
        return Unreadable(where=record.where, field=v.field, reason=v.reason, message=v.message)
    return Row(
        where=record.where,
        context=sample.context,
        question=sample.question,
        answer=sample.answer,
        split=sample.split,
        dataset=sample.dataset,
        modality=sample.context_modality,
        language=sample.language,
        spans=[(span.text, span.category) for span in sample.labels],
        offsets=[(span.start, span.end) for span in sample.labels],
        kinds=[span.subcategory or span.category for span in sample.labels],
        prompt=sample.prompt,
        category=sample.category,
        edits=edits_of(sample.metadata),
        key=str(sample.metadata.get("key") or record.where),
    )
