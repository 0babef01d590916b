"""Unsupported additions made of the context's own words: a sentence the context says of one name,
said of another name that may stand in its place (`prose_entities.alike`) or that the context
makes the subject of a sentence too, which no sentence of the context says ("Hypercorn supports
HTTP/1.1, HTTP/2, and WebSockets." added as "Daphne supports HTTP/1.1, HTTP/2, and WebSockets.").
An added sentence of another document brings words its context lacks, and a string matcher
finds it; this one only a reader finds.

The added sentence must stand alone where it lands (`reads_alone`), and no sentence of the
context naming the other name may hold most of what it says (then it may well be supported).
"""

from __future__ import annotations

from collections.abc import Iterator
from random import Random

from lettuce_build.core import english
from lettuce_build.core.sentences import is_complete, sentence_spans
from lettuce_build.core.words import content_words, normalised
from lettuce_build.rules.prose_entities import alike
from lettuce_build.rules.prose_names import BLOCKED, names
from lettuce_build.rules.question_shapes import opening_name
from lettuce_build.rules.question_words import POINTING_BACK, THIS_MAY_NAME
from lettuce_build.rules.rewording import unlinked

#: words that open a sentence only as the next of another ("It ...", "For example, ...")
_CONTINUING = frozenset("it its they their such here then also however instead otherwise for in".split())
#: an added sentence's length in words
MIN_WORDS, MAX_WORDS = 6, 30


def reads_alone(sentence: str) -> bool:
    """Whether an added sentence stands on its own where it lands: none of its words points at
    text it left behind ("consider the following setup", "This is how you would run it")."""
    said = sentence.lower().rstrip(".").split()
    if POINTING_BACK.intersection(said) or said[0] in _CONTINUING:
        return False
    return said[0] not in ("this", "that", "these", "those") or said[1] in THIS_MAY_NAME


def addable(sentence: str) -> bool:
    """Whether a sentence may be added after an answer's: a whole plain sentence of a fitting
    length that stands alone."""
    return (
        MIN_WORDS <= len(sentence.split()) <= MAX_WORDS
        and is_complete(sentence)
        and sentence[-1] == "."
        and sentence[0].isupper()
        and not BLOCKED.search(sentence)
        and reads_alone(sentence)
    )


def _supported(sentence: str, name: str, context: str) -> bool:
    """Whether a sentence of the context naming ``name`` holds most of ``sentence``'s content words."""
    said = set(content_words(sentence))
    for start, end in sentence_spans(context):
        other = context[start:end]
        if name in other and len(said & set(content_words(other))) * 2 >= len(said):
            return True
    return False


def said_of_another(answer: str, context: str, draw: Random) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, the answer's sentence with the new one after it, "addition"): one sentence of
    the context opening with a name, said of another name of its kind, added after one of up to
    two answer sentences."""
    if not english.known():
        return
    ours = set(names(context))
    answered = normalised(answer)
    # the sentences that open with a name and its verb: each a claim about a thing it names
    opened: list[tuple[str, str]] = []
    for start, end in sentence_spans(context):
        sentence = " ".join(unlinked(context[start:end]).split())  # as answers are: links reworded away
        if (opening := opening_name((sentence,))) is not None and addable(sentence):
            opened.append((opening, sentence))
    subjects = {opening for opening, _ in opened}
    made: list[str] = []
    for opening, sentence in opened:
        if normalised(sentence) in answered:
            continue  # the answer's own claim
        for other in sorted(subjects | ours):
            if other in sentence or opening in other or other in opening:
                continue
            # another subject of the context, or a name that stands where this one stands
            kin = other in subjects or alike(opening, context, other, context)
            moved = other + sentence[len(opening) :]
            if kin and not _supported(moved, other, context):
                made.append(moved)
    answer_sentences = [(s, e) for s, e in sentence_spans(answer) if is_complete(answer[s:e])]
    if made and answer_sentences:
        added = draw.choice(made)
        for start, end in draw.sample(answer_sentences, min(2, len(answer_sentences))):
            yield start, end, f"{answer[start:end]} {added}", "addition"
