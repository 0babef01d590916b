"""The one stable hash every seeded draw and every hash-based assignment uses.

Python's ``hash`` changes between processes; these numbers come from SHA-256 of the parts
joined with ``::``, so they are the same on every run and every machine (shards on different
machines agree on which items are theirs, a re-run draws what the first run drew).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable
from typing import TypeVar

T = TypeVar("T")


def digest(*parts: object) -> bytes:
    return hashlib.sha256("::".join(str(part) for part in parts).encode("utf-8")).digest()


def number(*parts: object, size: int = 8) -> int:
    """A whole number from the first ``size`` bytes of the parts' digest."""
    return int.from_bytes(digest(*parts)[:size], "big")


def fraction(*parts: object) -> float:
    """A number in [0, 1) (32 bits of the parts' digest)."""
    return number(*parts, size=4) / 0x1_0000_0000


def item_parts(key: str, build_seed: int) -> tuple[object, ...]:
    """What an item's draw is seeded by: its key and the build's ``--seed``. Seed 0 adds nothing,
    so a default build draws what builds drew before the seed reached these draws (and the
    request caches of those builds stay valid)."""
    return (key,) if build_seed == 0 else (key, build_seed)


def rng(*parts: object) -> random.Random:
    """A random generator seeded by the parts, for draws of several values."""
    return random.Random(number(*parts))


def reservoir(things: Iterable[T], size: int | None, seed: int) -> tuple[int, list[T]]:
    """How many ``things`` there are, and a seeded uniform sample of ``size`` of them in their
    order (a reservoir: the others are counted, never kept); all of them when ``size`` is None."""
    draw, kept, count = random.Random(seed), [], 0
    for count, thing in enumerate(things, start=1):
        if size is None or count <= size:
            kept.append((count, thing))
        elif (slot := draw.randrange(count)) < size:
            kept[slot] = (count, thing)
    return count, [thing for _, thing in sorted(kept, key=lambda placed: placed[0])]
