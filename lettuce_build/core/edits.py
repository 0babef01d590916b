"""Edits -> exact spans: each edit of an answer applied where its original text stands, and the
span its replacement fills in the new answer. Span labels come from the edits applied, so they
are exact by construction: no diffing. Offsets are Python string (code point) offsets into the
new answer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import regex
from pydantic import BaseModel, ConfigDict, Field

from lettuce_build.core.schema import Span, grapheme_boundaries

DropReason = Literal[
    "empty_original", "replacement_too_short", "no_op", "not_found", "overlap", "splits_grapheme"
]


class Edit(BaseModel):
    """One localised change: replace ``original`` (a substring of the clean answer) with ``hallucinated``."""

    model_config = ConfigDict(frozen=True)

    original: str
    hallucinated: str
    label: str
    category: str
    subcategory: str | None = None
    explanation: str = ""


class DroppedEdit(BaseModel):
    edit: Edit
    reason: DropReason
    detail: str


class EditResult(BaseModel):
    text: str
    spans: list[Span]
    dropped: list[DroppedEdit]
    #: the edits behind ``spans``, one each, in the same order
    applied: list[Edit] = Field(default_factory=list)


_WHITESPACE = regex.compile(r"\s+")


def _collapse(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


def _occurrences(haystack: str, needle: str) -> list[int]:
    starts, i = [], haystack.find(needle)
    while i != -1:
        starts.append(i)
        i = haystack.find(needle, i + 1)
    return starts


def whole_words(text: str, needle: str) -> list[int]:
    """Where ``text`` holds ``needle`` as whole words (cutting no word at either edge)."""
    return [s for s in _occurrences(text, needle) if word_bounded(text, s, s + len(needle))]


def placed_at(answer: str, needle: str) -> int:
    """Where `apply_edits` puts a lone edit of ``needle``: its first whole-word occurrence, else
    its first (-1: none)."""
    return (whole_words(answer, needle) or _occurrences(answer, needle) or [-1])[0]


def _overlaps(start: int, end: int, claimed: Sequence[tuple[int, int]]) -> bool:
    return any(start < c_end and c_start < end for c_start, c_end in claimed)


class _Located(BaseModel):
    start: int
    end: int
    replacement: str
    edit: Edit
    order: int


def _locate(answer: str, edit: Edit, claimed: Sequence[tuple[int, int]]) -> tuple[int, int, str] | None:
    """Where an edit applies: exact match first, then the whitespace-stripped snippet.

    Occurrences that are whole words are preferred over ones inside a longer word. A repeated
    string goes to its first occurrence that no earlier edit claimed;
    when every occurrence is claimed it takes the first one and loses the
    overlap check that follows (the earlier edit wins).
    """
    candidates = [(edit.original, edit.hallucinated)]
    stripped = edit.original.strip()
    if stripped != edit.original:
        candidates.append((stripped, edit.hallucinated.strip()))
    for needle, replacement in candidates:
        starts = _occurrences(answer, needle)
        if not starts:
            continue
        # a whole word before a piece of one: "red" is never the start of "redirected"
        starts = [s for s in starts if word_bounded(answer, s, s + len(needle))] or starts
        free = [s for s in starts if not _overlaps(s, s + len(needle), claimed)]
        start = (free or starts)[0]
        return start, start + len(needle), replacement
    return None


_WORD = regex.compile(r"[\p{L}\p{N}_]")


def word_bounded(text: str, start: int, end: int) -> bool:
    """``text[start:end]`` does not cut a word at either edge."""
    cut_before = start > 0 and _WORD.match(text[start - 1]) and _WORD.match(text[start])
    cut_after = end < len(text) and _WORD.match(text[end]) and _WORD.match(text[end - 1])
    return not cut_before and not cut_after


def apply_edits(answer: str, edits: Sequence[Edit], min_replacement_chars: int = 4) -> EditResult:
    """Apply edits to a clean answer; return the new text, its exact spans and every dropped edit.

    1. Drop empty originals, replacements shorter than ``min_replacement_chars``
       and no-ops (equal after collapsing whitespace).
    2. Locate each original (exact, then stripped), repeated strings left to
       right onto the first unused, non-overlapping match; unlocatable edits drop.
       An edit whose edges would cut a character apart (a letter from its combining marks)
       drops too: spans are code points, but never half a character.
    3. Sort by position; on overlap keep the earlier edit.
    4. Rebuild left to right: a span starts at the length emitted so far.
    """
    dropped: list[DroppedEdit] = []
    located: list[_Located] = []
    boundaries = grapheme_boundaries(answer)
    for order, edit in enumerate(edits):
        if not edit.original.strip():
            dropped.append(DroppedEdit(edit=edit, reason="empty_original", detail="original is empty"))
            continue
        if len(edit.hallucinated.strip()) < min_replacement_chars:
            dropped.append(
                DroppedEdit(
                    edit=edit,
                    reason="replacement_too_short",
                    detail=f"replacement {edit.hallucinated!r} is under {min_replacement_chars} chars",
                )
            )
            continue
        if _collapse(edit.original) == _collapse(edit.hallucinated):
            dropped.append(DroppedEdit(edit=edit, reason="no_op", detail="replacement equals original"))
            continue
        found = _locate(answer, edit, [(x.start, x.end) for x in located])
        if found is None:
            dropped.append(
                DroppedEdit(edit=edit, reason="not_found", detail=f"{edit.original!r} is not in the answer")
            )
            continue
        start, end, replacement = found
        if start not in boundaries or end not in boundaries or _combines(replacement):
            dropped.append(
                DroppedEdit(
                    edit=edit,
                    reason="splits_grapheme",
                    detail=f"[{start}, {end}) would cut a character apart (a letter from its accents)",
                )
            )
            continue
        located.append(_Located(start=start, end=end, replacement=replacement, edit=edit, order=order))

    kept: list[_Located] = []
    for item in sorted(located, key=lambda x: (x.start, x.order)):
        if kept and item.start < kept[-1].end:
            dropped.append(
                DroppedEdit(
                    edit=item.edit,
                    reason="overlap",
                    detail=f"[{item.start}, {item.end}) overlaps an earlier edit at "
                    f"[{kept[-1].start}, {kept[-1].end})",
                )
            )
            continue
        kept.append(item)

    pieces: list[str] = []
    spans: list[Span] = []
    emitted = cursor = 0
    for item in kept:
        unchanged = answer[cursor : item.start]
        pieces.append(unchanged)
        emitted += len(unchanged)
        pieces.append(item.replacement)
        spans.append(
            Span(
                start=emitted,
                end=emitted + len(item.replacement),
                text=item.replacement,
                label=item.edit.label,
                category=item.edit.category,
                subcategory=item.edit.subcategory,
            )
        )
        emitted += len(item.replacement)
        cursor = item.end
    pieces.append(answer[cursor:])
    return EditResult(text="".join(pieces), spans=spans, dropped=dropped, applied=[k.edit for k in kept])


def narrowed_to_insertions(result: EditResult) -> EditResult:
    """The result with each insertion labelled by what it added: an edit whose replacement starts
    with its whole original and goes on (a block inserted after a line) keeps that original
    true, so its span covers the added text only, without the whitespace around it."""
    spans = []
    for span, edit in zip(result.spans, result.applied, strict=True):
        kept = edit.original
        added = span.text[len(kept) :]
        if span.text.startswith(kept) and added.strip():
            start = span.start + len(kept) + len(added) - len(added.lstrip())
            text = added.strip()
            span = span.model_copy(update={"start": start, "end": start + len(text), "text": text})
        spans.append(span)
    return result.model_copy(update={"spans": spans})


def _combines(replacement: str) -> bool:
    """A replacement starting with a combining mark would fuse with the character before it."""
    return bool(replacement) and 1 not in grapheme_boundaries("a" + replacement)
