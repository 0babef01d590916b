"""`lettuce-build dedup`: any data in our schema with one row of each near-duplicate cluster kept
(core/near_duplicates.py: context and answer both near-duplicates), written as a dataset with
the report of what went; and the contexts a collection's builds hold in two splits, which `push`
refuses."""

from __future__ import annotations

from pathlib import Path

from datasets import Dataset, DatasetDict
from pydantic import BaseModel, Field

from lettuce_build.builds.storage.output import write_output
from lettuce_build.core.errors import OutputError
from lettuce_build.core.near_duplicates import THRESHOLD, DuplicateReport, NearDuplicates, Pair
from lettuce_build.core.schema import FEATURES, HallucinationSample, Violation, read_sample, sample_to_row
from lettuce_build.core.tables import write_atomic
from lettuce_build.view.validate import read_rows

#: the report written beside the deduplicated dataset
REPORT_FILE = "dedup.json"


class DedupResult(BaseModel):
    """What `dedup` read, kept and removed, and the rows it could not read (named, not copied)."""

    read: int
    kept: int
    duplicates: DuplicateReport
    removed: list[str] = Field(default_factory=list)
    unreadable: list[str] = Field(default_factory=list)

    def lines(self, out: Path) -> list[str]:
        found = [f"{self.read} rows read, {self.kept} kept -> {out}"]
        found += self.duplicates.lines()
        if self.unreadable:
            found.append(f"{len(self.unreadable)} rows could not be read and were left out, e.g.:")
            found += [f"  {where}" for where in self.unreadable[:5]]
        return found


def _source(path: Path) -> Path:
    """A build folder's published dataset (its hub/ copy holds the same rows), else the path."""
    return path / "dataset" if (path / "dataset").is_dir() else path


def dedup(path: Path, out: Path, threshold: float = THRESHOLD) -> DedupResult:
    """Keep one row of each near-duplicate cluster of ``path`` (the test copy where a cluster
    crosses splits, else the first key); write the rest to ``out`` (``dataset/`` and ``hub/``)
    with ``dedup.json``."""
    if out.resolve() == path.resolve():
        raise OutputError(f"{out}: dedup writes a new dataset; give an --out other than its input")
    near = NearDuplicates(threshold)
    samples: list[tuple[str, HallucinationSample]] = []
    unreadable: list[str] = []
    for raw in read_rows(_source(path)):
        sample = read_sample(raw.data) if raw.data is not None else raw.error
        if sample is None or isinstance(sample, Violation):
            unreadable.append(f"{raw.where}: {sample.message if sample else 'unreadable'}")
            continue
        key = str(sample.metadata.get("key") or raw.where)
        key = key if key not in near.split_of else raw.where
        near.add(key, sample.split, sample.context, sample.answer)
        samples.append((key, sample))
    removed = near.removed()
    kept: dict[str, list[dict]] = {}
    for key, sample in samples:
        if key not in removed:
            kept.setdefault(sample.split, []).append(sample_to_row(sample))
    splits = DatasetDict(
        {split: Dataset.from_list(rows, features=FEATURES) for split, rows in sorted(kept.items())}
    )
    write_output(splits, out, config_name="default")
    result = DedupResult(
        read=len(samples),
        kept=len(samples) - len(removed),
        duplicates=near.report(),
        removed=sorted(removed),
        unreadable=unreadable,
    )
    write_atomic(out / REPORT_FILE, result.model_dump_json(indent=2))
    return result


def split_leaks(builds: list[tuple[str, Path]]) -> list[Pair]:
    """Contexts found in two splits (the same or a near-duplicate one) among the rows of
    ``builds`` (a name, and a build folder's published rows or any data in our schema), across
    builds too; keys are ``NAME:KEY``."""
    near = NearDuplicates()
    for source, path in builds:
        if (path / "manifest.json").is_file() and not (path / "dataset").is_dir():
            continue  # a build with no published rows: the push itself says what is wrong
        for raw in read_rows(_source(path)):
            sample = read_sample(raw.data) if raw.data is not None else None
            if sample is None or isinstance(sample, Violation):
                continue  # `validate` and the push itself name unreadable rows
            key = f"{source}:{sample.metadata.get('key') or raw.where}"
            near.add(
                key if key not in near.split_of else f"{source}:{raw.where}", sample.split, sample.context, ""
            )
    return near.split_leaks
