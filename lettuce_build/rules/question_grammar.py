"""The grammar the question shapes are read with: a sentence's subject, the forms of a verb, a
sentence's plain words. Shared by the shapes of a whole sentence (`question_shapes`) and those of
any verb (`verb_questions`)."""

from __future__ import annotations

from typing import NamedTuple

import regex
from lemminflect import getAllLemmas

from lettuce_build.core import english
from lettuce_build.core.words import STOPWORDS
from lettuce_build.rules.question_words import (
    ASKED_AS,
    CHANGELOG,
    DANGLING,
    IMPERATIVE,
    LOWERED,
    NOT_SUBJECT,
    POINTING_BACK,
    THIS_MAY_NAME,
)
from lettuce_build.rules.rewording import unlinked
from lettuce_build.rules.verbs import is_base_verb, present_base


class Shaped(NamedTuple):
    """A question turned from a sentence, and its type in the question taxonomy."""

    question: str
    question_type: str


#: a word of a subject: code in backticks, or a word that is no verb or clause of its own
_WORD = (
    r"(?!(?:is|are|was|were|be|been|do|does|did|not|can|cannot|will|would|should|must|may|might|could"
    r"|shall|has|have"
    r"|had|that|which|who|where|to|unless|if|when|because|while|although|though|whereas|since|until|whether"
    r"|than|but)\b|\w+n['’]t\b)(?:`[^`]{1,40}`|[\p{L}\p{N}][\p{L}\p{N}'’._/+-]*)"
)
#: a sentence's subject: up to five words, no comma, clause or parenthesis, and not ending in an
#: article, a preposition (in "Volunteers at the repair café fix ...", "repair" is no verb) or a
#: conjunction ("Small improvements or fixes are ...": "fixes" is no verb)
SUBJECT = (
    rf"(?P<subject>{_WORD}(?: {_WORD}){{0,4}}?)"
    r"(?<!\b(?i:the|a|an|its|their|our|your|this|these|each|every|at|of|in|on|for|with|to|by|from|and|or"
    r"|nor|but))"
)
END = r"\s*\.?$"
#: a count, in digits or in words ("150", "10,000", "ten")
NUMBER = (
    r"(?P<number>\d[\d,.]*|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty"
    r"|fifty|hundreds|thousands)"
)


def singular(verb: str) -> str:
    head, _, tail = verb.partition(" ")
    if head.endswith(("s", "sh", "ch", "x")):
        head += "es"
    elif head.endswith("y") and head[-2:-1] not in "aeiou":
        head = head[:-1] + "ies"
    else:
        head += "s"
    return f"{head} {tail}".strip()


def alternation(verbs: list[str]) -> str:
    forms = {form: verb for verb in verbs for form in (verb, singular(verb))}
    return "|".join(sorted((regex.escape(f) for f in forms), key=len, reverse=True))


def subject_then(predicate: str) -> regex.Pattern[str]:
    """A sentence that opens with its subject, then ``predicate`` (a pattern)."""
    return regex.compile(rf"^{SUBJECT} {predicate}")


#: a character of a plain clause: no comma, colon, bracket, question or line break
PLAIN = r"[^,;:()\[\]!?\n]"
#: code in reStructuredText: a role's (":func:`fetch`", MyST's "{func}`fetch`") or a literal
#: ("``fetch``")
RST_CODE = regex.compile(
    r"(?::[a-z]+(?::[a-z]+)?:|\{[a-z]+(?::[a-z]+)?\})`~?(?P<code>[^`\n]+)`|``(?P<code>[^`\n]+)``"
)
#: the forms of the verbs a "What does X ...?" question is asked by, and their base form
VERB_FORMS = {form: verb for verb in ASKED_AS for form in (verb, singular(verb))}


def after_auxiliary(auxiliary: str) -> regex.Pattern[str]:
    """A sentence of a subject, an auxiliary (``auxiliary``, a pattern) and one plain clause."""
    return subject_then(rf"{auxiliary} (?P<rest>[a-z]{PLAIN}{{2,90}}?){END}")


