"""Sentences as a maintained segmenter finds them: the one place the package cuts text into
sentences (extractive answers, edit anchors, evidence, requests, questions, judges, the review
page, a cut answer's salvage).

Hand-written sentence regexes each failed a little differently: one ended a sentence at "(a.k.a.
CA bundle)", another inside "v2.0" or a path. `sentencex` knows the abbreviations of about 300
languages and reads "e.g.", "Dr.", "3.10" and "data.csv" as no end. One thing it does not know
is technical text: it ends a sentence at the dot of "./bin/run.sh". A sentence never ends inside
a run of characters with no space in it (a path, a URL, a version, a dotted name), so such a
boundary is undone here; a language written without spaces (Chinese, Japanese) ends its
sentences on its own full stops, which are no such run.
"""

from __future__ import annotations

import functools

import regex
from sentencex import get_sentence_boundaries

#: what a complete sentence ends with: a full stop, question or exclamation mark (any script's),
#: or an ellipsis, possibly inside closing quotes or brackets
_COMPLETE = regex.compile(r"(?:[.!?…。！？｡]|\.\.\.)[\"'”’)\]»」』]*$")
#: a character that continues a run of technical text (a path, URL, version or name)
_RUN = regex.compile(r"[\p{Latin}\p{N}/_~\-.#:%=@+\\]")
#: abbreviations sentencex 1.0 ends a sentence after, though a name, a number or a list always
#: follows them (found by segmenting "... ABBR dalej ..." for each: these split, the rest did not)
_ABBREVIATIONS = {
    "pl": (
        "m.in.", "tj.", "ok.", "tzw.", "ww.", "wg.", "godz.", "ds.", "im.", "al.", "zob.", "przyp.",
        "jw.", "pt.", "św.", "inż.",
    ),
    "fr": ("c.-à-d.", "M.", "Dr."),
}  # fmt: skip
#: how far before a boundary an abbreviation is looked for (the longest, its word's start and
#: the spaces after it): a boundary of an English text, or one far into a long text, copies nothing
_LOOK_BACK = 24


@functools.lru_cache(maxsize=1024)
def sentence_spans(text: str, language: str = "en") -> tuple[tuple[int, int], ...]:
    """(start, end) of each sentence of ``text``, whitespace trimmed, in order. Cached: an item's
    schema, prompt and parse often read the same text."""
    if not text.strip():
        return ()
    cuts = [0]
    for boundary in get_sentence_boundaries(language, text)[:-1]:
        at = boundary["end_index"]
        if 0 < at < len(text) and not text[at - 1].isspace() and _RUN.match(text[at]):
            continue  # inside a run with no space ("./bin/run.sh"): no sentence ends there
        if language in _ABBREVIATIONS and _after_abbreviation(text[max(0, at - _LOOK_BACK) : at], language):
            continue
        cuts.append(at)
    cuts.append(len(text))
    spans = []
    for start, end in zip(cuts, cuts[1:], strict=False):
        piece = text[start:end]
        stripped = piece.strip()
        if stripped:
            at = start + piece.index(stripped)
            spans.append((at, at + len(stripped)))
    return tuple(spans)


def _after_abbreviation(before: str, language: str) -> bool:
    """Whether ``before`` (the text just before a boundary) ends with an abbreviation of the
    language that never ends a sentence (a whole word: "blok." does not end with "ok.")."""
    before = before.rstrip()
    for abbreviation in _ABBREVIATIONS.get(language, ()):
        if before.endswith(abbreviation):
            start = len(before) - len(abbreviation)
            return start == 0 or not before[start - 1].isalpha()
    return False


def split_sentences(text: str, language: str = "en") -> list[str]:
    """The sentences of ``text``, whitespace trimmed, in order."""
    return [text[start:end] for start, end in sentence_spans(text, language)]


def is_complete(sentence: str) -> bool:
    """Whether a sentence ends as sentences end (not cut off mid-way)."""
    return bool(_COMPLETE.search(sentence.rstrip()))


def complete_prefix(text: str, language: str = "en") -> str:
    """``text`` up to the end of its last complete sentence ('' when it has none): what a
    response cut at its token limit keeps."""
    ends = [end for start, end in sentence_spans(text, language) if is_complete(text[start:end])]
    return text[: ends[-1]] if ends else ""


def sentence_count(text: str, language: str = "en") -> int:
    """How many sentences ``text`` holds."""
    return len(sentence_spans(text, language))


def sentence_cut(text: str, limit: int, language: str = "en") -> str:
    """``text`` cut to at most ``limit`` characters where a sentence ends (else at a line break,
    else at a space, else hard at the limit): a chunk or a truncated section never ends inside a
    sentence when it can help it."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    # one character past the limit shows whether a sentence ending there runs on ("v2." of "v2.0")
    spans = sentence_spans(text[: limit + 1], language)
    ends = [end for _, end in spans if end <= limit and is_complete(text[:end])]
    if ends and ends[-1] > limit // 2:
        return text[: ends[-1]]
    for separator in ("\n", " "):
        if (at := head.rfind(separator)) > limit // 2:
            return text[:at]
    return head
