"""Giving back the memory a build no longer uses.

Arrow's buffers and the batches' Python objects are freed by the C library's allocator, which
keeps freed pages for later instead of returning them: a driver's memory then grows with the
work it has done, not with what it holds (measured on a re-run of 100,000 items: 224 MB of
private memory at the peak, 185 MB when each stage gives back what it freed).

A build also reads its work files through memory maps (`datasets` maps every Arrow file it
opens), and a page of a mapped file, once read, counts in the process's RSS until the file is
closed, which a build's files are not until it ends: its RSS grew with everything it had read
(746 MB at 100,000 items, of which 194 MB private). `pages_released` hands those pages back to
the kernel's page cache while a step reads, so a page read again is found there (a minor fault)
or read from disk, and RSS holds only what the step read in the last moments.
"""

from __future__ import annotations

import bisect
import ctypes
import ctypes.util
import functools
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
from datasets import Dataset

#: Linux's madvise advice "the process does not need these pages": for a file mapped without
#: write access, the next read maps the file's page again, unchanged
MADV_DONTNEED = 4
#: how often a step's pages are looked at: a step may read at memory speed (save_to_disk copies a
#: split at about 1 GB/s; looked at every 10 ms, a million items' train split held 73-110 MB of
#: its pages at once, every 2 ms 31-36 MB; a look is one read of /proc/self/statm)
RELEASE_EVERY = 0.002
#: they are handed back once the process holds this many more bytes of files than after the last
#: time. A step reads at the pace of the model or of Python's work per row, and a row read from a
#: selection maps the pages around it: at 16 MB, a million items' passes held 20 MB more at once
RELEASE_AFTER_BYTES = 4 << 20
#: the same for a copy at memory speed (the outputs' write): handing back walks every mapping,
#: which every 4 MB of a copy at 1 GB/s would do 250 times a second
COPY_RELEASE_AFTER_BYTES = 16 << 20
_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
#: glibc's ``mallopt`` parameter for the size from which a block gets pages of its own
_M_MMAP_THRESHOLD = -3
#: that size, kept at glibc's starting value (see `large_blocks_mapped`)
MMAP_THRESHOLD = 128 * 1024


@functools.cache
def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name) if name else None
    except OSError:
        return None


@functools.cache
def _trim() -> Callable[[int], int] | None:
    return getattr(_libc(), "malloc_trim", None)  # only glibc has it (not musl, not macOS)


@functools.cache
def _madvise() -> Callable[[int, int, int], int] | None:
    advise = getattr(_libc(), "madvise", None)
    if advise is not None:
        advise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return advise


def give_back() -> None:
    """Return the C library's free pages to the system (glibc's ``malloc_trim``; elsewhere nothing)."""
    trim = _trim()
    if trim is not None:
        trim(0)


@contextmanager
def system_arrow_memory() -> Iterator[None]:
    """Arrow's allocations on the C library's allocator while the block runs, its large blocks
    mapped on their own (`large_blocks_mapped`). Arrow's default (mimalloc) keeps what a build's
    batches freed, so the driver's memory grew with the build (measured: 181 against 138 MB of
    private memory for a re-run of 30,000 items, no slower)."""
    large_blocks_mapped()
    before = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        yield
    finally:
        pa.set_memory_pool(before)


def large_blocks_mapped() -> None:
    """From now on, glibc gives every block of `MMAP_THRESHOLD` or more pages of its own, unmapped
    when it is freed (elsewhere nothing). glibc raises that size to the largest block it has freed
    (up to 32 MB): once a stage had freed its 8 MB index arrays, the next stage's came from the
    heap, where a few small blocks then kept them from being given back. Fixed, the raising ends
    for the process; nothing else is changed."""
    mallopt = getattr(_libc(), "mallopt", None)
    if mallopt is not None and _trim() is not None:  # glibc (which alone has malloc_trim)
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)