def as_subject(text: str, name: str | None) -> str | None:
    """The subject as a question says it (None: none a question can carry)."""
    first, _, rest = text.partition(" ")
    if first.lower() in ("it", "its") and name:
        return name if first.lower() == "it" else f"the {rest} of {name}" if rest else None
    if first.lower() in NOT_SUBJECT and not (first in ("This", "These") and rest):
        return None
    if first.lower() in IMPERATIVE or first.lower() in VERB_FORMS or first.lower().endswith("ly"):
        return None  # a changelog's imperative ("Add support for ...", "Gracefully handle ...")
    if first.lower() in CHANGELOG:
        return None  # a changelog's entry ("Fixed issue where indexes on SQLite ...")
    last = text.rsplit(" ", 1)[-1]
    if last.isalpha() and last.islower() and (kinds := set(getAllLemmas(last))) and kinds <= {"ADJ", "ADV"}:
        return None  # a noun phrase's adjective: "Options for more comprehensive [support] ..."
    common = (
        english.is_english(first) and not english.is_proper(first) and first.lower() != (name or "").lower()
    )
    # "Open Collective" is a name of several words; "Minimum SQLAlchemy version" is no name
    common = common and not (rest and all(word[:1].isupper() for word in rest.split(" ")))
    return f"{first.lower()} {rest}".strip() if first in LOWERED or (first.istitle() and common) else text


def base_form(verb: str) -> str | None:
    """A past tense's base form, as the word list knows it ("opened" -> "open", "moved" ->
    "move", "stopped" -> "stop", "began" -> "begin"; None: not found)."""
    if verb == "began":
        return "begin"
    stem = verb[:-2]
    candidates = (stem, verb[:-1], stem[:-1] if stem[-1:] == stem[-2:-1] else None, stem[:-1] + "y")
    return next((c for c in candidates if c and english.is_english(c)), None)


#: a bold or italic marker at a word's edge
_EMPHASIS_MARK = regex.compile(r"(?<![\w`])[*_]{1,2}|[*_]{1,2}(?![\w`])")


def plain(text: str) -> str:
    """Emphasis markers dropped (a question holds no markdown); code in backticks kept, as
    markdown writes it (reStructuredText's ":func:`fetch`" and "``fetch``" as "`fetch`")."""
    text = RST_CODE.sub(r"`\g<code>`", unlinked(text))
    return _EMPHASIS_MARK.sub("", text).strip()


#: "it" in a question stands for something before it (the project it stands for is named);
#: "its" may stand for what the question names ("Can inspecting the class show its signature?")
_IT = frozenset({"it", "It"})


def _relative(before: str, after: str) -> bool:
    """Whether "that" between ``before`` and ``after`` opens a relative clause ("exceptions that
    occur"), not a pointer back ("for that", "that string", "if that was")."""
    return (
        before.lower() not in STOPWORDS
        and before.lower() not in ("if", "when", "whether")
        and (is_base_verb(after) or present_base(after) is not None)
    )


def asks_alone(question: str) -> bool:
    """Whether a reader could ask the question without the document before it: no word points
    back at it ("What do these bindings expose?", "Is your team comfortable using them?", "What
    does clicking it jump to?", "How can you use Werkzeug for that?"), and a yes/no or "how"
    question ends in no preposition that lost its object ("Can you get the latest version of
    SymPy from?")."""
    words = question.rstrip("?").split()
    if POINTING_BACK.intersection(words) or _IT.intersection(words):
        return False
    padded = ["", *words, ""]
    for at in range(1, len(padded) - 1):
        before, word, after = padded[at - 1 : at + 2]
        if word == "this" and after.lower() not in THIS_MAY_NAME:
            return False
        if word == "that" and not _relative(before, after):
            return False
    asks_what = words[0] in ("What", "When", "Where", "Who", "Which")
    return asks_what or words[-1] not in DANGLING
