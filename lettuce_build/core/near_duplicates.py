"""Near-duplicate rows by MinHash with LSH (core/minhash.py), and which copy of each cluster to keep.

A row is a duplicate of another when its context and its answer (for a work item: whatever it
carries of question and answer) are both near-duplicates of the other's: rows that only share a
context (several responses to one RAGTruth prompt, squeez's tool types of one instance) are not
duplicates. Texts are compared as sets of shingles: 5-word windows of their lowercased words, or
5-character windows of a text written without spaces (Chinese, Japanese, Thai). Measured on
planted cases (`benchmarks/dedup_scale.py`, tests/core/test_near_duplicates.py): a changed line,
changed whitespace and reordered paragraphs of a README-sized text stay above 0.8; two
different READMEs of one template stay below it.

Candidates are rows whose answers share a band of their signatures; each candidate's similarity
is then estimated from both signatures, the context's and the answer's, and is the lower of the
two. Signatures (128 32-bit values, 512 bytes a text) and band keys are written to a temporary
folder as they are made, not kept: memory holds, per row, its key, its split and its context's
digest, about 150 bytes (`benchmarks/dedup_scale.py`, `benchmarks/command_scale.py`).
"""

from __future__ import annotations

import tempfile
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
from pydantic import BaseModel, Field

from lettuce_build.core.minhash import (
    NUM_PERM,
    SHINGLE_SIZE,
    SignatureStore,
    Units,
    band_shape,
    candidates,
    digest,
    similarities,
    unit_signatures,
    units_of,
)

__all__ = [
    "SHINGLE_SIZE",
    "THRESHOLD",
    "DuplicateReport",
    "NearDuplicates",
    "Pair",
    "Signed",
    "sign",
    "sign_units",
    "to_remove",
]

#: the estimated Jaccard similarity, of both context and answer, from which rows are duplicates
THRESHOLD = 0.8
#: how far below the threshold the LSH index looks for candidates
CANDIDATE_MARGIN = 0.2
#: keep order: the copy in the first split named here stays, the others go (a cluster across
#: splits loses its train copies, so evaluation keeps its rows)
SPLIT_PRIORITY = ("test", "validation", "dev", "train")


class Pair(NamedTuple):
    """Two rows that are near-duplicates (or two whose contexts are): keys, splits, similarity."""

    first: str
    first_split: str
    second: str
    second_split: str
    similarity: float

    def __str__(self) -> str:
        return (
            f"{self.first} ({self.first_split}) ~ {self.second} ({self.second_split}): {self.similarity:.2f}"
        )


class DuplicateReport(BaseModel):
    """What `NearDuplicates` found: the pairs named, the rows keeping one per cluster removes
    (per split), and the contexts found in two splits."""

    threshold: float
    shingle_size: int = SHINGLE_SIZE
    rows: int = 0
    pairs: list[Pair] = Field(default_factory=list)
    removed_by_split: dict[str, int] = Field(default_factory=dict)
    split_leaks: list[Pair] = Field(default_factory=list)

    def lines(self, shown: int = 5) -> list[str]:
        removed = sum(self.removed_by_split.values())
        found = [
            f"near-duplicate rows (context and answer, similarity >= {self.threshold}): "
            f"{len(self.pairs)} pairs; keeping one of each removes {removed} "
            f"{dict(sorted(self.removed_by_split.items()))}"
        ]
        found += [f"  e.g. {pair}" for pair in self.pairs[:shown]]
        found.append(f"contexts in two splits (exact or near): {len(self.split_leaks)}")
        found += [f"  e.g. {pair}" for pair in self.split_leaks[:shown]]
        return found


#: rows signed at once (core/minhash.py signs a batch in arrays)
BATCH = 2048
#: each row's similarity is checked in blocks of this many candidate pairs
CHECKED_AT_ONCE = 65_536


class Signed(NamedTuple):
    """What `NearDuplicates` keeps of rows, made by `sign` (anywhere: in another process too):
    each context's digest, each context's and each answer's signature."""

    digests: array[int]
    contexts: np.ndarray
    answers: np.ndarray


def sign(texts: Sequence[tuple[str, str]]) -> Signed:
    """The digests and signatures of rows given as (context, answer)."""
    contexts = [context for context, _ in texts]
    new = _new(contexts)
    cut = [units_of(context) if first else NO_UNITS for context, first in zip(contexts, new, strict=True)]
    return sign_units(contexts, cut, [units_of(answer) for _, answer in texts])


#: what stands for a context cut already (the row before's)
NO_UNITS: Units = ([], " ")


def _new(contexts: Sequence[str]) -> list[bool]:
    return [i == 0 or context != contexts[i - 1] for i, context in enumerate(contexts)]


