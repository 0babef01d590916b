"""Validating an output (`lettuce-build validate`): read every row of a folder, parquet, JSONL
or JSON file and check it.

Nothing stops at the first problem: every unreadable line, every row that does
not fit the schema and every broken invariant is reported with where it is
(file and row or line), which field, and what was expected.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from datasets import Features
from pydantic import BaseModel, Field, ValidationError

from lettuce_build.builds.storage.output import read_saved
from lettuce_build.core.errors import CorruptOutput, OutputError
from lettuce_build.core.row_bar import reading
from lettuce_build.core.schema import COLUMNS, HallucinationSample, Violation, check_sample, row_to_sample
from lettuce_build.core.tables import PARQUET_BATCH_ROWS, iter_records
from lettuce_build.core.taxonomy import DEFAULT_TAXONOMY, Taxonomy
from lettuce_build.formats import ExportFormat, format_of


class Problem(BaseModel):
    where: str
    violation: Violation

    def __str__(self) -> str:
        v = self.violation
        return f"{self.where}: {v.field}: {v.reason} - {v.message}"


#: problems kept to be shown (all are counted): a file whose every row is wrong would otherwise
#: hold a problem per row
MAX_PROBLEMS_KEPT = 1_000


class ValidationReport(BaseModel):
    rows: int = 0
    by_split: Counter[str] = Field(default_factory=Counter)
    by_category: Counter[str] = Field(default_factory=Counter)
    by_subcategory: Counter[str] = Field(default_factory=Counter)
    #: the first `MAX_PROBLEMS_KEPT` problems
    problems: list[Problem] = Field(default_factory=list)
    problem_count: int = 0

    @property
    def ok(self) -> bool:
        return not self.problem_count

    def add(self, problems: Iterable[Problem]) -> None:
        for found in problems:
            self.problem_count += 1
            if len(self.problems) < MAX_PROBLEMS_KEPT:
                self.problems.append(found)


class RawRow(BaseModel):
    """A row as read: where it is, and its data decoded by its features, or why it is none."""

    where: str
    row: int
    data: dict[str, Any] | None = None
    error: Violation | None = None


def _missing_columns(columns: list[str], source: Path, row: int | None = None) -> Violation | None:
    missing = [c for c in COLUMNS if c not in columns]
    if not missing:
        return None
    return Violation(
        row=row,
        field=", ".join(missing) if len(missing) <= 3 else "(columns)",
        reason="missing_column",
        message=f"{source} lacks column(s) {missing}; expected columns: {list(COLUMNS)}",
    )


def _record_rows(path: Path) -> Iterator[RawRow]:
    """Rows of a JSONL file, or of a JSON file holding an array of rows."""
    for line in iter_records(path):
        index = line.number - 1
        where = f"{path}:{line.number} (row {index})"
        if line.row is None:
            assert line.reason is not None and line.message is not None
            error = Violation(
                row=index, field="(line)", reason=line.reason, message=f"line {line.number}: {line.message}"
            )
            yield RawRow(where=where, row=index, error=error)
        elif missing := _missing_columns(list(line.row), path, index):
            yield RawRow(where=where, row=index, error=missing)
        else:
            yield RawRow(where=where, row=index, data=line.row)


def _unreadable(path: Path, err: Exception) -> RawRow:
    message = f"not a readable parquet file (truncated or corrupt?): {err}"
    error = Violation(field="(file)", reason="unreadable", message=message)
    return RawRow(where=str(path), row=-1, error=error)


def _parquet_rows(path: Path) -> Iterator[RawRow]:
    """A parquet file's rows, read a batch at a time."""
    try:
        file = pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as err:
        yield _unreadable(path, err)
        return
    if missing := _missing_columns(file.schema_arrow.names, path):
        yield RawRow(where=str(path), row=-1, error=missing)
        return
    yield from _batch_rows(file.iter_batches(batch_size=PARQUET_BATCH_ROWS), file.schema_arrow, str(path))


