"""A stage's passes kept on disk, so that a re-run of the same build loads a finished pass instead
of running it (see `engine.runner`): the interface of the place they are kept (`PassStore`, which
the layer that owns the storage provides: a build's work folder, see builds/items.py), what a
kept pass records, and a selection's rows copied beside its pass."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple, Protocol

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


class PassFiles(NamedTuple):
    """Where one pass is kept."""

    #: the columns the pass added (written by `Dataset.map`)
    data: Path
    #: its `PassRecord`, written last: a pass without one did not finish
    record: Path
    #: a selection's rows, copied once so that the pass's columns join them (see `flattened`)
    selection: Path


class PassStore(Protocol):
    """Where a runner keeps its finished passes, by name (the pass's fingerprint)."""

    def files(self, name: str) -> PassFiles:
        """Where pass ``name`` is kept, or will be."""
        ...

    def used(self, files: PassFiles) -> None:
        """A kept pass was loaded again (a store may drop the passes no run uses)."""
        ...


def flattened(dataset: Dataset, path: Path, fingerprint: str, batch: int) -> Dataset:
    """``dataset``'s rows in order, without its indices mapping: copied into ``path`` by Arrow
    (`Dataset.flatten_indices` converts every row to Python and back: a twentieth of a build's
    driver time), or read from there when an earlier run copied them."""
    if not path.exists():
        staged = path.with_suffix(".tmp")
        rows = dataset.with_format("arrow")
        with ArrowWriter(path=str(staged), features=dataset.features) as writer, pages_released(dataset):
            for start in range(0, len(dataset), batch):
                writer.write_table(rows[start : start + batch], writer_batch_size=batch)
            writer.finalize()
        staged.replace(path)
    flat = Dataset.from_file(str(path))
    # fingerprinted by name, not by the file's modification time (which a re-run may change)
    return flat.select(range(len(flat)), new_fingerprint=fingerprint)
