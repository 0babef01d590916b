"""English words, from Debian's ``wamerican`` list (``make install`` installs it): what tells a
name ("Flask" in mid-sentence, "HTTPX") from a word that only opens a sentence ("Run"), and a
lowercase word a reader knows from one made up. It applies to English only: a check that asks
it says so, and text in another language is never judged by it.

Where the list is missing (a machine set up by hand), `known` is False and the rules that need it
offer nothing they would have to judge by it: fewer candidates, never wrong ones.
"""

from __future__ import annotations

import functools
from pathlib import Path

#: where Debian's word lists live (``wamerican``: american-english; ``words`` links to one)
WORD_LISTS = (Path("/usr/share/dict/american-english"), Path("/usr/share/dict/words"))


@functools.cache
def _lists() -> tuple[frozenset[str], frozenset[str]] | None:
    """(common words, proper nouns) of the list: its lowercase entries, and its capitalised ones
    ("Python", "Paris"); possessives dropped (None: no list here)."""
    for path in WORD_LISTS:
        if path.is_file():
            entries = [
                w for w in path.read_text(encoding="utf-8", errors="replace").split() if not w.endswith("'s")
            ]
            return frozenset(w for w in entries if w.islower()), frozenset(
                w for w in entries if not w.islower()
            )
    return None


def known() -> bool:
    """Whether this machine has the word list."""
    return _lists() is not None


def is_english(word: str) -> bool | None:
    """Whether ``word`` (any case) is a common English word (None: no list to tell)."""
    lists = _lists()
    return None if lists is None else word.lower() in lists[0]


def is_proper(word: str) -> bool | None:
    """Whether ``word`` is a proper noun the list knows ("Python", "Django"; None: no list)."""
    lists = _lists()
    return None if lists is None else word in lists[1]
