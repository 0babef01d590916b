"""Which English word is a verb, read by ``lemminflect`` (its dictionary ships in the wheel): the
one place the question shapes, the rewordings and the negations ask it."""

from __future__ import annotations

import functools

import regex
from lemminflect import getAllLemmas, getInflection

#: what a verb that is also a plural noun must be followed by to be read as the verb
#: ("monitors the status", not "options are")
VERB_OBJECT = regex.compile(r"(?:the|a|an|all|each|every|its|their|any|both|your|no|some|`|\d)\b|`")


@functools.lru_cache(maxsize=8192)
def present_base(word: str) -> str | None:
    """The base form of a verb in the third person present ("eliminates" -> "eliminate"; None:
    the word is no such verb)."""
    if not word.islower() or not word.endswith("s"):
        return None
    for base in getAllLemmas(word).get("VERB", ()):
        if word in getInflection(base, tag="VBZ"):
            return base
    return None


def is_base_verb(word: str) -> bool:
    """Whether ``word`` is a verb in its base form ("verify")."""
    return word.islower() and word in getAllLemmas(word).get("VERB", ())


def also_noun(word: str) -> bool:
    """Whether ``word`` is a noun too ("monitors", "uses")."""
    return "NOUN" in getAllLemmas(word)


def third_person(base: str) -> str | None:
    """A verb's third person present ("change" -> "changes"; None: not a verb known)."""
    found = getInflection(base, tag="VBZ")
    return found[0] if found else None
