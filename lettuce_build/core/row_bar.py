"""The bar a command shows while it reads rows: drawn on a terminal only, only once the reading
has taken a couple of seconds, and cleared when it ends, so a command's output stays its own
(and a small build's command, or one whose output is piped, shows none)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")

#: seconds of reading before the bar appears
DELAY = 2.0


def reading(items: Iterable[T], *, total: int | None, what: str, unit: str = "row") -> Iterator[T]:
    """``items`` as they come, counted on a bar named ``what`` (out of ``total`` when known)."""
    with tqdm(
        items,
        total=total,
        desc=what,
        unit=unit,
        unit_scale=True,
        disable=None,  # no terminal (a pipe, a file, a test): no bar
        delay=DELAY,
        leave=False,
        dynamic_ncols=True,
    ) as bar:
        yield from bar