def sign_units(
    contexts: Sequence[str], context_units: Sequence[Units], answer_units: Sequence[Units]
) -> Signed:
    """`sign` of rows cut into units where their words were at hand (`audit` has a context's words
    from its checks); a context repeated row after row (several answers to one prompt) is signed
    once: its units are read only where it differs from the row before's."""
    new = np.array(_new(contexts), dtype=bool)
    signed = unit_signatures([units for units, cut in zip(context_units, new, strict=True) if cut])
    return Signed(
        array("Q", map(digest, contexts)), signed[np.cumsum(new) - 1], unit_signatures(answer_units)
    )


class NearDuplicates:
    """Rows added one by one (a key, a split, a context, an answer), each compared with those
    before it: the pairs of duplicate rows, and of contexts in two splits, in the order of the
    later row. Per row, memory holds its key, its split and its context's digest; signatures and
    band keys go to files in a temporary folder, and the comparison runs when a result is first
    asked for (again after more rows are added)."""

    def __init__(self, threshold: float = THRESHOLD, num_perm: int = NUM_PERM) -> None:
        self.threshold = threshold
        # the bands find candidates from a lower similarity than the one decided on: at the
        # threshold itself, they miss about one pair in ten just above it (each candidate's
        # similarity is then estimated from the signatures, which is what decides)
        shape = band_shape(max(threshold - CANDIDATE_MARGIN, 0.3), num_perm)
        self._folder = tempfile.TemporaryDirectory(prefix="lettuce-near-")
        self._contexts = SignatureStore(Path(self._folder.name), "contexts", shape, num_perm)
        self._answers = SignatureStore(Path(self._folder.name), "answers", shape, num_perm)
        self._keys: list[str] = []
        self._known: set[str] = set()
        self._split_names: list[str] = []
        self._splits = bytearray()
        self._digests = array("Q")
        self._waiting: list[tuple[str, str]] = []
        self._found: tuple[list[Pair], list[Pair]] | None = None

    @property
    def keys(self) -> list[str]:
        """The rows' keys, in the order they were added."""
        return self._keys

    def has(self, key: str) -> bool:
        """Whether a row of this key was added."""
        return key in self._known

    def _register(self, key: str, split: str) -> None:
        if key in self._known:
            raise ValueError(f"near-duplicates: key {key!r} added twice")
        if split not in self._split_names:
            self._split_names.append(split)
        self._keys.append(key)
        self._known.add(key)
        self._splits.append(self._split_names.index(split))
        self._found = None

    def add(self, key: str, split: str, context: str, answer: str) -> None:
        """Add a row (its duplicates are found with the others, when a result is asked for)."""
        self._register(key, split)
        self._waiting.append((context, answer))
        if len(self._waiting) >= BATCH:
            self._sign()

    def add_signed(self, rows: Sequence[tuple[str, str, str]], signed: Signed) -> None:
        """Add rows that `sign` signed, given as (key, where, split): a row whose key an earlier
        row has (files of two builds side by side) is told apart by where it is."""
        self._sign()
        for key, where, split in rows:
            self._register(key if key not in self._known else where, split)
        self._keep(signed)

    def _sign(self) -> None:
        if self._waiting:
            self._keep(sign(self._waiting))
            self._waiting = []

    def _keep(self, signed: Signed) -> None:
        self._digests.extend(signed.digests)
        self._contexts.append(signed.contexts)
        self._answers.append(signed.answers)

    @property
    def pairs(self) -> list[Pair]:
        """Rows whose context and answer are both near-duplicates of an earlier row's."""
        return self._compare()[0]

    @property
    def split_leaks(self) -> list[Pair]:
        """Rows whose context (the same, or a near one) an earlier row of another split has."""
        return self._compare()[1]

    def _split(self, row: int) -> str:
        return self._split_names[self._splits[row]]

    def _pair(self, first: int, second: int, score: float) -> Pair:
        return Pair(self._keys[first], self._split(first), self._keys[second], self._split(second), score)

    def _compare(self) -> tuple[list[Pair], list[Pair]]:
        if self._found is None:
            self._sign()
            digests = np.frombuffer(self._digests, dtype=np.uint64)
            contexts = _Contexts(digests, np.frombuffer(self._splits, dtype=np.uint8))
            self._found = (self._duplicates(contexts), self._leaks(contexts))
        return self._found

    def _scores(self, store: SignatureStore, pairs: np.ndarray) -> np.ndarray:
        scores = np.empty(len(pairs))
        for start in range(0, len(pairs), CHECKED_AT_ONCE):
            block = pairs[start : start + CHECKED_AT_ONCE]
            firsts, seconds = store.read(block[:, 0]), store.read(block[:, 1])
            scores[start : start + len(block)] = similarities(firsts, seconds)
        return scores

    def _duplicates(self, contexts: _Contexts) -> list[Pair]:
        found = candidates(self._answers)
        scores = self._scores(self._answers, found)
        found, scores = found[scores >= self.threshold], scores[scores >= self.threshold]
        same = contexts.of[found[:, 0]] == contexts.of[found[:, 1]]
        near = self._scores(self._contexts, found[~same])
        scores[~same] = np.minimum(scores[~same], near)
        keep = scores >= self.threshold
        kept = zip(found[keep].tolist(), scores[keep].tolist(), strict=True)
        return [self._pair(a, b, round(s, 3)) for (a, b), s in kept]

    def _leaks(self, contexts: _Contexts) -> list[Pair]:
        """A row's context seen before in another split: the same one (a leak from the first row of
        each other split), or, where the row is the first of its context, a near one."""
        leaks: list[tuple[int, int, int, float]] = []  # (later row, earlier row, order, similarity)
        for rows in contexts.split_firsts():
            for later_at, later in enumerate(rows):
                leaks += [(later, earlier, 0, 1.0) for earlier in rows[:later_at]]
        firsts = contexts.firsts
        found = candidates(self._contexts, among=firsts)
        scores = self._scores(self._contexts, found)
        for (earlier_first, later), score in zip(found.tolist(), scores.tolist(), strict=True):
            if score < self.threshold:
                continue
            rows = contexts.split_rows(contexts.of[earlier_first])
            leaks += [
                (later, earlier, 1, round(score, 3))
                for earlier in rows
                if earlier < later and self._splits[earlier] != self._splits[later]
            ]
        return [self._pair(earlier, later, score) for later, earlier, _, score in sorted(leaks)]

    def clusters(self) -> list[list[str]]:
        """The keys of each group of rows joined by pairs, each sorted, in the order of their
        first key."""
        parent: dict[str, str] = {}

        def root(key: str) -> str:
            while parent.get(key, key) != key:
                key = parent[key]
            return key

        for pair in self.pairs:
            a, b = root(pair.first), root(pair.second)
            if a != b:
                parent[max(a, b)] = min(a, b)
        groups: dict[str, list[str]] = {}
        for key in {k for pair in self.pairs for k in (pair.first, pair.second)}:
            groups.setdefault(root(key), []).append(key)
        return sorted((sorted(group) for group in groups.values()), key=lambda group: group[0])

    def _split_of(self) -> dict[str, str]:
        """The split of each row in a pair."""
        pairs = self.pairs
        return {p.first: p.first_split for p in pairs} | {p.second: p.second_split for p in pairs}

    def removed(self) -> set[str]:
        """The keys that keeping one row of each cluster removes (`to_remove`)."""
        return to_remove(self.clusters(), self._split_of())

    def report(self) -> DuplicateReport:
        split_of = self._split_of()
        removed = Counter(split_of[key] for key in self.removed())
        return DuplicateReport(
            threshold=self.threshold,
            rows=len(self._keys),
            pairs=self.pairs,
            removed_by_split=dict(removed),
            split_leaks=self.split_leaks,
        )


