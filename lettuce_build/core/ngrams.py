"""Long n-grams of a text as 64-bit hashes, and an index of a benchmark's n-grams that a row is
looked up in (decontamination: sources/decontamination.py).

Tokens are the text's lowercased words for prose, its identifiers, numbers and operators for
code, and its characters (spaces dropped) for a language written without spaces. 13 tokens make
an n-gram in prose, as the GPT-3 report and datatrove use; code and characters need longer ones
to say as much (``CODE_NGRAM``, ``CHARACTER_NGRAM``). Each token is hashed once (blake2b) and an
n-gram's hash is a polynomial of its tokens' hashes, computed for every window at once with
numpy, so a row costs a few vector operations, not a hash call per window.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable
from typing import Literal

import numpy as np
import regex

from lettuce_build.core.words import words

#: tokens per n-gram, by the kind of text
PROSE_NGRAM = 13
CODE_NGRAM = 25
CHARACTER_NGRAM = 50

TextKind = Literal["prose", "code", "characters"]

_CODE_TOKEN = regex.compile(r"\w+|[^\w\s]")
#: a letter of a script written without spaces between its words
_UNSPACED = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}]")
#: the polynomial's base: odd, so that multiplication is a permutation of 64-bit values
_BASE = np.uint64(0x100000001B3)


def kind_of(text: str, modality: str = "prose") -> TextKind:
    """How a text is cut into tokens: code for code and tool output, characters for text mostly
    in scripts written without spaces between words (Chinese, Japanese, Thai), else prose."""
    if modality in ("code", "tool_output"):
        return "code"
    if not text.isascii() and _UNSPACED.search(text):
        letters = sum(ch.isalpha() for ch in text)
        if letters and len(_UNSPACED.findall(text)) / letters > 0.5:
            return "characters"
    return "prose"


def tokens(text: str, kind: TextKind) -> list[str]:
    if kind == "code":
        return _CODE_TOKEN.findall(text)
    if kind == "characters":
        return [c for c in text if not c.isspace()]
    return words(text)


def size_of(kind: TextKind, prose: int = PROSE_NGRAM) -> int:
    return {"prose": prose, "code": CODE_NGRAM, "characters": CHARACTER_NGRAM}[kind]


@functools.lru_cache(maxsize=1 << 18)  # tokens repeat across rows: each is hashed once
def _token_hash(token: str) -> int:
    return int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")


def ngram_hashes(text: str, kind: TextKind, size: int) -> np.ndarray:
    """The hashes of every window of ``size`` tokens (none for a shorter text), as uint64."""
    found = tokens(text, kind)
    if len(found) < size:
        return np.empty(0, dtype=np.uint64)
    hashed = np.fromiter((_token_hash(t) for t in found), dtype=np.uint64, count=len(found))
    windows = len(found) - size + 1
    acc = np.zeros(windows, dtype=np.uint64)
    with np.errstate(over="ignore"):  # the polynomial wraps around 2**64, as meant
        for offset in range(size):
            acc = acc * _BASE + hashed[offset : offset + windows]
    return acc


class NgramIndex:
    """The n-grams of a benchmark's texts, each kind of text in a sorted array; a text is
    contaminated when one of its n-grams is in the array of its kind."""

    def __init__(self, prose_size: int = PROSE_NGRAM) -> None:
        self.prose_size = prose_size
        self._parts: dict[TextKind, list[np.ndarray]] = {"prose": [], "code": [], "characters": []}
        self._sorted: dict[TextKind, np.ndarray] = {}

    def add(self, text: str, modality: str = "prose") -> None:
        """Add a benchmark text; a patch or code is added as code, and also as prose (a row of
        prose may quote it)."""
        kinds: Iterable[TextKind] = ("code", "prose") if modality == "code" else (kind_of(text, modality),)
        for kind in kinds:
            found = ngram_hashes(text, kind, size_of(kind, self.prose_size))
            if len(found):
                self._parts[kind].append(found)
                self._sorted.pop(kind, None)

    def _array(self, kind: TextKind) -> np.ndarray:
        if kind not in self._sorted:
            parts = self._parts[kind]
            self._sorted[kind] = np.unique(np.concatenate(parts)) if parts else np.empty(0, dtype=np.uint64)
            self._parts[kind] = [self._sorted[kind]]
        return self._sorted[kind]

    def __len__(self) -> int:
        return sum(len(self._array(kind)) for kind in self._parts)

    def shares(self, text: str, modality: str = "prose") -> bool:
        """Whether the text holds an n-gram of the benchmark (code: as code, or as prose)."""
        kinds: tuple[TextKind, ...] = ("code", "prose") if modality == "code" else (kind_of(text, modality),)
        return any(self._shares(text, kind) for kind in kinds)

    def _shares(self, text: str, kind: TextKind) -> bool:
        index = self._array(kind)
        if not len(index):
            return False
        found = ngram_hashes(text, kind, size_of(kind, self.prose_size))
        if not len(found):
            return False
        at = np.searchsorted(index, found)
        at[at == len(index)] = 0
        return bool(np.any(index[at] == found))
