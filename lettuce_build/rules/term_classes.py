"""Common words of one class swapped for another the context spells: "returns a [list]" ->
"returns a [tuple]", "a [thread] per request" -> "a [process] per request", "logged at [debug]
level" -> "logged at [warning] level". The names rule (`prose_entities`) swaps names of a class;
this one swaps the words a technical text builds its claims of, and only for one its context
spells elsewhere: a word it never spells would be found by spelling, and an invented one reads
as a slip a writer would not make ("returns a [frozenset]").

The edited claim must stay false by the context: the checks of `opposites` (not listed beside
the original, not said with the answer's words around it) hold here too. An article before the
word is made to fit the one swapped in where the edits are settled (`prose_mutations`).
"""

from __future__ import annotations

from collections.abc import Iterator

import regex

from lettuce_build.core.words import words
from lettuce_build.rules.opposites import listed_together, said_around

#: classes of words that stand in one slot of a claim, singular and plural apart; never two
#: words a text may use for one thing ("platform" and "environment", "plugin" and "extension",
#: "revision" and "migration", "parameter" and "argument"), whose swap could leave the claim
#: true, nor a word that is as often a verb ("set": "When [string] to True")
_CLASSES: tuple[tuple[str, ...], ...] = (
    ("string", "integer", "float", "boolean", "list", "dict", "tuple", "array"),
    ("strings", "integers", "floats", "booleans", "lists", "dicts", "tuples", "arrays"),
    ("function", "method"), ("functions", "methods"),
    ("class", "instance"), ("classes", "instances"),
    ("module", "package"), ("modules", "packages"),
    ("attribute", "argument"), ("attributes", "arguments"),
    ("thread", "process"), ("threads", "processes"),
    ("debug", "info", "warning", "error", "critical"),
    ("file", "directory"), ("files", "directories"),
    ("header", "body", "cookie", "query"), ("headers", "cookies"),
    ("row", "column", "cell"), ("rows", "columns", "cells"),
    ("key", "value"), ("keys", "values"),
    ("memory", "disk", "database"),
    ("exception", "warning"), ("exceptions", "warnings"),
    ("line", "word", "character", "byte"), ("lines", "words", "characters", "bytes"),
    ("width", "height"),
    ("prefix", "suffix"), ("prefixes", "suffixes"),
    ("host", "port", "path"), ("hosts", "ports", "paths"),
    ("returns", "raises"),
    ("test", "benchmark"), ("tests", "benchmarks"),
    ("user", "developer", "maintainer"), ("users", "developers", "maintainers"),
    # databases and migrations
    ("table", "column", "index", "constraint", "schema", "view", "sequence"),
    ("tables", "indexes", "constraints", "schemas", "views", "sequences"),
    ("session", "connection", "transaction", "cursor", "engine"),
    ("sessions", "connections", "transactions", "cursors", "engines"),
    ("upgrade", "downgrade"),
    # command lines, logging and web applications
    ("command", "flag"), ("commands", "flags"),
    ("logger", "handler", "formatter", "filter"), ("loggers", "handlers", "formatters", "filters"),
    ("encoder", "decoder", "validator"), ("encoders", "decoders", "validators"),
    ("timeout", "limit", "retry"), ("timeouts", "limits", "retries"),
    ("certificate", "key", "token", "password"), ("certificates", "tokens", "passwords"),
    # places, people and time, for passages of any field
    ("north", "south", "east", "west"), ("northern", "southern", "eastern", "western"),
    ("city", "village", "county", "region", "province"),
    ("father", "mother", "son", "daughter", "brother", "sister", "uncle", "wife", "husband"),
    ("king", "queen", "prince", "princess", "emperor"),
    ("spring", "summer", "autumn", "winter"),
    ("morning", "afternoon", "evening", "night"),
    ("army", "navy"), ("river", "lake", "sea"),
    ("largest", "smallest"), ("oldest", "youngest"), ("highest", "lowest"),
    ("won", "lost"), ("born", "died"), ("elected", "appointed"),
)  # fmt: skip
#: each word and the others of its classes
KIN: dict[str, tuple[str, ...]] = {}
for _class in _CLASSES:
    for _word in _class:
        KIN[_word] = tuple(dict.fromkeys((*KIN.get(_word, ()), *(w for w in _class if w != _word))))
#: a lowercase word standing alone (not in code, a path, or a hyphenated or dotted word)
_WORD = regex.compile(r"(?<![\w'’`./:-])[a-z]+(?![\w'’`/:-]|\.\w)")


def class_swaps(answer: str, context: str) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, kin, "term") for each word of ``answer`` of a class of which the context
    spells another word that leaves the answer false by the context (see the module); the kin
    the context spells most often."""
    counts: dict[str, int] = {}
    for word in words(context):
        counts[word] = counts.get(word, 0) + 1
    in_answer = set(words(answer))
    for match in _WORD.finditer(answer):
        word = match.group()
        fitting = [
            kin
            for kin in KIN.get(word, ())
            if counts.get(kin)
            and kin not in in_answer
            and not listed_together(context, word, kin)
            and not said_around(answer, match.span(), kin, context)
        ]
        if fitting:
            best = max(fitting, key=lambda kin: (counts[kin], kin))
            yield match.start(), match.end(), best, "term"