def _batch_rows(batches: Iterator[pa.RecordBatch], schema: pa.Schema, where: str) -> Iterator[RawRow]:
    """The rows of record batches, decoded by the features of their schema; a batch that cannot
    be read ends the file with a problem that says so."""
    features = Features.from_arrow_schema(schema)
    index = 0
    try:
        for batch in batches:
            for row in batch.to_pylist():
                yield RawRow(where=f"{where} row {index}", row=index, data=features.decode_example(row))
                index += 1
    except (OSError, pa.ArrowException) as err:
        yield _unreadable(Path(where), err)


def saved_rows(path: Path, only: str | None = None) -> Iterator[RawRow]:
    """The rows of a folder `save_to_disk` wrote (of its split ``only``, if given), read from
    its files a batch at a time (a dataset that selects rows of its files is read through
    `datasets`), on a bar past a couple of seconds."""
    return reading(_saved_rows(path, only), total=_saved_count(path, only), what=f"reading {path}")


def _saved_count(path: Path, only: str | None = None) -> int | None:
    try:
        loaded = read_saved(path)
    except CorruptOutput:
        return None  # the reading names it
    splits = loaded.items() if hasattr(loaded, "items") else [("data", loaded)]
    return sum(dataset.num_rows for split, dataset in splits if only in (None, split))


def _saved_rows(path: Path, only: str | None = None) -> Iterator[RawRow]:
    loaded = read_saved(path)
    splits = loaded.items() if hasattr(loaded, "items") else [("data", loaded)]
    for split, dataset in splits:
        if only is not None and split != only:
            continue
        where = f"{path}/{split}"
        if missing := _missing_columns(dataset.column_names, path / split):
            yield RawRow(where=where, row=-1, error=missing)
            continue
        if dataset._indices is not None:
            for index, row in enumerate(dataset):
                yield RawRow(where=f"{where} row {index}", row=index, data=row)
            continue
        files = [Path(entry["filename"]) for entry in dataset.cache_files]
        yield from _batch_rows(_stream_batches(files), dataset.data.schema, where)


def _stream_batches(files: list[Path]) -> Iterator[pa.RecordBatch]:
    """The record batches of arrow stream files, read (not mapped: a mapped file's pages would
    count as the process's memory), one at a time."""
    for path in files:
        with pa.OSFile(str(path)) as source:
            yield from pa.ipc.open_stream(source)


def _export_rows(layout: ExportFormat, path: Path) -> Iterator[RawRow]:
    """An export of another tool's layout, read back as our rows (see lettuce_build.formats)."""
    for index, found in enumerate(layout.read(path)):
        yield RawRow(where=found.where, row=index, data=found.row, error=found.problem)


def read_rows(path: str | Path) -> Iterator[RawRow]:
    """Rows of an output folder (save_to_disk or Hub-style), a parquet file, a JSONL or JSON file
    of our rows, or an export (`lettuce-build export`) of another layout; on a bar past a couple
    of seconds."""
    path = Path(path)
    return reading(_read_rows(path), total=_row_count(path), what=f"reading {path}")


def _row_count(path: Path) -> int | None:
    """How many rows `read_rows` will read, when the files say so without being read (a saved
    dataset, parquet); None otherwise."""
    if (path / "dataset_dict.json").exists() or (path / "state.json").exists():
        return _saved_count(path)
    if path.is_dir() and ((path / "dataset").is_dir() or (path / "hub").is_dir()):
        counts = [_row_count(path / part) for part in ("dataset", "hub") if (path / part).is_dir()]
        return None if None in counts else sum(c for c in counts if c is not None)
    files = sorted(path.rglob("*.parquet")) if path.is_dir() else [path] if path.suffix == ".parquet" else []
    try:
        return sum(pq.ParquetFile(file).metadata.num_rows for file in files) if files else None
    except (OSError, pa.ArrowException):
        return None  # the reading names it


