"""The benchmarks a build is kept apart from (``--decontaminate-against``): a local file or
folder, or a Hub id, in any layout (our schema, LettuceDetect's, RAGTruth's, PsiloQA's, or
SWE-bench instances). Every text a benchmark holds (any string field, nested ones too; patches
as code) goes into an n-gram index (core/ngrams.py); a SWE-bench file also gives its instance
ids and repositories, which a source of SWE-bench rows checks before it clones anything."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lettuce_build.core.errors import SourceError, TableError
from lettuce_build.core.ngrams import NgramIndex
from lettuce_build.core.tables import read_input, read_table

#: fields whose text is code (SWE-bench's patches)
CODE_FIELDS = frozenset({"patch", "test_patch"})
#: the files of a folder read as a benchmark
_TABLES = ("*.parquet", "*.jsonl", "*.json")


class Benchmark:
    """What a benchmark holds: its texts' n-grams, and for SWE-bench its instances and repositories."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.ngrams = NgramIndex()
        self.instances: set[str] = set()
        self.repos: set[str] = set()
        self.rows = 0

    @staticmethod
    def name_of(source: str) -> str:
        """How a benchmark is named in skip reasons and cards: a local one by its file name."""
        return Path(source).name if Path(source).exists() else source

    def add(self, row: dict[str, Any]) -> None:
        self.rows += 1
        if "instance_id" in row and "problem_statement" in row:
            self.instances.add(str(row["instance_id"]))
            if row.get("repo"):
                self.repos.add(str(row["repo"]))
        for field, text in _texts(row):
            if field in CODE_FIELDS:
                for side in diff_sides(text):
                    self.ngrams.add(side, "code")
            else:
                self.ngrams.add(text, "prose")


def diff_sides(patch: str) -> tuple[str, str]:
    """A unified diff's code before and after it, its markers dropped: the runs of code a row
    may quote (a "+" or "-" at each line would break every run that crosses a changed line)."""
    before, after = [], []
    for line in patch.splitlines():
        if line.startswith(("+++", "---", "@@", "diff ", "index ")):
            continue
        marker, code = line[:1], line[1:]
        if marker in (" ", "-"):
            before.append(code)
        if marker in (" ", "+"):
            after.append(code)
    return "\n".join(before), "\n".join(after)


def _texts(value: Any, field: str = "") -> Iterator[tuple[str, str]]:
    """(field, text) of every string a row holds, in nested objects and lists too."""
    if isinstance(value, str):
        yield field, value
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield from _texts(inner, str(key))
    elif isinstance(value, list):
        for inner in value:
            yield from _texts(inner, field)


def _rows(source: str) -> Iterator[dict[str, Any]]:
    path = Path(source).expanduser()
    if path.is_dir():
        if (path / "dataset").is_dir():  # a build folder: its published rows
            path = path / "dataset"
        if (path / "dataset_dict.json").exists() or (path / "state.json").exists():
            from datasets import load_from_disk

            saved = load_from_disk(str(path))
            for split in saved.values() if hasattr(saved, "values") else [saved]:
                yield from split
            return
        files = sorted(f for pattern in _TABLES for f in path.rglob(pattern))
        if not files:
            raise SourceError(f"--decontaminate-against {source}: no dataset, parquet or JSONL files inside")
        for file in files:
            yield from (row for _, row in read_table(file))
        return
    yield from read_input(source)


@functools.lru_cache(maxsize=8)  # a source (instance ids) and the screen read the same benchmark
def read_benchmark(source: str) -> Benchmark:
    """A benchmark's texts, ids and repositories, read once; one it cannot read is refused in one
    line (a decontamination that silently checked nothing would publish its test rows)."""
    benchmark = Benchmark(Benchmark.name_of(source))
    try:
        for row in _rows(source):
            benchmark.add(row)
    except TableError as err:
        raise SourceError(f"--decontaminate-against {source}: {err}") from err
    if not benchmark.rows:
        raise SourceError(f"--decontaminate-against {source}: it holds no rows")
    return benchmark


def kept_out_instances(sources: list[str], repos: bool) -> dict[str, str]:
    """SWE-bench instance ids (and, with ``repos``, repository names) of the benchmarks, each
    with the benchmark's name: the rows a SWE-bench source skips before cloning anything."""
    found: dict[str, str] = {}
    for source in sources:
        benchmark = read_benchmark(source)
        for name in benchmark.instances | (benchmark.repos if repos else set()):
            found.setdefault(name, benchmark.name)
    return found
