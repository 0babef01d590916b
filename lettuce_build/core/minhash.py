"""MinHash signatures of many texts at once, and the LSH bands that find candidate pairs among
them, in NumPy: what core/near_duplicates.py keeps per row, compactly.

The signatures are datasketch's, value for value: each shingle's crc32 is mixed by the 32-bit
MurmurHash3 finalizer and permuted by ``a * h + b`` in 32 bits ("affine32"), with the
permutations datasketch draws from its seed, and the least value per permutation kept. What
datasketch does per text in Python is done here per batch of texts in arrays, so that signing a
row costs a few microseconds of NumPy beyond cutting its shingles.

Bands: a signature of ``bands * rows`` values is cut into ``bands`` runs of ``rows`` values; two
texts whose values agree on one whole band are candidates. The numbers of bands and rows are
chosen, as datasketch's LSH does, to weigh the chance of missing a pair above a similarity and
of proposing one below it equally.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np

from lettuce_build.core.ngrams import kind_of
from lettuce_build.core.words import words

#: words per shingle (characters per shingle in text written without spaces)
SHINGLE_SIZE = 5
#: hash functions per signature
NUM_PERM = 128
#: datasketch's seed for its permutations (`MinHash(seed=1)`)
SEED = 1
#: shingle-by-permutation values computed at once (a 16 MB block of uint32)
BLOCK = 32_768
_EMPTY = np.uint32(0xFFFFFFFF)
_FMIX = (np.uint32(0x85EBCA6B), np.uint32(0xC2B2AE35))
#: an odd 64-bit multiplier (the golden ratio's) that folds a band's values into one
_FOLD = np.uint64(0x9E3779B97F4A7C15)


def shingles(text: str, size: int = SHINGLE_SIZE) -> set[bytes]:
    """The text's shingles: windows of ``size`` words, or of ``size`` characters where it is
    written without spaces; a text shorter than one window is one shingle."""
    if kind_of(text) == "characters":
        units: list[str] = [c for c in text if not c.isspace()]
        joiner = ""
    else:
        units, joiner = words(text), " "
    if len(units) <= size:
        return {joiner.join(units).encode()} if units else set()
    return {joiner.join(units[i : i + size]).encode() for i in range(len(units) - size + 1)}


def shingle_hashes(text: str) -> list[int]:
    """The crc32 of each of `shingles`' shingles (a repeated one more than once: the least value
    is the same), each word encoded once, not once per window it is in."""
    if kind_of(text) == "characters":
        return [zlib.crc32(shingle) for shingle in shingles(text)]
    units = [word.encode() for word in words(text)]
    if len(units) <= SHINGLE_SIZE:
        return [zlib.crc32(b" ".join(units))] if units else []
    return [zlib.crc32(b" ".join(units[i : i + SHINGLE_SIZE])) for i in range(len(units) - SHINGLE_SIZE + 1)]


@cache
def permutations(num_perm: int = NUM_PERM) -> tuple[np.ndarray, np.ndarray]:
    """The (a, b) of each permutation, as datasketch draws them for the affine32 scheme."""
    draw = np.random.RandomState(SEED)
    a = draw.randint(0, 1 << 31, num_perm, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
    b = draw.randint(0, 1 << 32, num_perm, dtype=np.uint64).astype(np.uint32)
    return a, b


def _mixed(hashes: np.ndarray) -> np.ndarray:
    """MurmurHash3's 32-bit finalizer, element-wise (multiplication wraps, as it should)."""
    hashes = hashes ^ (hashes >> np.uint32(16))
    hashes = hashes * _FMIX[0]
    hashes = hashes ^ (hashes >> np.uint32(13))
    hashes = hashes * _FMIX[1]
    return hashes ^ (hashes >> np.uint32(16))


def signatures(texts: Sequence[str], num_perm: int = NUM_PERM) -> np.ndarray:
    """One signature per text (a ``len(texts) x num_perm`` uint32 array); an empty text's is all
    ``0xFFFFFFFF``, as datasketch leaves a MinHash that saw nothing."""
    return hashed_signatures([shingle_hashes(text) for text in texts], num_perm)


def hashed_signatures(hashed: Sequence[list[int]], num_perm: int = NUM_PERM) -> np.ndarray:
    """`signatures` of texts whose `shingle_hashes` were taken (where their words were at hand)."""
    a, b = permutations(num_perm)
    found = np.full((len(hashed), num_perm), _EMPTY, dtype=np.uint32)
    hashes: list[int] = []
    counts = np.zeros(len(hashed), dtype=np.int64)
    for index, crcs in enumerate(hashed):
        hashes += crcs
        counts[index] = len(crcs)
    if not hashes:
        return found
    mixed = _mixed(np.array(hashes, dtype=np.uint32))
    owner = np.repeat(np.arange(len(hashed)), counts)
    with np.errstate(over="ignore"):
        for start in range(0, len(mixed), BLOCK):
            # permutations by shingles, so that each text's least values are one reduction
            # along a row (several times faster than down the columns)
            block = a[:, None] * mixed[None, start : start + BLOCK] + b[:, None]
            rows = owner[start : start + BLOCK]
            firsts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
            least = np.minimum.reduceat(block, firsts, axis=1).T
            at = rows[firsts]
            found[at] = np.minimum(found[at], least)
    return found


