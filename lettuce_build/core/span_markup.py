"""Spans and code marked in a text sent for translation, and found again in what comes back.

A span is wrapped in numbered tags (``<h1>8080</h1>``) so that its new offsets come from the
translated text itself, never from a guess; a piece of code no span touches (a fenced block, an
inline ```code``` run) is sent as a numbered placeholder (``<c1/>``) and put back verbatim, so
no translator can change it. Reading the text back, every tag and placeholder must come back
exactly once and in a well-formed way, or the text is refused with the reason
(`MarkupError.reason`): a translation whose spans moved is never published.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from lettuce_build.core.errors import MarkupError

#: fenced code blocks, then inline code runs (one or more backticks, closed by as many)
_CODE = re.compile(r"```.*?```|(`+)(?!`).+?(?<!`)\1(?!`)", re.DOTALL)
#: what a marked text holds besides its words: span tags and code placeholders
_MARK = re.compile(r"<(/?)h(\d+)>|<c(\d+)\s*/>")

#: the reasons a translation is refused (each is a failure row's reason)
SPAN_LOST = "span_lost"
SPAN_DUPLICATED = "span_duplicated"
SPAN_MOVED = "span_moved"
CODE_LOST = "code_lost"


class Marked(NamedTuple):
    """A text ready to send: its marks, the code each placeholder stands for, and the spans."""

    text: str
    code: list[str]
    spans: int


def code_runs(text: str) -> list[tuple[int, int]]:
    """Where the text's code is: fenced blocks and inline code runs, in order."""
    return [match.span() for match in _CODE.finditer(text)]


def mark(text: str, spans: list[tuple[int, int]]) -> Marked:
    """``text`` with span ``i`` (1-based, in the order given) between ``<hi>`` and ``</hi>``, and
    each piece of code that overlaps no span replaced by a placeholder."""
    for start, end in spans:
        if not 0 <= start < end <= len(text):
            raise ValueError(f"span {start}-{end} is not inside a text of {len(text)} characters")
    events: list[tuple[int, int, str]] = []  # (offset, order at that offset, what goes there)
    code: list[str] = []
    for start, end in code_runs(text):
        if any(start < b and a < end for a, b in spans):
            continue  # a span inside code: the code goes as text, its tags around the span
        code.append(text[start:end])
        events.append((start, 1, f"<c{len(code)}/>"))
        events.append((end, -1, ""))
    for number, (start, end) in enumerate(spans, start=1):
        events.append((start, 2, f"<h{number}>"))
        events.append((end, 0, f"</h{number}>"))
    pieces, at, skipping_to = [], 0, None
    for offset, order, insert in sorted(events, key=lambda e: (e[0], e[1])):
        if skipping_to is None:
            pieces.append(text[at:offset])
        if order == 1:  # a code run starts: its placeholder, and the code itself is left out
            pieces.append(insert)
            skipping_to = offset
        elif order == -1:
            skipping_to = None
        else:
            pieces.append(insert)
        at = offset
    pieces.append(text[at:])
    return Marked("".join(pieces), code, len(spans))


def unmark(text: str, marked: Marked) -> tuple[str, list[tuple[int, int]]]:
    """The translated ``text`` with its code put back, and span ``i``'s offsets in it (in the
    order `mark` was given them). Raises `MarkupError` unless every span tag and placeholder came
    back exactly once, each span opened before it closes, not inside another, and not empty."""
    opened: dict[int, int] = {}
    found: dict[int, tuple[int, int]] = {}
    placed: set[int] = set()
    pieces: list[str] = []
    length, at = 0, 0
    for match in _MARK.finditer(text):
        pieces.append(text[at : match.start()])
        length += match.start() - at
        at = match.end()
        closing, span_number, code_number = match.group(1), match.group(2), match.group(3)
        if code_number is not None:
            number = int(code_number)
            if not 1 <= number <= len(marked.code) or number in placed:
                raise MarkupError(CODE_LOST, f"code placeholder {number} came back twice or unasked")
            placed.add(number)
            pieces.append(marked.code[number - 1])
            length += len(marked.code[number - 1])
            continue
        number = int(span_number)
        if not 1 <= number <= marked.spans or number in found or (not closing and number in opened):
            raise MarkupError(SPAN_DUPLICATED, f"span {number}'s tag came back more than once")
        if closing:
            if number not in opened:
                raise MarkupError(SPAN_MOVED, f"span {number} closes before it opens")
            if len(opened) > 1 and max(opened.values()) > opened[number]:
                raise MarkupError(SPAN_MOVED, f"span {number} closes inside another span")
            found[number] = (opened.pop(number), length)
        else:
            if opened:
                raise MarkupError(SPAN_MOVED, f"span {number} opens inside another span")
            opened[number] = length
    pieces.append(text[at:])
    clean = "".join(pieces)
    missing = [n for n in range(1, marked.spans + 1) if n not in found]
    if missing:
        raise MarkupError(SPAN_LOST, f"span {missing[0]} did not come back whole")
    if len(placed) < len(marked.code):
        lost = min(set(range(1, len(marked.code) + 1)) - placed)
        raise MarkupError(CODE_LOST, f"code placeholder {lost} did not come back")
    spans = [found[n] for n in range(1, marked.spans + 1)]
    for number, (start, end) in enumerate(spans, start=1):
        if not clean[start:end].strip():
            raise MarkupError(SPAN_LOST, f"span {number} came back empty")
    return clean, _trimmed(clean, spans)


def _trimmed(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans without the spaces a translator left inside their tags."""
    trimmed = []
    for start, end in spans:
        while text[start].isspace():
            start += 1
        while text[end - 1].isspace():
            end -= 1
        trimmed.append((start, end))
    return trimmed


def unmarked_words(text: str) -> str:
    """What a marked text says outside its spans and code: the words a language is told by."""
    outside, depth, at = [], 0, 0
    for match in _MARK.finditer(text):
        if depth == 0:
            outside.append(text[at : match.start()])
        if match.group(2) is not None:
            depth += -1 if match.group(1) else 1
            depth = max(depth, 0)
        at = match.end()
    outside.append(text[at:] if depth == 0 else "")
    return " ".join(" ".join(outside).split())
