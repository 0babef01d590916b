"""Giving the memory a build step freed back to the system.

Arrow's buffers and the batches' Python objects are freed by the C library's allocator, which
keeps freed pages for later instead of returning them: a driver's memory then grows with the
work it has done, not with what it holds (measured on a re-run of 100,000 items: 224 MB of
private memory at the peak, 185 MB when each stage gives back what it freed).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable


@functools.cache
def _trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to give back this way
        return None


def give_back() -> None:
    """Return the C library's free pages to the system (glibc's ``malloc_trim``; elsewhere nothing)."""
    trim = _trim()
    if trim is not None:
        trim(0)
