"""The words the prose rules (stages/prose_mutations.py) read and write: English only."""

from __future__ import annotations

import regex

#: a word and what flips it, by rule: the pairs FactCC-style claims are made of
_PAIRS: dict[str, tuple[tuple[str, str], ...]] = {
    "ordering": (
        ("before", "after"),
        ("earlier", "later"),
        ("first", "last"),
        ("previous", "next"),
    ),
    "comparative": (
        ("more", "less"),
        ("faster", "slower"),
        ("larger", "smaller"),
        ("bigger", "smaller"),
        ("higher", "lower"),
        ("better", "worse"),
        ("easier", "harder"),
        ("longer", "shorter"),
        ("increases", "decreases"),
        ("increase", "decrease"),
        ("minimum", "maximum"),
        ("above", "below"),
        ("fewer", "more"),
    ),
    "quantifier": (
        ("all", "some"),
        ("always", "sometimes"),
        ("many", "few"),
        ("most", "few"),
    ),
    "modal": (
        ("must", "may"),
        ("required", "optional"),
        ("mandatory", "optional"),
        ("should", "may"),
    ),
    "negation": (
        ("cannot", "can"),
        ("never", "always"),
        ("isn't", "is"),
        ("aren't", "are"),
        ("wasn't", "was"),
        ("doesn't", "does"),
        ("don't", "do"),
        ("didn't", "did"),
        ("can't", "can"),
        ("won't", "will"),
        ("shouldn't", "should"),
    ),
}
#: word -> (its flip, the rule); a pair flips both ways unless the other way is not plain English
#: ("can" -> "cannot" is the negation rule's own; "may" -> "must" reads as often as "must" -> "may")
FLIPS: dict[str, tuple[str, str]] = {}
for _rule, _pairs in _PAIRS.items():
    for _a, _b in _pairs:
        FLIPS.setdefault(_a, (_b, _rule))
        if _rule not in ("negation", "modal") and _b not in ("more", "some"):
            FLIPS.setdefault(_b, (_a, _rule))
FLIPS["may"] = ("must", "modal")
FLIPS["optional"] = ("required", "modal")
FLIPS["can"] = ("cannot", "negation")
#: other words that contradict a word as its flip does, taken instead where the context spells one
#: and not the flip: "[most] tests" where the context says "most" of something else is found only
#: by reading, "[some] tests" by spelling (never a negative: added negatives are rationed)
ALTERNATIVES: dict[str, tuple[str, ...]] = {
    "all": ("most",),
    "most": ("all", "some"),
    "first": ("second",),
    "should": ("must",),
}

#: phrases that claim nothing to flip ("as you can see" made "as you cannot see", "no longer apply"
#: made "no shorter apply")
IDIOM = regex.compile(
    r"\b(?:as you can see|as you may know|you may also|more or less|at least|at most|first of all|no longer"
    r"|any longer)\b",
    regex.I,
)
#: a negative word, contracted or not: what a negation edit adds, and what tells a row's class
#: on its own where edits add it often (`lettuce-build audit`'s give-aways)
NEGATIVES = regex.compile(r"(?i)\b(?:not|never|cannot|no)\b|n['’]t\b")
#: quantifiers that qualify a verb, not a noun: they need nothing after them
ADVERBS = frozenset({"always", "sometimes"})
#: the auxiliaries a negation is added after ("is" -> "is not"): be and the modals ("does the
#: work" is no "does not the work")
NEGATABLE = ("is", "are", "was", "were", "will", "should", "must", "could", "would")
#: adverbs a negation added before reads as no English ("are now resolved" made "are not now
#: resolved", "is also" made "is not also")
UNNEGATED_ADVERBS = ("now", "also", "already", "still", "just", "then", "even")
#: the auxiliaries a negation is removed from ("is not" -> "is", "does not" -> "does")
NEGATED = (*NEGATABLE, "does", "do", "did")

#: number words the number rule moves on by one
NUMBER_WORDS = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
#: the units after which a number is a duration (a temporal edit, not a numerical one)
TIME_UNITS = frozenset(
    """ms millisecond milliseconds s sec secs second seconds min mins minute minutes h hr hrs hour
    hours day days week weeks month months year years""".split()
)
#: units after which a number is a measure, never a version ("3.5 MB", "2.5 times")
MEASURES = TIME_UNITS | frozenset(
    "% percent kb mb gb tb kib mib gib b bytes x times points px pt em km m cm mm kg g mg".split()
)
#: words after which a dotted number is a version ("version 2.0", "release 1.4")
VERSION_WORDS = frozenset({"version", "versions", "release", "releases", "v", "ver", "python"})
#: capitalised words that name nothing: sentence openers, literals, months and days
NOT_NAMES = frozenset(
    """A An And As At But By For From How If In Is It Its No Not Of On Or So The Then There These
    This Those To Use When Where Which While With You Your Yes We Our They Their He She His Her
    Each Every All Some Any Both True False None Null NULL NaN TRUE FALSE NONE OK I
    January February March April May June July August September October November December
    Monday Tuesday Wednesday Thursday Friday Saturday Sunday""".split()
)
