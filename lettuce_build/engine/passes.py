"""A stage's passes kept on disk beside the work items they ran over (``pass-<fingerprint>.arrow``
and its record), so that a re-run of the same build loads a finished pass instead of running it
(see `engine.runner`): where they are kept, what a kept pass records, and a selection's rows
copied beside its pass."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from datasets import Dataset
from datasets.arrow_writer import ArrowWriter
from pydantic import BaseModel

from lettuce_build.core.memory import pages_released


class PassRecord(BaseModel):
    """What a kept pass did, beside its results: a re-run that loads the pass adds these to its
    statistics (every answer then counts as a cache hit: the model is not asked)."""

    passed_through: int
    answered: int
    sampling: dict[str, Any]


def work_folder(dataset: Dataset) -> Path | None:
    """Where a dataset's files are, which its passes are kept beside; None for one in memory."""
    return Path(dataset.cache_files[0]["filename"]).parent if dataset.cache_files else None


def flattened(dataset: Dataset, path: Path, fingerprint: str, batch: int) -> Dataset:
    """``dataset``'s rows in order, without its indices mapping: copied into ``path`` by Arrow
    (`Dataset.flatten_indices` converts every row to Python and back: a twentieth of a build's
    driver time), or read from there when an earlier run copied them."""
    if not path.exists():
        staged = path.with_suffix(".tmp")
        rows = dataset.with_format("arrow")
        with ArrowWriter(path=str(staged), features=dataset.features) as writer, pages_released(dataset):
            for start in range(0, len(dataset), batch):
                writer.write_table(rows[start : start + batch])
            writer.finalize()
        staged.replace(path)
    flat = Dataset.from_file(str(path))
    # fingerprinted by name, not by the file's modification time (which a re-run may change)
    return flat.select(range(len(flat)), new_fingerprint=fingerprint)