def similarity(a: np.ndarray, b: np.ndarray) -> float:
    """The Jaccard similarity two signatures estimate."""
    return float(np.count_nonzero(a == b)) / len(a)


def similarities(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row by row, the Jaccard similarity of two stacks of signatures."""
    return np.count_nonzero(a == b, axis=1) / a.shape[1]


def _chance(threshold: float, bands: int, rows: int, *, above: bool) -> float:
    """The area of missed pairs above ``threshold`` (or of proposed pairs below it) for
    ``bands`` bands of ``rows`` rows."""
    points = np.linspace(threshold, 1.0, 201) if above else np.linspace(0.0, threshold, 201)
    proposed = 1 - (1 - points**rows) ** bands
    curve = 1 - proposed if above else proposed
    return float(np.sum((curve[1:] + curve[:-1]) / 2 * np.diff(points)))


@cache
def band_shape(threshold: float, num_perm: int = NUM_PERM) -> tuple[int, int]:
    """(bands, rows per band) that weigh missed and wrongly proposed pairs equally."""
    best = (1, num_perm)
    least = float("inf")
    for bands in range(1, num_perm + 1):
        for rows in range(1, num_perm // bands + 1):
            error = _chance(threshold, bands, rows, above=False) + _chance(threshold, bands, rows, above=True)
            if error < least:
                least, best = error, (bands, rows)
    return best


def band_keys(signed: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """Each signature's band values folded to one 64-bit key per band (``len x bands``)."""
    keys = np.zeros((signed.shape[0], bands), dtype=np.uint64)
    wide = signed.astype(np.uint64)
    with np.errstate(over="ignore"):
        for band in range(bands):
            key = np.full(signed.shape[0], np.uint64(band + 1), dtype=np.uint64)
            for column in range(band * rows, (band + 1) * rows):
                key = (key ^ wide[:, column]) * _FOLD
                key ^= key >> np.uint64(29)
            keys[:, band] = key
    return keys


class SignatureStore:
    """Signatures and their band keys, appended batch by batch to files in ``folder``: the
    signatures row by row (read back a few at a time, to check candidates), the keys one file
    per band (read back one band at a time), so that memory holds neither."""

    def __init__(self, folder: Path, name: str, shape: tuple[int, int], num_perm: int = NUM_PERM) -> None:
        self.bands, self.rows_per_band = shape
        self.num_perm = num_perm
        self.count = 0
        self._signatures = folder / f"{name}.signatures"
        self._keys = [folder / f"{name}.band{band}" for band in range(self.bands)]
        for path in (self._signatures, *self._keys):
            path.write_bytes(b"")

    def append(self, signed: np.ndarray) -> None:
        with self._signatures.open("ab") as out:
            out.write(np.ascontiguousarray(signed, dtype=np.uint32).tobytes())
        keys = band_keys(signed, self.bands, self.rows_per_band)
        for band, path in enumerate(self._keys):
            with path.open("ab") as out:
                out.write(np.ascontiguousarray(keys[:, band]).tobytes())
        self.count += len(signed)

    def band(self, band: int) -> np.ndarray:
        """The keys of one band, a value per signature."""
        return np.fromfile(self._keys[band], dtype=np.uint64)

    def read(self, indexes: np.ndarray) -> np.ndarray:
        """The signatures at ``indexes`` (any order, repeats allowed), read from the file."""
        wanted, back = np.unique(indexes, return_inverse=True)
        found = np.empty((len(wanted), self.num_perm), dtype=np.uint32)
        width = self.num_perm * 4
        with self._signatures.open("rb") as file:
            descriptor = file.fileno()
            for at, index in enumerate(wanted.tolist()):
                found[at] = np.frombuffer(os.pread(descriptor, width, index * width), dtype=np.uint32)
        return found[back.ravel()]


#: a band's texts of one key are each paired with the next this many of that key, in the order
#: they came: a key hundreds share (one answer repeated) would otherwise pair every two of them
#: (a cluster stays joined: each is paired with its neighbours)
WINDOW = 32


def candidates(store: SignatureStore, among: np.ndarray | None = None, window: int = WINDOW) -> np.ndarray:
    """The (first, second) indexes, first < second, of the signatures that share a band's key,
    once each, sorted by second then first; ``among``: only these signatures (sorted indexes)."""
    codes = []
    for band in range(store.bands):
        keys = store.band(band)
        index = np.arange(len(keys)) if among is None else among
        keys = keys if among is None else keys[among]
        order = np.argsort(keys, kind="stable")  # a key's texts stay in the order they came
        ordered = keys[order]
        same = ordered[1:] == ordered[:-1]
        alive = same
        for distance in range(1, window + 1):
            if distance > 1:
                alive = alive[:-1] & same[distance - 1 :]
            hits = np.flatnonzero(alive)
            if not len(hits):
                break
            first, second = index[order[hits]], index[order[hits + distance]]
            codes.append(second.astype(np.int64) * store.count + first)
    if not codes:
        return np.empty((0, 2), dtype=np.int64)
    unique = np.unique(np.concatenate(codes))
    return np.stack([unique % store.count, unique // store.count], axis=1)
