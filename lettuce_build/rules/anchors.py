"""Edit anchors: the strings of an answer an injected edit may replace.

Under structured output each edit's ``original`` is constrained to one of these candidates
(a JSON-schema ``enum``), so every edit the model returns can be located in the answer: a
model that cannot copy text verbatim no longer has to. Candidates are taken from the answer
itself, deterministically:

- facts: numbers with their units, versions, dates, URLs and paths, ``--flags``, backticked
  code (its inside, so the backticks stay where they were), dotted and snake/camel-case
  identifiers, capitalised names;
- anchors for additions: whole sentences and clauses, which an edit extends;
- for code answers, only what lies inside the fenced blocks: identifiers, numbers, string
  literals and whole lines.

Every candidate is word-bounded (never "red" inside "redirected"); there are at most
``limit``, a seeded sample in answer order when there are more.
"""

from __future__ import annotations

import regex

from lettuce_build.core.edits import word_bounded
from lettuce_build.core.seeding import rng
from lettuce_build.core.sentences import sentence_spans
from lettuce_build.core.spans import fenced_regions

MAX_CANDIDATES = 40
MIN_CHARS = 2
MAX_CHARS = 300

_W = r"[\p{L}\p{N}_]"


def _bounded_pattern(pattern: str) -> regex.Pattern[str]:
    return regex.compile(rf"(?<!{_W})(?:{pattern})(?!{_W})")


_UNIT = (
    r"%|ms|µs|ns|s|sec|seconds?|minutes?|min|hours?|h|days?|weeks?|months?|years?|[KMGT]i?B|[kKMG]?Hz|"
    r"bytes?|bits?|px|pt|em|rows?|lines?|items?|requests?|tokens?|cores?|threads?|x|times|users?|files?"
)
_FACTS = [
    r"https?://[^\s)>\]\"'`]+[^\s)>\]\"'`.,;:]",  # URLs
    r"(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]+",  # paths
    r"--?[A-Za-z][\w-]*(?:=[^\s`]+)?",  # flags
    r"v?\d+(?:\.\d+){1,3}(?:[-+.]?(?:alpha|beta|rc|dev|post)\d*)?",  # versions
    r"(?:19|20)\d{2}-\d{2}-\d{2}",  # ISO dates
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
    r"(?:\s+\d{1,2},?)?\s+(?:19|20)\d{2}",  # written dates
    rf"\d+(?:[.,]\d+)*(?:\s?(?:{_UNIT}))?",  # numbers with units
    r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?",  # dotted identifiers
    r"[a-z]+_[a-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]+",  # snake_case, camelCase
    r"[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*",  # capitalised names (and runs of them)
]
_FACT = _bounded_pattern("|".join(f"(?:{p})" for p in _FACTS))
_BACKTICKED = regex.compile(r"`([^`\n]{1,80})`")
_CLAUSE = regex.compile(r"[^,;\n]+")
_CODE_TOKEN = _bounded_pattern(
    r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*|\d+(?:\.\d+)?|\"[^\"\n]{1,60}\"|'[^'\n]{1,60}'"
)
#: capitalised words that start sentences and name nothing
_COMMON = frozenset(
    "A An And As At But By For From How If In It Its No Not Of On Or So The Then There These This "
    "Those To Use When Where Which While With You Your Yes To We Our".split()
)
_KEYWORDS = frozenset(
    "and as assert async await break class continue def del elif else except False finally for from "
    "if import in is lambda None nonlocal not or pass raise return self True try while with yield".split()
)


def sentences(text: str) -> list[tuple[int, str]]:
    """(offset, sentence) of each sentence of each line, stripped."""
    found, position = [], 0
    for line in text.split("\n"):
        found += [(position + start, line[start:end]) for start, end in sentence_spans(line)]
        position += len(line) + 1
    return found


def _prose_candidates(text: str, offset: int, found: dict[str, int]) -> None:
    split = sentences(text)
    starts = {start for start, _ in split}
    for match in _FACT.finditer(text):
        value = match.group(0).strip()
        single_word_opening = match.start() in starts and " " not in value and value[:1].isupper()
        if value in _COMMON or single_word_opening or value.lower() in {"a", "i"}:
            continue  # "Run" opening a sentence names nothing
        found.setdefault(value, offset + match.start())
    for match in _BACKTICKED.finditer(text):
        found.setdefault(match.group(1), offset + match.start(1))
    for start, sentence in split:
        if len(sentence) >= 12:
            found.setdefault(sentence, offset + start)
            for clause in _CLAUSE.finditer(sentence):
                part = clause.group(0).strip()
                if 12 <= len(part) < len(sentence):
                    found.setdefault(part, offset + start + clause.start() + clause.group(0).index(part))


def _code_candidates(text: str, offset: int, found: dict[str, int]) -> None:
    for match in _CODE_TOKEN.finditer(text):
        value = match.group(0)
        if value not in _KEYWORDS:
            found.setdefault(value, offset + match.start())
    position = 0
    for line in text.split("\n"):
        stripped = line.strip()
        if len(stripped) >= 8:
            found.setdefault(stripped, offset + position + line.index(stripped))
        position += len(line) + 1


def candidates(
    answer: str, *, code: bool = False, limit: int = MAX_CANDIDATES, seed: tuple[object, ...] = ()
) -> list[str]:
    """The answer's edit anchors, in answer order; a sample of ``limit`` seeded by ``seed`` (see
    `seeding.item_parts`) when there are more.

    ``code``: only what lies inside fenced blocks (the whole answer when it has no fences).
    """
    found: dict[str, int] = {}
    if code:
        regions = fenced_regions(answer) or [(0, len(answer))]
        for start, end in regions:
            _code_candidates(answer[start:end], start, found)
    else:
        _prose_candidates(answer, 0, found)
    usable = [
        (position, value)
        for value, position in found.items()
        if MIN_CHARS <= len(value) <= MAX_CHARS
        and answer.startswith(value, position)
        and word_bounded(answer, position, position + len(value))
    ]
    usable.sort()
    if len(usable) > limit:
        usable = sorted(rng("anchors", *seed).sample(usable, limit))
    return [value for _, value in usable]
