"""The type an edit has by what it does, whatever the model called it: the rules that keep a
span's category true to its edit, beside the taxonomy they type into.

A model asked for one kind of error often makes another: read on real READMEs with the embedded
model, "Flask is a lightweight [WSGI] web application framework" became "... is not a
lightweight ..." and was labelled a fabricated entity; "Python 3.10" became "Python 3.8" under
"claim". A detector learns the types it is shown, so the edit decides:

- an added or removed negation ("not", "never", "no", "n't") flips what the text claims: a
  contradiction, whatever else was asked;
- a number swapped for another number and nothing else: a numerical contradiction, or a
  temporal one when the number is a date or a time;
- a name swapped for another name (capitalised words on both sides, nothing else): an entity
  contradiction, unless it was asked for as a fabricated reference (a name the context never
  gives, which a swap may well be).

An edit that only removes words says nothing new (unless what it removes is a negation), and the
gates refuse it (`gates.edit_problem`, ``removal_only_edit``), which also hold what a negation
is (`words.negations`).
"""

from __future__ import annotations

import re

from lettuce_build.core.taxonomy import CONTRADICTION, FABRICATED_REFERENCE
from lettuce_build.core.words import TIME_WORDS, negation_changed, words

_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")
#: a year, a clock time or a date written with digits
_DATE = re.compile(r"\b(?:1[6-9]|20)\d\d\b|\b\d{1,2}:\d\d\b|\b\d{4}-\d\d-\d\d\b")
_NAME = re.compile(r"^(?:[A-Z][\w.+#-]*)(?:[ -][A-Z][\w.+#-]*)*$")


def _dated(text: str) -> bool:
    """A date or a time: a year, a clock time, a date, or a word that places it in time."""
    return bool(_DATE.search(text)) or any(w in TIME_WORDS for w in words(text))


def only_numbers_differ(original: str, replacement: str) -> bool:
    """Whether the two texts are the same once every number is masked, and their numbers differ."""
    masked = (_NUMBER.sub("#", original), _NUMBER.sub("#", replacement))
    return masked[0] == masked[1] and _NUMBER.findall(original) != _NUMBER.findall(replacement)


def is_name_swap(original: str, replacement: str) -> bool:
    """Two different names: capitalised words (one or more) on both sides and nothing else."""
    return (
        original.strip() != replacement.strip()
        and bool(_NAME.match(original.strip()))
        and bool(_NAME.match(replacement.strip()))
    )


def edit_type(
    original: str, replacement: str, category: str, subcategory: str | None
) -> tuple[str, str | None]:
    """The (category, subcategory) of an edit by what it does; the one given when no rule
    applies, or when it is already a contradiction of a fitting kind (a number changed in code
    may be a "value", a negated relation "relational")."""
    typed: tuple[str, str | None]
    if negation_changed(original, replacement):
        fitting, typed = None, (CONTRADICTION, None)
    elif only_numbers_differ(original, replacement):
        fitting = {"numerical", "temporal", "value"}
        typed = (CONTRADICTION, "temporal" if _dated(original) or _dated(replacement) else "numerical")
    elif is_name_swap(original, replacement) and category != FABRICATED_REFERENCE:
        fitting, typed = {"entity"}, (CONTRADICTION, "entity")
    else:
        return category, subcategory
    if category == CONTRADICTION and (fitting is None or subcategory in fitting):
        return category, subcategory
    return typed
