"""A folder's files, listed without holding them as Python objects, and read ahead of use.

`Path.rglob` and `os.walk` list each directory's entries before yielding any: a folder of
100,000 READMEs is about 50 MB of entry objects at once, and the allocator keeps most of that
memory after they are freed (measured: 28 MB more private memory for the rest of the build).
Here entries are read one at a time, and names that must be sorted are kept in Arrow.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from lettuce_build.core.tables import values_at

#: names gathered into one Arrow chunk before they are appended
_CHUNK = 10_000
#: files of a folder being read at once, and at most this many read before they are used
READ_THREADS = 4
READ_AHEAD = 256


def walk_files(folder: Path) -> Iterator[os.DirEntry[str]]:
    """Every file under ``folder`` (links to files included, links to folders not followed),
    one directory entry at a time, in no particular order."""
    pending = [str(folder)]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                elif entry.is_file():
                    yield entry


class SortedNames:
    """File names in sorted order: the names as Arrow chunks, in the order they were listed, and
    the order that sorts them (sorting them by a `take` would hold every name twice; a million
    names are about 20 MB)."""

    def __init__(self, names: pa.ChunkedArray) -> None:
        self.names = names
        self.order = pc.sort_indices(names)

    def __len__(self) -> int:
        return len(self.names)

    def __iter__(self) -> Iterator[str]:
        """The names as strings, in order, a chunk at a time (never the whole array as a list)."""
        for start in range(0, len(self.order), _CHUNK):
            for name in values_at(self.names, self.order.slice(start, _CHUNK).to_numpy()):
                yield os.fsdecode(name)


def sorted_names(folder: Path, keep: Callable[[str], bool]) -> SortedNames:
    """The paths, relative to ``folder`` and sorted by their bytes, of the files under it that
    ``keep`` accepts. Kept as the file system's bytes: a name need not be UTF-8."""
    prefix = len(str(folder).rstrip(os.sep)) + 1
    chunks: list[pa.Array] = []
    chunk: list[bytes] = []
    for entry in walk_files(folder):
        name = entry.path[prefix:]
        if keep(name):
            chunk.append(os.fsencode(name))
            if len(chunk) == _CHUNK:
                chunks.append(pa.array(chunk, pa.binary()))
                chunk = []
    chunks.append(pa.array(chunk, pa.binary()))
    return SortedNames(pa.chunked_array(chunks, pa.binary()))


def read_ahead(folder: Path, names: Iterable[str]) -> Iterator[bytes]:
    """Each named file's bytes, in order, read by a few threads ahead of the caller: a folder
    of many small files costs the latency of its reads (measured: 100,000 READMEs not in the
    page cache took 60 s one after the other, 7 s on four threads), not their size."""
    with ThreadPoolExecutor(READ_THREADS) as pool:
        pending: deque[Future[bytes]] = deque()
        for name in names:
            pending.append(pool.submit((folder / name).read_bytes))
            if len(pending) >= READ_AHEAD:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
