"""Two names of an answer swapped with each other: "The test suite for [Alembic now makes use of
SQLAlchemy]'s testing framework" -> "... for [SQLAlchemy now makes use of Alembic]'s ...". The
relation the sentence states between them is reversed, and every word of the edit is the
answer's own, so only a reader of the context finds it.

The two names must name things (no acronym, identifier or English word) of no two listed classes
(a language and an operating system are not swapped), at most a few words apart in one clause,
and joined by more than a list's "and" (in "Starlette and Uvicorn" the swap says the same). The
edited words must not be what the context says.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import regex

from lettuce_build.core import english
from lettuce_build.core.edits import whole_words
from lettuce_build.core.words import says
from lettuce_build.rules.prose_entities import class_of
from lettuce_build.rules.prose_names import names

#: the most words between two names swapped
MAX_BETWEEN = 8
#: the kinds of names that name things which may trade places (not acronyms nor identifiers)
_NAMED = frozenset({"name", "names", "camel"})
#: a clause's end between two names: each belongs to its own claim
_CLAUSE = regex.compile(r"[,;:.()\n]")
#: what joins the items of a list, and nothing else
_LISTING = regex.compile(r"^(?:\s|,|;|/|&|\band\b|\bor\b|\bas well as\b)*$", regex.I)


def swapped_names(answer: str, context: str) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, the text with the two names swapped, "swap") for each pair of names of the
    answer that may trade places (see the module)."""
    if not english.known():
        return
    placed = []
    for name, kind in names(answer).items():
        at = whole_words(answer, name)
        # a name said twice would be swapped in one place only; a sentence's opening word or an
        # acronym ("Rather", "URL") names no thing to trade
        if len(at) == 1 and kind in _NAMED and not english.is_english(name):
            placed.append((at[0], name))
    for (start, first), (other_start, second) in itertools.combinations(sorted(placed), 2):
        between = answer[start + len(first) : other_start]
        if first in second or second in first:
            continue
        classes = class_of(first), class_of(second)
        if (classes[0] or classes[1]) and classes[0] != classes[1]:
            continue
        if len(between.split()) > MAX_BETWEEN or _LISTING.match(between) or _CLAUSE.search(between):
            continue
        end = other_start + len(second)
        new = f"{second}{between}{first}"
        if not says(context, new):
            yield start, end, new, "swap"