class _Contexts:
    """Which rows share a context: each row's context number (numbered in the order first
    seen), the first row of each context, and the first row of each context in each split."""

    def __init__(self, digests: np.ndarray, splits: np.ndarray) -> None:
        _, first, inverse = np.unique(digests, return_index=True, return_inverse=True)
        rank = np.empty(len(first), dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(len(first))
        self.of = rank[inverse.ravel()]
        self.firsts = np.sort(first)
        # the first row of each (context, split), grouped by context in the order of rows
        _, at = np.unique(self.of * 256 + splits, return_index=True)
        at = at[np.lexsort((at, self.of[at]))]
        self._rows = at
        self._starts = np.searchsorted(self.of[at], np.arange(len(first) + 1))

    def split_rows(self, context: int) -> list[int]:
        """The first row of each split that holds ``context``, in the order of rows."""
        return self._rows[self._starts[context] : self._starts[context + 1]].tolist()

    def split_firsts(self) -> Iterable[list[int]]:
        """Per context held by two splits or more: `split_rows`."""
        several = np.flatnonzero(np.diff(self._starts) > 1)
        return (self.split_rows(int(context)) for context in several)


def to_remove(clusters: Iterable[list[str]], split_of: dict[str, str]) -> set[str]:
    """The keys to remove so that one row of each cluster stays: the one in the first split of
    `SPLIT_PRIORITY` (a cluster across splits keeps its evaluation copy), then the first key."""

    def rank(key: str) -> tuple[int, str]:
        split = split_of.get(key, "train")
        order = SPLIT_PRIORITY.index(split) if split in SPLIT_PRIORITY else len(SPLIT_PRIORITY)
        return order, key

    removed: set[str] = set()
    for cluster in clusters:
        keep = min(cluster, key=rank)
        removed.update(key for key in cluster if key != keep)
    return removed
