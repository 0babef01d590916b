"""Batches worked on by a pool of processes, one per core, results in the order of the batches:
for the commands whose per-row work is Python (`audit`'s checks, the signatures `dedup` and
`audit` compare), which one core cannot do for a million rows in minutes.

The first batches are worked on here, in this process: a small input is done before a pool
would have started. Workers are started by a fork server (a process that imported nothing of
the caller's state, threads included), and at most two batches per worker are on their way, so
memory holds a few batches, not the input.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sized
from multiprocessing.pool import AsyncResult
from typing import TypeVar

__all__ = ["ordered_map"]

Batch = TypeVar("Batch", bound=Sized)
Result = TypeVar("Result")

#: batches on their way per worker
IN_FLIGHT = 2


def _deaf_to_ctrl_c() -> None:
    """Ctrl-C reaches the whole process group: the command stops (one line), and leaving the
    pool ends its workers, without a traceback from each."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def ordered_map(
    work: Callable[[Batch], Result],
    batches: Iterable[Batch],
    *,
    alone: int,
    size: Callable[[Batch], int] = len,
) -> Iterator[tuple[Batch, Result]]:
    """Each batch with ``work``'s result, in order. The batches holding the first ``alone`` rows
    (``size`` counts a batch's) are worked on in this process; the rest, when there are two
    cores or more, by a pool (``work`` must then be picklable: a module's function, or a
    `functools.partial` of one)."""
    batches = iter(batches)
    cores = os.cpu_count() or 1
    done = 0
    for batch in batches:
        yield batch, work(batch)
        done += len(batch)
        if done >= alone and cores > 1:
            break
    else:
        return
    with multiprocessing.get_context("forkserver").Pool(cores, initializer=_deaf_to_ctrl_c) as pool:
        waiting: deque[tuple[Batch, AsyncResult[Result]]] = deque()
        for batch in batches:
            waiting.append((batch, pool.apply_async(work, (batch,))))
            while len(waiting) > IN_FLIGHT * cores or (waiting and waiting[0][1].ready()):
                first, result = waiting.popleft()
                yield first, result.get()
        while waiting:
            first, result = waiting.popleft()
            yield first, result.get()
