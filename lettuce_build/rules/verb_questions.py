"""Questions asked by any verb, not only the closed list of `question_words.ASKED_AS`: a
sentence whose subject does something ("The default process manager monitors the status of
child processes") is asked what it does it to ("What does the default process manager
monitor?"), one with a modal what it will do ("Uvicorn will ensure that ..." -> "What will
Uvicorn ensure?") or whether it should ("Middleware classes should not modify their state" ->
"Should middleware classes modify their state?").

Measured on real documentation paragraphs: three in four had no sentence the closed list could
turn, though most open with a subject and a verb. Which word is a verb is read by
``lemminflect`` (its dictionary ships in the wheel): a word that is also a plural noun
("monitors", "uses") counts as the verb only where an object that a verb takes follows it (an
article, code, a number), so "The process monitors restart ..." is not read as "the process".
"""

from __future__ import annotations

from typing import NamedTuple

import regex

from lettuce_build.rules.question_grammar import SUBJECT, VERB_FORMS, Shaped, after_auxiliary, as_subject
from lettuce_build.rules.verbs import VERB_OBJECT, also_noun, is_base_verb, present_base

#: verbs too light to ask by: "What does HTTPX make?" asks nothing ("makes a guess at ...")
LIGHT = frozenset(
    "be have do make get go take give come put say see seem become try look feel tend happen".split()
)
#: an adverb between a subject and its verb, left out of the question ("also", "automatically")
_ADVERB = regex.compile(r"(?:also|now|still|only|then|always|often|usually|simply|already|even|just|\w+ly)")
#: what follows a verb that makes no object a question asks for: a pronoun, a preposition, a
#: clause, an infinitive ("needs to", "allows you to") or an auxiliary ("Included templates are
#: passed ...": "templates" is no verb there)
_NO_OBJECT = frozenset(
    """it them this these those that you us me him her one to of in on for with by from as at into
    out up down over off about if whether how what when where why which who not is are was were be
    been has have had do does did will would can could should must may might""".split()
)
#: prepositions a subject of this reading may not hold ("of" it may: "the overhaul of the suite")
_PREPOSITIONS = frozenset("with in on at for by from into to as than like via through".split())
#: a preposition a verb asks with ("defaults to", "works with", "stands for")
_PARTICLES = frozenset("to on with for from into".split())
_MODAL = regex.compile(rf"^{SUBJECT} (?P<modal>will|can|may|must|should) (?P<rest>.+)$")
_SHOULD = after_auxiliary(r"(?P<modal>should|must)(?P<not> not|n't)?")


#: verbs whose object may be a clause ("Uvicorn will ensure that ..."): "What will Uvicorn ensure?"
_CLAUSE_VERBS = frozenset(
    "ensure ensures guarantee guarantees check checks verify verifies require requires".split()
)


def _asked_object(words: list[str], at: int, *, noun_too: bool) -> bool:
    """Whether the word after the verb (at ``at``) is an object a "What does ...?" asks for."""
    if at >= len(words):
        return False
    if words[at] == "that" and words[at - 1] in _CLAUSE_VERBS and at + 1 < len(words):
        return True
    if words[at].lower().strip(",.") in _NO_OBJECT:
        return False
    return not noun_too or bool(VERB_OBJECT.match(words[at]))


def _asked_phrase(words: list[str], at: int, base: str) -> str | None:
    """What a "What does X ...?" question asks after the verb at ``at`` (its base ``base``): the
    verb with an object ("monitors the status"), with "to" and a verb that has one ("needs to
    verify the identity"), or with a preposition that has one ("defaults to including ...")."""
    noun_too = also_noun(words[at])
    if _asked_object(words, at + 1, noun_too=noun_too):
        return base
    after = words[at + 1 : at + 3]
    if len(after) < 2 or after[1].lower() in _NO_OBJECT or words[at] in VERB_FORMS and after[0] != "to":
        return None
    if after[0] == "to" and is_base_verb(after[1]) and after[1] not in LIGHT:
        return f"{base} to {after[1]}" if _asked_object(words, at + 3, noun_too=False) else None
    return f"{base} {after[0]}" if after[0] in _PARTICLES else None


