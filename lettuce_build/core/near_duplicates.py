"""Near-duplicate rows by MinHash with LSH (datasketch), and which copy of each cluster to keep.

A row is a duplicate of another when its context and its answer (for a work item: whatever it
carries of question and answer) are both near-duplicates of the other's: rows that only share a
context (several responses to one RAGTruth prompt, squeez's tool types of one instance) are not
duplicates. Texts are compared as sets of shingles: 5-word windows of their lowercased words, or
5-character windows of a text written without spaces (Chinese, Japanese, Thai). Measured on
planted cases (`benchmarks/dedup_scale.py`, tests/core/test_near_duplicates.py): a changed line,
changed whitespace and reordered paragraphs of a README-sized text stay above 0.8; two
different READMEs of one template stay below it.

Candidates come from an LSH index of the answers' signatures; each candidate's similarity is
then estimated from both signatures, the context's and the answer's, and is the lower of the
two. Signatures are kept as 32-bit integers (128 of them, 512 bytes a text; a context shared by
many rows is signed once); with the two LSH indexes a row takes about 12 KB (1.6 GB of peak
memory at 100,000 rows, measured with the rows themselves held beside it).
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from pydantic import BaseModel, Field

from lettuce_build.core.ngrams import kind_of
from lettuce_build.core.words import words

if TYPE_CHECKING:
    from datasketch import MinHash

#: words per shingle (characters per shingle in text written without spaces)
SHINGLE_SIZE = 5
#: hash functions per signature
NUM_PERM = 128
#: datasketch's permutations over 32-bit hash values (crc32 of each shingle)
SCHEME = "affine32"
#: the estimated Jaccard similarity, of both context and answer, from which rows are duplicates
THRESHOLD = 0.8
#: how far below the threshold the LSH index looks for candidates
CANDIDATE_MARGIN = 0.2
#: keep order: the copy in the first split named here stays, the others go (a cluster across
#: splits loses its train copies, so evaluation keeps its rows)
SPLIT_PRIORITY = ("test", "validation", "dev", "train")


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


def _crc(data: bytes) -> int:
    return zlib.crc32(data)


class Signer:
    """MinHash signatures of texts, all with one set of permutations (so any two compare)."""

    def __init__(self, num_perm: int = NUM_PERM) -> None:
        from datasketch import MinHash  # with scipy: imported when something is compared

        self.num_perm = num_perm
        self._permutations = MinHash(num_perm=num_perm, hashfunc=_crc, scheme=SCHEME).permutations

    def minhash(self, text: str) -> MinHash:
        from datasketch import MinHash

        found = MinHash(num_perm=self.num_perm, hashfunc=_crc, permutations=self._permutations, scheme=SCHEME)
        found.update_batch(shingles(text))
        return found


def similarity(a: np.ndarray, b: np.ndarray) -> float:
    """The Jaccard similarity two signatures estimate."""
    return float(np.count_nonzero(a == b)) / len(a)


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


class _Context(NamedTuple):
    signature: np.ndarray
    #: the first row of each split that holds this context
    rows: dict[str, str]


class NearDuplicates:
    """Rows added one by one (a key, a split, a context, an answer); each is compared with those
    before. Pairs of duplicate rows, and of contexts in two splits, are kept as they are found."""

    def __init__(self, threshold: float = THRESHOLD, num_perm: int = NUM_PERM) -> None:
        self.threshold = threshold
        from datasketch import MinHashLSH

        self.signer = Signer(num_perm)
        # the index finds candidates from a lower similarity than the one decided on: at the
        # threshold itself, LSH misses about one pair in ten just above it (each candidate's
        # similarity is then estimated from the signatures, which is what decides)
        candidates = max(threshold - CANDIDATE_MARGIN, 0.3)
        self.answers = MinHashLSH(threshold=candidates, num_perm=num_perm)
        self.contexts = MinHashLSH(threshold=candidates, num_perm=num_perm)
        self._context_at: dict[tuple[int, int], int] = {}  # (crc, length) of a context -> its index
        self._contexts: list[_Context] = []
        self._rows: dict[str, tuple[int, np.ndarray]] = {}  # key -> (context index, answer signature)
        self.split_of: dict[str, str] = {}
        self.pairs: list[Pair] = []
        self.split_leaks: list[Pair] = []

    def _context(self, key: str, split: str, context: str) -> int:
        """The context's index, signed once; a context (or a near one) seen in another split
        before is a leak."""
        digest = (zlib.crc32(context.encode()), len(context))
        at = self._context_at.get(digest)
        if at is None:
            minhash = self.signer.minhash(context)
            at = self._context_at[digest] = len(self._contexts)
            self._contexts.append(_Context(minhash.hashvalues.astype(np.uint32), {}))
            for other in self.contexts.query(minhash):
                near = self._contexts[other]
                score = similarity(near.signature, self._contexts[at].signature)
                for other_split, other_key in near.rows.items():
                    if other_split != split and score >= self.threshold:
                        self.split_leaks.append(Pair(other_key, other_split, key, split, round(score, 3)))
            self.contexts.insert(at, minhash)
        else:
            for other_split, other_key in self._contexts[at].rows.items():
                if other_split != split and split not in self._contexts[at].rows:
                    self.split_leaks.append(Pair(other_key, other_split, key, split, 1.0))
        self._contexts[at].rows.setdefault(split, key)
        return at

    def add(self, key: str, split: str, context: str, answer: str) -> list[Pair]:
        """Add a row; the duplicate pairs it makes with the rows added before."""
        if key in self._rows:
            raise ValueError(f"near-duplicates: key {key!r} added twice")
        context_at = self._context(key, split, context)
        answer_hash = self.signer.minhash(answer)
        answer_signature = answer_hash.hashvalues.astype(np.uint32)
        found = []
        for other in self.answers.query(answer_hash):
            other_context, other_answer = self._rows[other]
            same_context = (
                1.0
                if other_context == context_at
                else similarity(self._contexts[context_at].signature, self._contexts[other_context].signature)
            )
            score = min(similarity(answer_signature, other_answer), same_context)
            if score >= self.threshold:
                found.append(Pair(other, self.split_of[other], key, split, round(score, 3)))
        self.answers.insert(key, answer_hash)
        self._rows[key] = (context_at, answer_signature)
        self.split_of[key] = split
        self.pairs.extend(found)
        return found

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

    def removed(self) -> set[str]:
        """The keys that keeping one row of each cluster removes (`to_remove`)."""
        return to_remove(self.clusters(), self.split_of)

    def report(self) -> DuplicateReport:
        removed = Counter(self.split_of[key] for key in self.removed())
        return DuplicateReport(
            threshold=self.threshold,
            rows=len(self._rows),
            pairs=self.pairs,
            removed_by_split=dict(removed),
            split_leaks=self.split_leaks,
        )


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