def _read_rows(path: Path) -> Iterator[RawRow]:
    if not path.exists():
        raise OutputError(f"{path}: no such file or folder")
    layout = format_of(path)
    if layout is not None and layout.name != "jsonl":
        yield from _export_rows(layout, path)
        return
    if path.is_dir():
        if (path / "dataset_dict.json").exists() or (path / "state.json").exists():
            yield from _saved_rows(path)
        elif (path / "dataset").is_dir() or (path / "hub").is_dir():
            # a build folder: both of its outputs, since the Hub's parquet could differ from dataset/
            for part in ("dataset", "hub"):
                if (path / part).is_dir():
                    yield from _read_rows(path / part)
        else:
            files = sorted(path.rglob("*.parquet"))
            if not files:
                raise OutputError(f"{path}: no saved dataset and no parquet files inside")
            for file in files:
                yield from _parquet_rows(file)
    elif path.suffix == ".parquet":
        yield from _parquet_rows(path)
    elif path.suffix in {".jsonl", ".json"}:
        yield from _record_rows(path)
    else:
        raise OutputError(f"{path}: expected a folder, a .parquet, a .jsonl or a .json file")


def _schema_violations(err: ValidationError, row: int) -> list[Violation]:
    return [
        Violation(
            row=row,
            field=".".join(str(part) for part in e["loc"]) or "(row)",
            reason=f"schema_{e['type']}",
            message=e["msg"],
        )
        for e in err.errors()
    ]


def validate(
    path: str | Path, taxonomy: Taxonomy = DEFAULT_TAXONOMY, datasets: frozenset[str] | None = None
) -> ValidationReport:
    """Check every row of an output; count rows per split, category and subcategory.

    ``datasets``: the allowed values of the ``dataset`` column (default: every source's name).
    A build folder's ``dataset/`` and ``hub/`` are both checked and must hold the same rows; an
    output with no rows at all is a problem too.
    """
    if datasets is None:
        from lettuce_build.sources.registry import SOURCES

        datasets = frozenset(cls.dataset_name for cls in SOURCES.values())
    report = ValidationReport()
    per_part: Counter[str] = Counter()

    def problem(where: str, field: str, *, reason: str, message: str, row: int | None = None) -> None:
        violation = Violation(row=row, field=field, reason=reason, message=message)
        report.add([Problem(where=where, violation=violation)])

    for raw in read_rows(path):
        part = _part(Path(path), raw.where)
        per_part[part] += raw.error is None
        if raw.error is not None:
            report.add([Problem(where=raw.where, violation=raw.error)])
            continue
        assert raw.data is not None
        counted = part == next(iter(per_part))  # counts describe the first output (dataset/)
        report.rows += counted
        try:
            sample: HallucinationSample = row_to_sample(raw.data)
        except ValidationError as err:
            report.add(Problem(where=raw.where, violation=v) for v in _schema_violations(err, raw.row))
            continue
        except (json.JSONDecodeError, ValueError) as err:
            problem(raw.where, "metadata/category", reason="undecodable", message=str(err), row=raw.row)
            continue
        if counted:
            report.by_split[sample.split] += 1
            report.by_category[sample.category or "(clean)"] += 1
            for span in sample.labels:
                report.by_subcategory[f"{span.category}/{span.subcategory or '-'}"] += 1
        report.add(Problem(where=raw.where, violation=v) for v in check_sample(sample, taxonomy, raw.row))
        if sample.dataset not in datasets:
            known = f"{sample.dataset!r} is not a known dataset; known: {sorted(datasets)}"
            problem(raw.where, "dataset", reason="unknown_dataset", message=known, row=raw.row)
    if not report.rows and report.ok:
        problem(str(path), "(rows)", reason="no_rows", message="the output holds no rows")
    if len(per_part) > 1 and len(set(per_part.values())) > 1:
        differ = f"dataset/ and hub/ hold different numbers of rows: {dict(per_part)}"
        problem(str(path), "(rows)", reason="outputs_differ", message=differ)
    return report


def _part(root: Path, where: str) -> str:
    """Which output of a build folder a row came from (``dataset`` or ``hub``), else the path."""
    for part in ("dataset", "hub"):
        if where.startswith(str(root / part)):
            return part
    return str(root)