class _Reading(NamedTuple):
    """A sentence read as a subject (its first ``end`` words), perhaps an adverb, and a verb in
    the third person present (the word at ``at``, base form ``base``)."""

    end: int
    at: int
    base: str


#: `SUBJECT` compiled once: read for every sentence a question is sought in
_SUBJECT = regex.compile(SUBJECT)


def _read(words: list[str]) -> _Reading | None:
    """The first reading of up to five words of subject, an optional adverb and a verb (None:
    no such verb comes before something else that is one)."""
    for end in range(1, min(6, len(words))):
        at = end + 1 if end < len(words) and _ADVERB.fullmatch(words[end]) else end
        if _PREPOSITIONS.intersection(words[1:end]):
            return None  # "Rows scroll with the arrow keys": a subject holds no clause's preposition
        if at >= len(words) or not _SUBJECT.fullmatch(" ".join(words[:end])):
            continue
        base = present_base(words[at])
        if base is None and words[at] not in VERB_FORMS:
            continue
        return None if base is None else _Reading(end, at, base)
    return None


def main_verb(sentence: str) -> tuple[int, int, str] | None:
    """(start, end, base form) of the verb in the present a sentence opens with after its
    subject ("The pool invokes the function" -> the span of "invokes", "invoke"; None: none)."""
    words = sentence.split(" ")
    reading = _read(words)
    if reading is None or reading.base in LIGHT:
        return None
    if also_noun(words[reading.at]) and not _asked_object(words, reading.at + 1, noun_too=True):
        return None  # "Field aliases are now resolved": "aliases" is the subject's noun
    start = sum(len(word) + 1 for word in words[: reading.at])
    return start, start + len(words[reading.at]), reading.base


def _closed(words: list[str], at: int) -> bool:
    """Whether the verb at ``at`` is the closed list's, asked by `question_shapes` (but for "needs
    to verify", which it does not ask)."""
    return words[at] in VERB_FORMS and words[at + 1 : at + 2] != ["to"]


def _noun_phrase(words: list[str], reading: _Reading, asked: str) -> bool:
    """Whether a verb that is a noun too, asked with its preposition, is the noun of a phrase with
    no verb ("Super-simple creation options for many common input scenarios", a list item): a
    subject of several words and no determiner does not open a clause ("The timeout defaults
    to", "Click works with" do)."""
    particle = asked.rsplit(" ", 1)[-1] in _PARTICLES
    determined = reading.end == 1 or words[0].lower() in ("the", "a", "an", "each", "every")
    return particle and also_noun(words[reading.at]) and not determined


def verb_questions(text: str, name: str | None) -> list[Shaped]:
    """What ``text`` (a sentence's plain words) is asked by its verb: the first reading of up to
    five words of subject, an optional adverb and a verb that has an object."""
    words = text.split(" ")
    found: list[Shaped] = []
    reading = _read(words)
    if reading is not None and reading.base not in LIGHT and not _closed(words, reading.at):
        subject = as_subject(" ".join(words[: reading.end]), name)
        asked = _asked_phrase(words, reading.at, reading.base)
        if subject and asked and not _noun_phrase(words, reading, asked):
            found.append(Shaped(f"What does {subject} {asked}?", "Feature Specification"))
    if match := _MODAL.match(text):
        rest = match["rest"].split(" ")
        at = 1 if _ADVERB.fullmatch(rest[0]) and len(rest) > 1 else 0
        verb = rest[at]
        takes = is_base_verb(verb) and verb not in LIGHT and _asked_object(rest, at + 1, noun_too=False)
        if takes and (subject := as_subject(match["subject"], name)):
            found.append(Shaped(f"What {match['modal']} {subject} {verb}?", "Feature Specification"))
    if (match := _SHOULD.match(text)) and (subject := as_subject(match["subject"], name)):
        found.append(Shaped(f"{match['modal'].capitalize()} {subject} {match['rest']}?", "Verification"))
    return found