def _read_only_file_mappings(paths: frozenset[str]) -> list[tuple[int, int]]:
    """This process's mappings of ``paths`` without write access, sorted by address (from Linux's
    /proc/self/maps; none elsewhere). A writable private mapping may hold the process's own
    changes, which releasing would lose: never listed. Only the lines of ``paths`` are parsed: a
    process with an engine or a browser loaded maps thousands of files, and a build asks per step."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except FileNotFoundError:
        return []
    ranges, endings = [], tuple(paths)
    for line in maps.splitlines():
        if not line.endswith(endings):
            continue
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and fields[5] in paths and "w" not in fields[1]:
            start, end = fields[0].split("-")
            ranges.append((int(start, 16), int(end, 16)))
    return sorted(ranges)


def file_mappings_of(datasets: tuple[Dataset, ...]) -> list[tuple[int, int]]:
    """The mappings that hold ``datasets``' Arrow data: every read-only mapping of one of their
    files that one of their buffers lies in. A buffer in memory of the process's own (a dataset
    built in memory, a copy) lies in none, so it is never released."""
    paths = frozenset(
        os.path.realpath(file["filename"]) for dataset in datasets for file in dataset.cache_files
    )
    if not paths:  # built in memory: nothing of it is a file's page
        return []
    mappings = _read_only_file_mappings(paths)
    starts = [start for start, _ in mappings]
    held: set[tuple[int, int]] = set()
    for dataset in datasets:
        for column in dataset.data.table.columns:
            for chunk in column.chunks:
                # a chunk read from a file has its buffers there, so one says which mapping; a
                # buffer in a file mapping keeps that mapping in place, one in memory is in none
                buffer = next((b for b in chunk.buffers() if b is not None and b.size), None)
                if buffer is None:
                    continue
                at = bisect.bisect_right(starts, buffer.address) - 1
                if at >= 0 and buffer.address < mappings[at][1]:
                    held.add(mappings[at])
    return sorted(held)


def _file_bytes_held() -> int:
    """The bytes of files this process holds in memory now (and of shared memory: Linux counts them
    together); 0 where /proc cannot tell, so nothing is ever released but at the end."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[2]) * _PAGE_SIZE
    except (OSError, ValueError, IndexError):
        return 0


def _release(mappings: list[tuple[int, int]]) -> None:
    """Hand the pages of ``mappings`` back to the page cache. Only for mappings the caller keeps
    in place (by holding what maps them): an address unmapped and mapped again to other memory
    would lose that memory's contents."""
    advise = _madvise()
    if advise is not None:
        for start, end in mappings:
            advise(start, end - start, MADV_DONTNEED)


def release_read(*datasets: Dataset) -> None:
    """Hand back now the pages read so far of the files that hold ``datasets``: for the reads a
    step makes outside `pages_released` (a column or two), once it is done with them. The
    caller holds ``datasets``, so their files stay mapped while this runs."""
    _release(file_mappings_of(datasets))


@contextmanager
def pages_released(
    *datasets: Dataset, every: float = RELEASE_EVERY, after: int = RELEASE_AFTER_BYTES
) -> Iterator[None]:
    """While the block reads ``datasets``, hand the pages it has read of their files back to the
    page cache: looked at every ``every`` seconds, handed back once the process holds ``after``
    more bytes of files than the last time (and once at the end).

    A thread, because the reading happens inside `datasets`' own loops (a map step's input,
    `save_to_disk`), which a build cannot step into. The thread holds ``datasets``, so the files
    it releases stay mapped where it found them until it has stopped."""
    mappings = file_mappings_of(datasets)
    if not mappings:
        yield
        return
    stop = threading.Event()
    released_at = _file_bytes_held()  # before the block reads: a quick one may be done before the thread runs

    def keep_releasing(_held: tuple[Dataset, ...]) -> None:
        nonlocal released_at
        while not stop.wait(every):
            if _file_bytes_held() - released_at >= after:
                _release(mappings)
                released_at = _file_bytes_held()
        _release(mappings)

    thread = threading.Thread(target=keep_releasing, args=(datasets,), name="pages-released", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
