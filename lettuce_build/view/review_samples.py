"""A build's samples as the review page reads them: indexed in one streaming pass, read a page
at a time.

The pass keeps per sample only where it is (its split and row, 9 bytes), its key's hash (8 bytes)
and whether this reviewer has given it a verdict (1 byte): a million samples hold 18 MB, not
the samples. A page of samples is read from the build's files (memory-mapped: only the pages of
the file a page of samples touches are read) when the page asks for it.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from lettuce_build.builds.storage.output import DATASET_DIR
from lettuce_build.core.errors import CorruptOutput
from lettuce_build.core.schema import HallucinationSample, row_to_sample
from lettuce_build.core.shortcuts import SpellingBaseline
from lettuce_build.view.samples import saved_splits
from lettuce_build.view.validate import saved_rows


class ReviewSamples:
    """The keyed samples of one build folder (or of one split of it), in the build's order."""

    def __init__(self, out: Path, split: str | None = None) -> None:
        folder = out / DATASET_DIR
        dataset = saved_splits(out, split)
        self._dataset = dataset
        self.splits = [name for name in dataset if split in (None, name)]
        #: the spelling baseline over the samples (core/shortcuts.py), shown above them
        self.baseline = SpellingBaseline()
        splits, rows, hashes = array("B"), array("q"), array("Q")
        for index, name in enumerate(self.splits):
            for row, sample in _keyed(folder, name):
                splits.append(index)
                rows.append(row)
                hashes.append(key_hash(str(sample.metadata["key"])))
                spans = [(s.start, s.end, s.subcategory or s.category) for s in sample.labels]
                self.baseline.add(sample.answer, sample.context, spans)
        self._split = np.frombuffer(splits, dtype=np.uint8)
        self._row = np.frombuffer(rows, dtype=np.int64)
        hashed = np.frombuffer(hashes, dtype=np.uint64)
        self._by_hash = np.argsort(hashed, kind="stable")
        self._sorted_hashes = hashed[self._by_hash]
        self.reviewed = np.zeros(len(hashed), dtype=bool)

    def __len__(self) -> int:
        return len(self._row)

    def sample(self, position: int) -> HallucinationSample:
        """The sample at ``position`` (0 to len - 1), read from the build's files."""
        split = self.splits[int(self._split[position])]
        return row_to_sample(self._dataset[split][int(self._row[position])])

    def page(self, start: int, count: int) -> Iterator[tuple[int, HallucinationSample]]:
        """The samples from ``start`` on, at most ``count`` of them, with their positions."""
        for position in range(max(start, 0), min(start + count, len(self))):
            yield position, self.sample(position)

    def position(self, key: str) -> int | None:
        """Where the sample with ``key`` is, or None (its row read to tell a hash's collision)."""
        hashed = np.uint64(key_hash(key))
        at = int(np.searchsorted(self._sorted_hashes, hashed))
        while at < len(self._sorted_hashes) and self._sorted_hashes[at] == hashed:
            position = int(self._by_hash[at])
            if str(self.sample(position).metadata["key"]) == key:
                return position
            at += 1
        return None

    def mark_reviewed(self, keys: Iterable[str]) -> None:
        for key in keys:
            if (position := self.position(key)) is not None:
                self.reviewed[position] = True

    def progress(self) -> dict[str, dict[str, int]]:
        """Per split: its samples and how many of them this reviewer has given a verdict."""
        totals = np.bincount(self._split, minlength=len(self.splits))
        done = np.bincount(self._split[self.reviewed], minlength=len(self.splits))
        return {
            name: {"samples": int(totals[index]), "reviewed": int(done[index])}
            for index, name in enumerate(self.splits)
        }

    def first_open(self, after: int = -1) -> int | None:
        """The first sample past position ``after`` with no verdict yet, or None."""
        later = np.flatnonzero(~self.reviewed[after + 1 :])
        return int(later[0]) + after + 1 if len(later) else None


def key_hash(key: str) -> int:
    """A sample key's 64-bit hash: what the index keeps of a key."""
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")


def _keyed(folder: Path, split: str) -> Iterator[tuple[int, HallucinationSample]]:
    """The samples of a split that carry a key (every published row does), with their rows."""
    for raw in saved_rows(folder, split):
        if raw.data is None:
            raise CorruptOutput(f"{raw.where}: {raw.error}; run the build again to write it anew")
        sample = row_to_sample(raw.data)
        if sample.metadata.get("key"):
            yield raw.row, sample
