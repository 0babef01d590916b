"""Which keys (or digests) a stream has shown already, in 8 to 16 bytes a key.

A Python set of a million keys holds each key's object (about 80 bytes for an item's key, 50 for
a document's digest, 113 for a request's) and a slot for it: the one thing reading a million
documents kept per document, and streaming a pass of a million requests per request.
`SeenKeys` keeps only each key's 64-bit hash, in an open-addressed table that doubles as it
fills. Two different keys share a hash with a probability of about n^2 / 2^65 (3 in 100 million
for a million keys); such a key would be taken for one seen before. (A request taken so is not
streamed: its batch asks for it when the pass meets it, so it is still answered.)
"""

from __future__ import annotations

import numpy as np

#: the table doubles once it is this full (linear probing slows down past about two thirds)
MAX_LOAD = 0.5
#: slots moved to the bigger table at a time
_GROW_CHUNK = 65_536


class SeenKeys:
    def __init__(self, slots: int = 1024) -> None:
        self._slots = np.zeros(slots, dtype=np.int64)  # 0: an empty slot
        self._count = 0

    def add(self, key: str | bytes) -> bool:
        """Remember ``key``; False when it was seen before."""
        code = hash(key) or 1  # 0 marks an empty slot
        if not self._insert(self._slots, code):
            return False
        self._count += 1
        if self._count > MAX_LOAD * len(self._slots):
            self._grow()
        return True

    def __len__(self) -> int:
        return self._count

    def __contains__(self, key: object) -> bool:
        slots = self._slots
        code, mask = hash(key) or 1, len(slots) - 1
        at = code & mask
        while (held := slots[at]) != 0:
            if held == code:
                return True
            at = (at + 1) & mask
        return False

    @staticmethod
    def _insert(slots: np.ndarray, code: int) -> bool:
        mask = len(slots) - 1
        at = code & mask
        while (held := slots[at]) != 0:
            if held == code:
                return False
            at = (at + 1) & mask
        slots[at] = code
        return True

    def _grow(self) -> None:
        bigger = np.zeros(2 * len(self._slots), dtype=np.int64)
        for start in range(0, len(self._slots), _GROW_CHUNK):  # never every code as a Python int
            part = self._slots[start : start + _GROW_CHUNK]
            for code in part[part != 0].tolist():
                self._insert(bigger, code)
        self._slots = bigger
