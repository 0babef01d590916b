"""A question for a sentence no shape fits: what a reader should know about the thing it names
("Click provides a {func}`get_app_dir` function which returns ..." -> "What should I know about
`get_app_dir`?", as a user asks; never "What does the passage say ...?", a question about its
prompt that the gates refuse). Most documentation sentences fit no shape ("This allows you to
...", a gerund subject, a long clause): asked this way, a passage that names something specific
to one of its sentences still makes a sample.

The topic is, in turn: code the sentence quotes, a name it gives (not one as common as "API"),
or its subject when that is a short noun phrase opening with "the" ("the test suite").
The question must point at its sentence: the first sentence of the passage sharing most of its
words says what it says (`stages.question_choice`), so a topic the passage names everywhere is
no topic.
"""

from __future__ import annotations

import regex

from lettuce_build.core import english
from lettuce_build.core.words import STOPWORDS
from lettuce_build.rules.prose_names import names
from lettuce_build.rules.question_grammar import Shaped, plain
from lettuce_build.rules.question_words import POINTING_BACK

#: code a sentence quotes: up to three tokens and 60 characters, holding a letter and no string
#: ("`get_app_dir`", "`alembic check`", "`.EnvironmentContext.configure.compare_type`")
_CODE = regex.compile(r"`(?=[^`]{2,60}`)(?=[^`]*[A-Za-z])[^`\s\"'=]+(?: [^`\s\"'=]+){0,2}`")
#: a sentence's subject ("The", then two to four words: "the pool" or "a client" is asked
#: about too vaguely), then a verb-like word
_SUBJECT = regex.compile(
    r"^(?P<subject>The [a-z][\w-]*(?: [a-z][\w-]*){1,3}?)"
    r" (?:is|are|was|were|has|have|can|will|should|must|may|does|do|[a-z]+s)\b"
)
#: code that is a literal, no topic of its own
_LITERALS = frozenset("`True` `False` `None` `null` `true` `false`".split())
#: names too common to be a sentence's own topic
_GENERIC = frozenset("API APIs SQL URL URLs URI HTTP HTTPS JSON CLI UI OS".split())
#: inline code of any kind: what a sentence quotes, not what it is written in
_ANY_CODE = regex.compile(r"`[^`\n]*`")
#: code written as prose, no sentence ("bowie = dict(name=...)")
_CODE_LIKE = regex.compile(r"\w\s*=\s*[\w\"'(\[]|\w\([^)]*=")
#: a sentence that credits someone, claiming nothing ("Pull request courtesy ...")
_CREDIT = regex.compile(r"^(?:Pull request|Patch|Contributed|Thanks|Courtesy)\b", regex.I)


def topic_question(sentence: str, name: str | None) -> Shaped | None:
    """What a reader should know about what ``sentence`` names (None: it names nothing to ask
    about)."""
    text = plain(sentence)
    if (
        _CREDIT.match(text)
        or _CODE_LIKE.search(_ANY_CODE.sub("", text))
        or (topic := _topic(text, name)) is None
    ):
        return None
    return Shaped(f"What should I know about {topic}?", "Feature Specification")


def _topic(text: str, name: str | None) -> str | None:
    code = next((c.group() for c in _CODE.finditer(text) if c.group() not in _LITERALS), None)
    if code is not None:
        return code
    named = [n for n in names(text) if n != name and n not in _GENERIC and english.is_english(n) is not True]
    if named:
        return named[0]
    said = match["subject"].lower().split() if (match := _SUBJECT.match(text)) else []
    if said and not POINTING_BACK.intersection(said) and said[-1] not in STOPWORDS:
        return "the " + " ".join(match["subject"].split()[1:])  # "the starting points of" is none
    return None
