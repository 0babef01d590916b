"""Words as the gates and the edits read them: content words, light stems, numbers, time words,
negations, and a text's meaning with its form (case, spacing, number words, units) made alike."""

from __future__ import annotations

import functools
import re
import string
from collections import Counter

import regex

#: words that carry no content: a question about "what is the" shares them with any text
STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before
    being below between both but by can cannot could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it its
    itself just let me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them themselves
    then there these they this those through to too under until up very was we were what when where
    which while who whom why will with would you your yours yourself yourselves use used using get
    gets one ones way ways thing things many much make makes made may might must need needs
    don't doesn't didn't isn't aren't wasn't weren't hasn't haven't shouldn't wouldn't couldn't
    won't can't it's you're you'll they're
    """.split()
)

_WORD = re.compile(r"[^\W_]+(?:['’.-][^\W_]+)*", re.UNICODE)
#: `_WORD` on lowered ASCII text (measured 25% faster: gates read every context word by word)
_ASCII_WORD = re.compile(r"[a-z0-9]+(?:['.-][a-z0-9]+)*")
_NUMBER_WORDS = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
    "hundred": "100", "thousand": "1000", "million": "1000000", "billion": "1000000000",
}  # fmt: skip
_UNITS = {
    "kb": "kilobyte", "kilobytes": "kilobyte", "mb": "megabyte", "megabytes": "megabyte",
    "gb": "gigabyte", "gigabytes": "gigabyte", "ms": "millisecond", "milliseconds": "millisecond",
    "s": "second", "sec": "second", "secs": "second", "seconds": "second", "min": "minute",
    "mins": "minute", "minutes": "minute", "h": "hour", "hr": "hour", "hrs": "hour", "hours": "hour",
    "%": "percent", "pct": "percent",
}  # fmt: skip


#: texts this long are a context, read by several checks of one row: their words are cached
CACHED_FROM_CHARS = 512


def words(text: str) -> list[str]:
    """The words of ``text``, lowered. Chinese, written without spaces between its words, is cut
    into words by a segmenter (jieba's dictionary, `rjieba`), not read as one word a clause."""
    if len(text) >= CACHED_FROM_CHARS:
        return list(_context_words(text))
    return _words(text)


@functools.lru_cache(maxsize=16)  # the contexts of the last few rows: a sentence would push them out
def _context_words(text: str) -> tuple[str, ...]:
    return tuple(_words(text))


def _words(text: str) -> list[str]:
    if text.isascii():  # lowered first, the same words are found by a simpler pattern, in one call
        return _ASCII_WORD.findall(text.lower())
    found = [w.lower() for w in _WORD.findall(text)]
    if not _HAN.search(text):
        return found
    return [piece for word in found for piece in (_segmented(word) if _HAN.search(word) else (word,))]


def word_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, word) of each of `words`' words of ``text``: the same words, where they stand."""
    if text.isascii():
        return [(m.start(), m.end(), m.group()) for m in _ASCII_WORD.finditer(text.lower())]
    found = []
    for match in _WORD.finditer(text):
        word, start = match.group(), match.start()
        if not _HAN.search(word):
            found.append((start, match.end(), word.lower()))
            continue
        for piece in _segmented(word):  # the segmenter's pieces, in order, each found after the last
            at = word.find(piece)
            found.append((start + at, start + at + len(piece), piece.lower()))
            word, start = word[at + len(piece) :], start + at + len(piece)
    return found


#: a Chinese character (the scripts written with spaces between words need no segmenter)
_HAN = regex.compile(r"\p{Han}")


@functools.lru_cache(maxsize=1 << 14)
def _segmented(run: str) -> tuple[str, ...]:
    """A run of Chinese (with any digits or Latin letters joined to it) cut into its words."""
    import rjieba  # its dictionary loads on first use (0.15 s): only a text in Chinese pays it

    return tuple(piece for piece in rjieba.cut(run) if _WORD.fullmatch(piece))


def content_words(text: str) -> list[str]:
    """The words that carry content: not stopwords, not one-letter."""
    return [w for w in words(text) if _is_content(w)]


def _is_content(word: str) -> bool:
    return word not in STOPWORDS and len(word) > 1


def stem(word: str) -> str:
    """A light stem so "renders"/"rendered"/"rendering" meet (support is about content, not form):
    "ing", "ed", "es" or "s" cut from a word that keeps more than three letters.

    Called for every word of every gate, so it looks at the last letter first (68 ns a word, where
    a loop over the suffixes took 176). It is not cached: a cache of 65,536 words cost 42 ns and
    held about 10 MB once a build had read that many different words, a million items' build's
    memory beyond a small one's."""
    if len(word) > 4:
        last = word[-1]
        if last == "s":
            return word[:-2] if len(word) > 5 and word[-2] == "e" else word[:-1]
        if last == "d" and len(word) > 5 and word[-2] == "e":
            return word[:-2]
        if last == "g" and len(word) > 6 and word.endswith("ing"):
            return word[:-3]
    return word


