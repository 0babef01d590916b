"""MinHash signatures of many texts at once, and the LSH bands that find candidate pairs among
them, in NumPy: what core/near_duplicates.py keeps per row, compactly.

The signatures are datasketch's, value for value: each shingle's crc32 is mixed by the 32-bit
MurmurHash3 finalizer and permuted by ``a * h + b`` in 32 bits ("affine32"), with the
permutations datasketch draws from its seed, and the least value per permutation kept. What
datasketch does per text in Python is done here per batch of texts in arrays: even a shingle's
crc32 is made from its words' (crc32 of a join is a function of its parts' crc32s and lengths),
so that Python touches each word once, not once per window it is in.

Bands: a signature of ``bands * rows`` values is cut into ``bands`` runs of ``rows`` values; two
texts whose values agree on one whole band are candidates. The numbers of bands and rows are
chosen, as datasketch's LSH does, to weigh the chance of missing a pair above a similarity and
of proposing one below it equally.
"""

from __future__ import annotations

import hashlib
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


#: a text's units (words, or characters where it is written without spaces) and what joins them
#: in a shingle
Units = tuple[list[str], str]


def units_of(text: str) -> Units:
    """What `shingles` cuts a text's shingles from."""
    if kind_of(text) == "characters":
        return [c for c in text if not c.isspace()], ""
    return words(text), " "


@cache
def _zeros(length: int) -> np.ndarray:
    """What ``length`` zero bytes do to a crc32 register, a linear map of its 32 bits, as a table
    per byte of the register (4 x 256)."""
    zeros = bytes(length)
    base = zlib.crc32(zeros, 0)
    return np.array(
        [[zlib.crc32(zeros, value << (8 * byte)) ^ base for value in range(256)] for byte in range(4)],
        dtype=np.uint32,
    )


def _shifted(crcs: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Each crc32 as it stands after its length of more zero bytes (without the final
    inversion's part: zlib's crc32_combine), so that crc32(A + B) = shifted(crc32(A), len(B)) ^
    crc32(B); one table lookup per byte of the register, for all lengths at once."""
    if not len(crcs):
        return crcs
    present, which = np.unique(lengths, return_inverse=True)
    tables = np.stack([_zeros(length) for length in present.tolist()])
    which = which.ravel()
    return (
        tables[which, 0, crcs & 0xFF]
        ^ tables[which, 1, (crcs >> 8) & 0xFF]
        ^ tables[which, 2, (crcs >> 16) & 0xFF]
        ^ tables[which, 3, crcs >> 24]
    )


def shingle_hashes(texts: Sequence[Units], size: int = SHINGLE_SIZE) -> tuple[np.ndarray, np.ndarray]:
    """(crc32, text) of every shingle of every text: the crc32 of its units' bytes joined, made
    from each unit's crc32 in arrays (crc32 of a join is a function of its parts' crc32s and
    lengths), never by joining the bytes of each window."""
    hashes, owners = [], []
    for joiner in (" ", ""):
        mine = [(index, units) for index, (units, joined) in enumerate(texts) if joined == joiner]
        if mine:
            found = _joined_hashes([units for _, units in mine], joiner.encode(), size)
            hashes.append(found[0])
            owners.append(np.array([index for index, _ in mine], dtype=np.int64)[found[1]])
    if not hashes:
        return np.empty(0, dtype=np.uint32), np.empty(0, dtype=np.int64)
    return np.concatenate(hashes), np.concatenate(owners)


def _joined_hashes(texts: Sequence[list[str]], joiner: bytes, size: int) -> tuple[np.ndarray, np.ndarray]:
    encoded = [unit.encode() for units in texts for unit in units]
    crcs = np.fromiter(map(zlib.crc32, encoded), dtype=np.uint32, count=len(encoded))
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    counts = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    # windows: a text of more than `size` units has one per unit from its first to its size-th
    # from the end; a shorter one (not empty) is one window of all its units
    windows = np.where(counts > size, counts - size + 1, (counts > 0).astype(np.int64))
    owner = np.repeat(np.arange(len(texts)), windows)
    starts = np.repeat(np.cumsum(counts) - counts, windows)
    starts += np.arange(len(owner)) - np.repeat(np.cumsum(windows) - windows, windows)
    widths = np.repeat(np.minimum(counts, size), windows)
    found = crcs[starts]
    # crc32(joiner + unit) of each unit
    tails = _shifted(np.full(len(crcs), zlib.crc32(joiner), dtype=np.uint32), lengths) ^ crcs
    for step in range(1, size):
        at = np.flatnonzero(widths > step)
        if not len(at):
            break
        units = starts[at] + step
        # crc32(window + joiner + unit)
        found[at] = _shifted(found[at], lengths[units] + len(joiner)) ^ tails[units]
    return found, owner


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
    return unit_signatures([units_of(text) for text in texts], num_perm)


def unit_signatures(texts: Sequence[Units], num_perm: int = NUM_PERM) -> np.ndarray:
    """`signatures` of texts cut into units already (where their words were at hand)."""
    a, b = permutations(num_perm)
    found = np.full((len(texts), num_perm), _EMPTY, dtype=np.uint32)
    hashes, owner = shingle_hashes(texts)
    if not len(hashes):
        return found
    mixed = _mixed(hashes)
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


def digest(text: str) -> int:
    """A text's 64-bit digest (blake2b): what is kept of a text counted, not held."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


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
