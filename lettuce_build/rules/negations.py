"""Negations added and removed, as an English writer makes them: an auxiliary contracted with
"not" ("will handle" -> "won't handle", "is a" -> "isn't a"), a verb in the present taken with
"doesn't" ("monitors the status" -> "doesn't monitor the status"), and the reverse ("doesn't
support" -> "supports", "are not reused" -> "are reused").

The contracted form is the one the answers already use (`rewording` contracts "is not" before any
edit), so a negation added reads as the answer's own; "will not" would also leave a span of three
characters ("not"), too short for the span rules. Which word is a verb is read by lemminflect, as
for the questions (`verbs`).
"""

from __future__ import annotations

from collections.abc import Iterator

import regex

from lettuce_build.rules.prose_words import UNNEGATED_ADVERBS
from lettuce_build.rules.verb_questions import main_verb
from lettuce_build.rules.verbs import third_person

#: an auxiliary and its contraction with "not"
CONTRACTED = {
    "is": "isn't",
    "are": "aren't",
    "was": "wasn't",
    "were": "weren't",
    "will": "won't",
    "can": "can't",
    "should": "shouldn't",
    "could": "couldn't",
    "would": "wouldn't",
}
_UNCONTRACTED = {contracted: auxiliary for auxiliary, contracted in CONTRACTED.items()}
_AUXILIARY = regex.compile(
    rf"\b(?P<aux>{'|'.join(CONTRACTED)})\b(?!\s+(?:not|no|never|none|nothing|{'|'.join(UNNEGATED_ADVERBS)})\b)"
    r"(?=\s+[a-z])"
)
#: a negation to remove: "is not", "isn't", "does not support", "doesn't support"
_NEGATED_AUXILIARY = regex.compile(
    rf"\b(?P<aux>{'|'.join(CONTRACTED)}) not\b|\b(?P<short>{'|'.join(_UNCONTRACTED)})"
)
_DOES_NOT = regex.compile(r"\b(?:does not|doesn't) (?P<verb>[a-z]{3,})\b")
#: a word only a negation licenses, a few words on: removing the negation would leave
#: "Werkzeug enforces any dependencies", "It exists yet"
NEEDS_NEGATION = regex.compile(
    r"(?:\s+\S+){0,3}?\s+(?:any|anything|anyone|anymore|yet|at all|either|ever)\b", regex.I
)
_WHETHER = regex.compile(r"\bwhether\b", regex.I)
_DO_NOT = regex.compile(r"\b(?:do not|don't) (?=[a-z]{3,}\b)")


def negations(answer: str) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, replacement, "negation") for each negation ``answer`` offers, added or
    removed."""
    for match in _AUXILIARY.finditer(answer):
        if _WHETHER.search(answer[max(0, match.start() - 40) : match.start()]):
            continue  # "whether or not a contribution is suitable": a negation there says the same
        contracted = CONTRACTED[match["aux"].lower()]
        yield match.start(), match.end(), _cased(contracted, match["aux"]), "negation"
    for match in _NEGATED_AUXILIARY.finditer(answer):
        word = match["aux"] or _UNCONTRACTED[match["short"].lower()]
        if not NEEDS_NEGATION.match(answer, match.end()):
            yield match.start(), match.end(), _cased(word, match.group()), "negation"
    for match in _DOES_NOT.finditer(answer):
        third = third_person(match["verb"])
        if third and not NEEDS_NEGATION.match(answer, match.end()):
            yield match.start(), match.end(), third, "negation"
    for match in _DO_NOT.finditer(answer):
        if not NEEDS_NEGATION.match(answer, match.end()):
            yield match.start(), match.end(), "", "negation"
    if found := main_verb(answer):
        start, end, base = found
        yield start, end, f"doesn't {base}", "negation"


def _cased(word: str, like: str) -> str:
    return word[0].upper() + word[1:] if like[:1].isupper() else word