#: what is never a content word of ASCII text: its stopwords and one-character words
_ASCII_NOT_CONTENT = STOPWORDS | frozenset(string.ascii_lowercase + string.digits)


def content_stems(text: str) -> frozenset[str]:
    """The stems of a text's content words."""
    found = set(words(text))  # each word once
    # in ASCII text a set difference finds the content words without a call per word
    content = found - _ASCII_NOT_CONTENT if text.isascii() else filter(_is_content, found)
    return frozenset(map(stem, content))


@functools.lru_cache(maxsize=256)  # one context is read by several gates of one item
def context_stems(context: str) -> frozenset[str]:
    """The stems of a context's content words, which a text's words are looked up in (cached:
    for a context only; a sentence or a word read once would push contexts out)."""
    return content_stems(context)


def support(text: str, context: str) -> tuple[float, int]:
    """(share of the text's content words found in the context, how many content words)."""
    found = context_stems(context)
    mine = [stem(w) for w in content_words(text)]
    if not mine:
        return 1.0, 0
    return sum(w in found for w in mine) / len(mine), len(mine)


def normalised(text: str) -> str:
    """A string as its meaning reads: case, spacing, punctuation, thousands separators, number
    words, "3.0" for "3" and unit spellings made alike, so an edit that changes only these is a
    no-op."""
    text = re.sub(r"(?<=\d)[,_ ](?=\d{3}\b)", "", text.lower())
    text = re.sub(r"(\d+)\.0+\b", r"\1", text)
    text = re.sub(r"(?<=\d)(?=[a-z%])", " ", text)
    tokens = re.findall(r"[^\W_]+|%", text)
    return " ".join(_UNITS.get(t, _NUMBER_WORDS.get(t, t)) for t in tokens)


def says(context: str, text: str) -> bool:
    """Whether ``context`` says ``text``, once both are `normalised` (whole words): an edit after
    which the context says the edited words leaves the claim true."""
    return f" {normalised(text)} " in _normalised_context(context)


@functools.lru_cache(maxsize=16)  # one context is asked of by every candidate edit of its answer
def _normalised_context(context: str) -> str:
    return f" {normalised(context)} "


def says_the_same(original: str, replacement: str, *, code: bool = False) -> bool:
    """Whether an edit changes nothing but form, spacing included ("HuggingFace" is "Hugging Face").
    In ``code`` only spacing is form: ``==`` and ``!=`` differ by punctuation alone."""
    if code:
        return "".join(original.split()) == "".join(replacement.split())
    return normalised(original).replace(" ", "") == normalised(replacement).replace(" ", "")


def in_context(text: str, context: str) -> bool:
    """Whether the text occurs in the context as it stands (word-bounded, case-insensitive).
    Found by search, not a pattern: the rules ask about thousands of different names, and
    compiling a pattern for each cost more than the rest of the rules together (measured)."""
    needle, hay = text.strip().lower(), context.lower()
    if not needle:
        return False
    start = hay.find(needle)
    while start >= 0:
        end = start + len(needle)
        joined_before = start > 0 and _word_character(hay[start - 1])
        joined_after = end < len(hay) and _word_character(hay[end])
        if not joined_before and not joined_after:
            return True
        start = hay.find(needle, start + 1)
    return False


def _word_character(character: str) -> bool:
    """What a regular expression's \\w matches."""
    return character.isalnum() or character == "_"


def has_number(text: str) -> bool:
    """A digit or a number word ("two", "thousand")."""
    return any(token.isdigit() or token in _NUMBER_WORDS for token in normalised(text).split())


#: words that place something in time (with any number, they make a span temporal)
TIME_WORDS = frozenset(
    """january february march april may june july august september october november december jan
    feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday
    sunday today yesterday tomorrow now then before after since until ago first last earlier later
    previous next recent recently soon once year years month months week weeks day days daily
    weekly monthly yearly annual hour hours minute minutes second seconds century decade decades
    morning evening night date time timeline deprecated released release version""".split()
)


def has_time(text: str) -> bool:
    """A number, or a word that places something in time ("since", "March", "later")."""
    return has_number(text) or any(w in TIME_WORDS for w in words(text))


#: words that deny what they qualify (an edit that adds or removes one flips its claim)
NEGATIONS = frozenset({"not", "no", "never", "none", "nothing", "neither", "nor", "cannot", "without"})
_CONTRACTED = re.compile(r"\w+n['’]t\b", re.IGNORECASE)


def negations(text: str) -> Counter[str]:
    """The negations a text holds, counted ("isn't" counts as "not")."""
    counted = Counter(w for w in words(text) if w in NEGATIONS)
    counted["not"] += len(_CONTRACTED.findall(text))
    return counted


def negation_changed(original: str, replacement: str) -> bool:
    """Whether an edit adds or removes a negation ("cannot" for "can't", or "never" for "not",
    negates as much as before: counted together)."""
    return negations(original).total() != negations(replacement).total()
