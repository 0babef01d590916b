"""English words, from Debian's ``wamerican`` list (``make install`` installs it): what tells a
name ("Flask" in mid-sentence, "HTTPX") from a word that only opens a sentence ("Run"), and a
lowercase word a reader knows from one made up. It applies to English only: a check that asks
it says so, and text in another language is never judged by it.

Where the list is missing (a machine set up by hand), `known` is None and the rules that need it
offer nothing they would have to judge by it: fewer candidates, never wrong ones.
"""

from __future__ import annotations

import functools
from pathlib import Path

#: where Debian's word lists live (``wamerican``: american-english; ``words`` links to one)
WORD_LISTS = (Path("/usr/share/dict/american-english"), Path("/usr/share/dict/words"))


@functools.cache
def known() -> frozenset[str] | None:
    """Every English word of the list, lowercased, possessives dropped (None: no list here)."""
    for path in WORD_LISTS:
        if path.is_file():
            lines = path.read_text(encoding="utf-8", errors="replace").split()
            return frozenset(w.lower() for w in lines if not w.endswith("'s"))
    return None


def is_english(word: str) -> bool | None:
    """Whether ``word`` (any case) is an English word (None: no list to tell)."""
    words = known()
    return None if words is None else word.lower() in words
