"""Opposites a technical text is read for: a role swapped for its counterpart ("the HTTP
[client]" -> "the HTTP [server]", "[request] headers" -> "[response] headers"), a state for its
opposite ("[synchronous] API" -> "[asynchronous] API", "[enabled] by default" -> "[disabled] by
default").

Where the context names the counterpart too (most texts that say "client" say "server"), the edit
brings no word a string matcher could flag: it is spelled from the context, in another role, and
only reading tells it (`core.shortcuts.spelled`). The edited claim must stay false by the
context, so a swap is refused when:

- the context lists the two side by side ("request and response headers": both may hold);
- the context says the edited words with the answer's words around them (it may be true there).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import regex

from lettuce_build.core.words import says

#: counterparts in a relation (contradiction/relational): who does what to whom
_ROLES = (
    ("client", "server"), ("clients", "servers"),
    ("request", "response"), ("requests", "responses"),
    ("input", "output"), ("inputs", "outputs"),
    ("parent", "child"),
    ("sender", "receiver"), ("sends", "receives"), ("send", "receive"),
    ("upstream", "downstream"),
    ("source", "target"),
    ("import", "export"), ("imports", "exports"),
    ("upload", "download"), ("uploads", "downloads"),
    ("incoming", "outgoing"), ("inbound", "outbound"),
    ("frontend", "backend"),
    ("stdout", "stderr"),
    ("reads", "writes"),
    ("encode", "decode"), ("encodes", "decodes"), ("encoding", "decoding"),
    ("serialize", "deserialize"), ("serializes", "deserializes"),
    ("encrypt", "decrypt"), ("encrypts", "decrypts"),
    ("push", "pull"), ("pushes", "pulls"),
    ("load", "dump"), ("loads", "dumps"),
    ("getter", "setter"),
)  # fmt: skip
#: opposite states (contradiction/value): what something is, or how it is done
_STATES = (
    ("synchronous", "asynchronous"), ("sync", "async"),
    ("synchronously", "asynchronously"),
    ("enabled", "disabled"), ("enable", "disable"), ("enables", "disables"),
    ("public", "private"),
    ("local", "remote"), ("locally", "remotely"),
    ("static", "dynamic"), ("statically", "dynamically"),
    ("mutable", "immutable"),
    ("explicit", "implicit"), ("explicitly", "implicitly"),
    ("internal", "external"),
    ("encrypted", "unencrypted"),
    ("valid", "invalid"),
    ("supported", "unsupported"),
    ("compatible", "incompatible"),
    ("stable", "unstable"),
    ("secure", "insecure"),
    ("blocking", "non-blocking"),
    ("lazy", "eager"), ("lazily", "eagerly"),
    ("automatically", "manually"), ("automatic", "manual"),
    ("globally", "locally"), ("global", "local"),
    ("include", "exclude"), ("includes", "excludes"), ("included", "excluded"),
    ("accept", "reject"), ("accepts", "rejects"), ("accepted", "rejected"),
    ("online", "offline"),
    ("ascending", "descending"),
    ("lowercase", "uppercase"),
    ("development", "production"),
    ("success", "failure"),
    ("horizontal", "vertical"), ("horizontally", "vertically"),
    ("add", "remove"), ("adds", "removes"), ("added", "removed"),
    ("open", "close"), ("opens", "closes"), ("opened", "closed"),
    ("install", "uninstall"), ("installs", "uninstalls"), ("installed", "uninstalled"),
    ("create", "delete"), ("creates", "deletes"), ("created", "deleted"),
    ("allow", "prevent"), ("allows", "prevents"), ("allowed", "prevented"),
    ("inside", "outside"),
    ("ignore", "raise"), ("ignores", "raises"), ("ignored", "raised"),
    ("upper", "lower"), ("beginning", "end"),
)  # fmt: skip
#: word -> (its opposite, the rule), both ways
OPPOSITES: dict[str, tuple[str, str]] = {}
for _rule, _pairs in (("role", _ROLES), ("state", _STATES)):
    for _a, _b in _pairs:
        OPPOSITES.setdefault(_a, (_b, _rule))
        OPPOSITES.setdefault(_b, (_a, _rule))
#: a word of an opposite pair, lowercase or opening a sentence, never inside a hyphenated word,
#: a path or code
_WORD = regex.compile(r"(?<![\w'’`./:-])[A-Za-z][a-z-]+(?![\w'’`/:-]|\.\w)")
#: what separates two words of one list ("request and response headers", "read/write")
_LISTED = r"\s*(?:,|/|\band\b|\bor\b|,\s*and\b|,\s*or\b|\bnor\b)\s*"
#: what follows a word of a pair in an idiom, not a claim ("local to the method")
_IDIOM = regex.compile(r"\s+to\b")
#: how many of the answer's words on each side the context must not say with the edited word
_AROUND = 2


def listed_together(context: str, first: str, second: str) -> bool:
    """Whether the context lists the two side by side ("read and write", "client/server")."""
    return bool(_pair_listed(first, second).search(context))


@functools.lru_cache(maxsize=1024)  # compiled once a pair (most are a table's), not per answer
def _pair_listed(first: str, second: str) -> regex.Pattern[str]:
    a, b = regex.escape(first), regex.escape(second)
    # not "\b": quoted code opens and ends with a backtick, which no word boundary is next to
    return regex.compile(rf"(?<!\w)(?:{a}{_LISTED}{b}|{b}{_LISTED}{a})(?!\w)", regex.I)


def said_around(answer: str, span: tuple[int, int], new: str, context: str) -> bool:
    """Whether the context says ``new`` (put at ``span`` of the answer) with up to `_AROUND` words
    of the answer on each side ("the HTTP server is" where it says "... the HTTP server is ...")."""
    before = " ".join(answer[: span[0]].split()[-_AROUND:])
    after = " ".join(answer[span[1] :].split()[:_AROUND])
    return says(context, f"{before} {new} {after}")


def opposites(answer: str, context: str) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, opposite, "role" or "state") for each word of ``answer`` that has an opposite
    the edited answer's context would refute (see the module)."""
    for match in _WORD.finditer(answer):
        word = match.group()
        lowered = word.lower()
        if lowered not in OPPOSITES or (word != lowered and match.start() > 0):
            continue  # "Client" inside a sentence is a name's
        opposite, rule = OPPOSITES[lowered]
        if listed_together(context, lowered, opposite) or _IDIOM.match(answer, match.end()):
            continue
        if said_around(answer, match.span(), opposite, context):
            continue
        yield match.start(), match.end(), opposite.capitalize() if word != lowered else opposite, rule
