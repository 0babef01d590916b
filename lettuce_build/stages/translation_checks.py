"""What refuses a translation besides its tags: text left in the source language, text in another
language, and a span whose tags came back well formed but around other words.

Tags that come back once each can still have moved: a translator may wrap the word beside the one
marked, or the same word in another sentence. What a span holds that no language translates (its
numbers) must come back inside it, and a span stays in its sentence when the translation has as
many sentences as the source. A span moved between words that carry no number and within its
sentence is past these checks; ``--verify``'s judge reads every span against its context.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from lettuce_build.core.languages import identify
from lettuce_build.core.sentences import sentence_spans
from lettuce_build.core.span_markup import SPAN_MOVED
from lettuce_build.engine.stage import ParseFailure

NOT_TRANSLATED = "not_translated"
WRONG_LANGUAGE = "wrong_language"
#: words outside the spans this alike (difflib's ratio, word by word) to the source's are a copy
COPY_RATIO = 0.9
#: a sentence with at least this many lower-case words, the same in source and translation, was
#: left untranslated (fewer: a name, a command or a list of them, which stay as they are)
COPIED_SENTENCE_WORDS = 3

#: a number with its separators: "10,000", "10.000", "10 000" and "1,5" are each one number
_NUMBER = re.compile(r"\d+(?:[.,'’\u00a0\u202f]\d+|(?: )\d{3}(?!\d))*")
_WORD = re.compile(r"\w+")


def checked_language(source: str, text: str, source_language: str, target: str) -> None:
    """Raise the failure of ``text`` (the words around the spans) that is a copy of ``source``,
    whole or a sentence of it, or is not in ``target``."""
    # compared word by word, not character by character: a 4,000-character context took 2.7 s
    # by characters (measured), its 700 words a few milliseconds
    alike = difflib.SequenceMatcher(None, source.split(), text.split(), autojunk=False)
    if source and (
        text.casefold() == source.casefold()
        or (alike.quick_ratio() >= COPY_RATIO and alike.ratio() >= COPY_RATIO)
    ):
        raise ParseFailure(NOT_TRANSLATED, "the words around the spans are the source's, copied")
    copied = _copied_sentence(source, text, source_language, target)
    if copied is not None:
        raise ParseFailure(NOT_TRANSLATED, f"a sentence was left as it was: {copied[:120]!r}")
    found = identify(text)
    if found is not None and found != target:
        raise ParseFailure(WRONG_LANGUAGE, f"written in {found}, asked for {target}")


def _copied_sentence(source: str, text: str, source_language: str, target: str) -> str | None:
    """The first sentence of ``text`` that stands in ``source`` word for word, if any."""
    sentences = {_words(source[a:b]) for a, b in sentence_spans(source, source_language)}
    for start, end in sentence_spans(text, target):
        words = _words(text[start:end])
        if (
            sum(word.islower() and word.isalpha() for word in words) >= COPIED_SENTENCE_WORDS
            and words in sentences
        ):
            return text[start:end]
    return None


def _words(sentence: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(sentence))


def checked_places(item: dict[str, Any], answer: str, spans: Sequence[tuple[int, int]]) -> None:
    """Raise ``span_moved`` for a span that came back around other words: its numbers are not the
    source span's, or it is in another sentence of a translation with as many sentences."""
    source = item["answer"]
    for number, (label, (start, end)) in enumerate(zip(item["labels"], spans, strict=True), start=1):
        was, now = _numbers(source[label["start"] : label["end"]]), _numbers(answer[start:end])
        if was != now:
            raise ParseFailure(
                SPAN_MOVED, f"span {number} held the numbers {sorted(was)} and came back with {sorted(now)}"
            )
    before = sentence_spans(source, item["source_language"])
    after = sentence_spans(answer, item["language"])
    if len(before) != len(after) or len(before) < 2:
        return  # sentences merged or split: no sentence to hold a span to
    for number, (label, (start, _)) in enumerate(zip(item["labels"], spans, strict=True), start=1):
        held, holds = _sentence_of(before, label["start"]), _sentence_of(after, start)
        if held != holds:
            raise ParseFailure(
                SPAN_MOVED, f"span {number} was in sentence {held + 1} and came back in {holds + 1}"
            )


def _numbers(text: str) -> Counter[str]:
    """The numbers of ``text`` by their digits alone (a language's separators differ)."""
    return Counter(re.sub(r"\D", "", found) for found in _NUMBER.findall(text))


def _sentence_of(sentences: Sequence[tuple[int, int]], offset: int) -> int:
    """The index of the sentence holding ``offset`` (a space between two: the next one)."""
    for index, (_, end) in enumerate(sentences):
        if offset < end:
            return index
    return len(sentences) - 1
