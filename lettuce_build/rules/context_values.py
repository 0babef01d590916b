"""Contradictions spelled from the context: a number, year or version of the answer replaced by
another of the same kind that the context holds in another role, before any value is invented.

A detector that only spells ("which word of the answer does the context lack?") finds an invented
"35 rows" at once; "10 rows", where the context says "10" of another setting, it finds only by
reading. A value is of the same kind as the original when it is a count with the same unit word
("50 rows" and "10 rows"), a year, or a version. The edited claim must stay false by the context,
so a value is refused when:

- the context lists it beside the original ("tested on 3.10, 3.11 and 3.12": each of them holds);
- the answer states it elsewhere (the edit would repeat the answer, not contradict it);
- the context says what the edited answer says around the value ("a pool timeout of 10 seconds").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from random import Random

import regex

from lettuce_build.core.sentences import sentence_spans
from lettuce_build.core.words import says

#: what separates the items of a list of values: commas, "and", "or", "to", other values
_LIST_GAP = regex.compile(r"^(?:\s|,|;|/|\band\b|\bor\b|\bto\b|v?\d[\d.,%]*)*$", regex.I)
#: a value as a list holds it: a number, a dotted version, a year
_VALUE = regex.compile(r"(?<![\w.])v?\d+(?:[.,]\d+)*")
#: the words before a value that say what it is of (matched backwards from the value), and the
#: word after it (its unit)
CLAIM_WORDS = 3
_WORDS_BEFORE = regex.compile(rf"(?:[^\W_]+\W+){{1,{CLAIM_WORDS}}}", flags=regex.REVERSE)
_WORD_AFTER = regex.compile(r"\W+[^\W_]+")
#: the unit word after a count ("50 rows", "4 MB")
_UNIT = regex.compile(r"\s*([^\W\d_]+|%)")


def unit_of(text: str, end: int) -> str:
    """The unit word after the value ending at ``end``, lowered and without a plural "s"."""
    found = _UNIT.match(text, end)
    word = found.group(1).lower() if found else ""
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def from_context(
    answer: str,
    span: tuple[int, int],
    *,
    context: str,
    values: Callable[[str], Sequence[tuple[int, int, str]]],
    unit: str | None = None,
    draw: Random,
) -> str | None:
    """A value of the context to put at ``span`` of ``answer``, or None where it holds none that
    may stand there. ``values``: (start, end, value) of every value of this kind in a text;
    ``unit``: for a count, the unit word (`unit_of`) the context's value must have too."""
    start, end = span
    original = answer[start:end]
    stated = {value for s, e, value in values(answer) if (s, e) != (start, end)}
    offered = {
        value
        for s, e, value in values(context)
        if value != original and value not in stated and (unit is None or unit_of(context, e) == unit)
    }
    fitting = [value for value in sorted(offered) if not refused(answer, span, value, context=context)]
    return draw.choice(fitting) if fitting else None


def refused(answer: str, span: tuple[int, int], value: str, *, context: str) -> bool:
    """Whether putting ``value`` at ``span`` of ``answer`` would leave the claim true by the
    context: it lists the value beside the original, or one of its sentences says the same.
    Asked of every new value, drawn from the context or invented."""
    original = answer[span[0] : span[1]]
    return _listed_beside(context, original, value) or _context_says(answer, span, value, context)


def _listed_beside(context: str, original: str, value: str) -> bool:
    """Whether a sentence of the context lists ``value`` with ``original`` (only separators and
    other values between them): "tested on 3.10, 3.11 and 3.12"."""
    for s, e in sentence_spans(context):
        sentence = context[s:e]
        found = {m.group(): m.span() for m in _VALUE.finditer(sentence)}
        if original in found and value in found:
            (_, first_end), (second_start, _) = sorted((found[original], found[value]))
            if _LIST_GAP.match(sentence[first_end:second_start]):
                return True
    return False


def _context_says(answer: str, span: tuple[int, int], value: str, context: str) -> bool:
    """Whether the context says what the edited answer says around the value: the value with the
    words before it (up to `CLAIM_WORDS`, within its sentence) and the word after it ("a pool
    timeout of [10] seconds" where the context sets "a pool timeout of 10 seconds")."""
    start, end = span
    sentence_start = max((s for s, _ in sentence_spans(answer) if s <= start), default=0)
    before = _WORDS_BEFORE.match(answer, sentence_start, start)
    after = _WORD_AFTER.match(answer, end)
    claim = (before.group() if before else "") + value + (after.group() if after else "")
    return says(context, claim)
