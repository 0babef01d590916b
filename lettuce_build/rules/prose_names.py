"""Names in prose, told from words: what the entity rules of prose_mutations.py swap, and what
no prose edit may touch (code, URLs, links, HTML). English only: Debian's word list
(core/english.py) tells a name ("Flask" inside sentences, "Django") from a word that only
opens a sentence ("Run", "Installation")."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Mapping
from types import MappingProxyType

import regex

from lettuce_build.core import english
from lettuce_build.core.sentences import sentence_spans
from lettuce_build.rules.prose_words import NOT_NAMES

#: what no prose edit may touch: code, URLs, links, HTML
BLOCKED = regex.compile(
    r"```.*?(?:```|$)|`[^`\n]*`|https?://\S+|www\.\S+|!?\[[^\]]*\]\([^)]*\)|<[^>\n]{1,200}>",
    regex.DOTALL,
)
_NAME = regex.compile(r"(?<![\w.@/#$-])\p{Lu}[\w+#-]*(?:[ ]\p{Lu}[\w+#-]*){0,2}(?![\w@/$]|-\w|\.\w)")
_UNIT = regex.compile(r"[KMGTP]i?B|[kKMG]?Hz|[KMG]bps")
_LOWERCASE_WORD = regex.compile(r"(?<![\w-])\p{Ll}[\w-]*")
_LINE_OPENING = regex.compile(r"(?:^|\n)[\s>*#+|-]*(?:\d+[.)]\s*|\[\^?\w+\]:?\s*)?")
_HEADING = regex.compile(r"^\s*(?:#.*|\*\*[^*\n]+\*\*.*|.*\|.*)$", regex.M)
_ACRONYM = regex.compile(r"\p{Lu}{2,5}\d*s?")
_CONSTANT = regex.compile(r"\p{Lu}[\p{Lu}\d_]{4,}")
_IDENTIFIER_MARK = regex.compile(r"[_\d.]")
_CAMEL = regex.compile(r"\p{Lu}+\p{Ll}[\w+#-]*\p{Lu}[\w+#-]*|\p{Lu}{2,}\p{Ll}[\w+#-]*")
_HYPHENATED_WORD = regex.compile(r"-\p{Ll}")


def blocked(text: str) -> list[tuple[int, int]]:
    """The ranges of ``text`` no edit may touch (`BLOCKED`)."""
    return [m.span() for m in BLOCKED.finditer(text)]


def free(blocked: list[tuple[int, int]], start: int, end: int) -> bool:
    """Whether ``[start, end)`` overlaps none of the ``blocked`` ranges."""
    return not any(start < b_end and b_start < end for b_start, b_end in blocked)


@functools.lru_cache(maxsize=4096)
def names(text: str) -> Mapping[str, str]:
    """The names a text holds, each with its kind: ``acronym`` ("API"), ``constant``
    ("PYTHONPATH"), ``identifier`` ("snake_case", "h2o"), ``camel`` ("GitHub"), ``name`` (one
    capitalised word) or ``names`` (two or three). A capitalised English word is a name only
    where the text never writes it in lowercase and uses it inside a sentence of prose (not only
    to open one, nor in a heading); a word the list lacks, where the text uses it inside a
    sentence at least once. English only: without the word list, no plain names.
    Cached (read only): an item's context is the next item's donor, and rules read both."""
    prose = BLOCKED.sub(" ", text)
    lowered = set(_LOWERCASE_WORD.findall(prose))
    openings = {start for start, _ in sentence_spans(prose)} | {
        m.end() for m in _LINE_OPENING.finditer(prose)
    }
    headings = [m.span() for m in _HEADING.finditer(prose)]
    inside = Counter(
        m.group()
        for m in _NAME.finditer(prose)
        if m.start() not in openings and free(headings, m.start(), m.end())
    )
    found: dict[str, str] = {}
    for match in _NAME.finditer(prose):
        name = match.group()
        while " " in name and name.split(" ", 1)[0] in NOT_NAMES:
            name = name.split(" ", 1)[1]  # "The Flask" names Flask
        if name in NOT_NAMES or len(name) < 2 or (" " in name and name.isupper()) or _UNIT.fullmatch(name):
            continue  # "THIS FILE WAS" shouts and "MiB" measures: neither names anything
        if (kind := _kind(name, inside, lowered)) is not None:
            found.setdefault(name, kind)
    return MappingProxyType(found)


def _kind(name: str, inside: Counter[str], lowered: set[str]) -> str | None:
    """What kind of name ``name`` is (see `names`), or None when it is no name."""
    if _ACRONYM.fullmatch(name):
        if len(name) >= 4 and english.is_english(name) is not False:
            return None  # "NOTE", "WARNING": a shouted word
        return "acronyms" if name.endswith("s") else "acronym"
    if _CONSTANT.fullmatch(name):
        if name.isalpha() and english.is_english(name) is not False:
            return None  # "INSTALLATION" (a heading, shouted) made "use INSTALLATION functionality"
        return "constant"
    if _IDENTIFIER_MARK.search(name):
        return "identifier"
    if " " not in name and _CAMEL.fullmatch(name):
        return "camel"
    if not english.known() or _HYPHENATED_WORD.search(name):
        return None  # "Rust-based", "Weight-only": words, not names
    if all(english.is_proper(word) or english.is_english(word) is False for word in name.split()):
        if " " not in name and not english.is_proper(name) and not inside[name]:
            return None  # "Preprocessing" only opening sentences: a word the list lacks, no name
        return "names" if " " in name else "name"
    if " " not in name and inside[name] >= 2 and name.lower() not in lowered:
        return "name"  # "Flask" inside sentences, twice or more, never "flask"
    return None


def uncommon_name(name: str) -> bool:
    """Whether no word of ``name`` is a common English word ("Django", "Werkzeug"; not "Office",
    "Mark" or "Python"): a name a swap may bring in reads as a name, never as a word."""
    return all(english.is_english(word) is False for word in name.split())
