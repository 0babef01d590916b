"""What a name names, as far as a swap needs to know: a name swapped for one of another class is a
slip a reader catches without the context ("licensed under the AI license", "across multiple
JSON threads"); one of its own class is a claim only the context refutes ("the BSD license",
"multiple GPU threads").

Two names are of one class when a short list below puts them there (the kinds of names READMEs
and articles name most: languages, licenses, formats, protocols, ...), or, for a name on no
list, when both stand beside the same word ("HTTP client" and "gRPC client", "MIT license" and
"Apache license"): they fill one slot. Names of two listed classes never are."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from random import Random

import regex

from lettuce_build.core import english
from lettuce_build.core.edits import placed_at, whole_words
from lettuce_build.core.words import STOPWORDS, in_context
from lettuce_build.rules.prose_names import names, uncommon_name

#: names by class; a swap may also bring in a name from its class here that the text never names
CLASSES: dict[str, tuple[str, ...]] = {
    "programming language": (
        "Python", "Rust", "Go", "Java", "JavaScript", "TypeScript", "Ruby", "Kotlin", "Swift",
        "Scala", "Julia", "Haskell", "Perl", "PHP", "Lua", "Elixir", "Erlang", "Zig",
    ),
    "license": ("MIT", "BSD", "Apache", "GPL", "LGPL", "AGPL", "MPL", "ISC"),
    "data format": (
        "JSON", "YAML", "TOML", "XML", "CSV", "INI", "Protobuf", "MessagePack", "Avro", "Parquet",
        "Arrow", "HDF5", "NetCDF",
    ),
    "markup": ("Markdown", "CommonMark", "reStructuredText", "AsciiDoc", "HTML", "LaTeX"),
    "protocol": (
        "HTTP", "HTTPS", "FTP", "SFTP", "SMTP", "IMAP", "SSH", "TCP", "UDP", "DNS", "gRPC", "WebSocket",
        "MQTT", "AMQP", "QUIC",
    ),
    "operating system": ("Linux", "macOS", "Windows", "FreeBSD", "Android", "iOS", "Ubuntu", "Debian"),
    "processor": ("CPU", "GPU", "TPU", "NPU"),
    "Python implementation": ("CPython", "PyPy", "Jython", "IronPython", "GraalPy"),
    "package index": ("PyPI", "npm", "crates.io", "Maven Central", "RubyGems"),
    "container tool": ("Docker", "Podman", "Kubernetes", "containerd"),
    "database": ("PostgreSQL", "MySQL", "SQLite", "MariaDB", "Redis", "MongoDB", "Cassandra", "DuckDB"),
    "cloud": ("AWS", "GCP", "Azure"),
    "machine-learning framework": ("PyTorch", "TensorFlow", "JAX", "Keras", "MXNet", "PaddlePaddle"),
    "web framework": ("Django", "Flask", "FastAPI", "Starlette", "Tornado", "Sanic", "Falcon", "Bottle"),
    "browser": ("Chrome", "Chromium", "Firefox", "Safari"),
    "code host": ("GitHub", "GitLab", "Bitbucket", "Codeberg"),
    "continuous integration": ("GitHub Actions", "Travis CI", "CircleCI", "Jenkins", "AppVeyor"),
}  # fmt: skip

_CLASS_OF = {name: kind for kind, listed in CLASSES.items() for name in listed}
#: how far before or after a name its neighbouring word is looked for, in characters
_REACH = 40
#: a version after a name ("Python 3.12", "Django v5"): the two are one claim
_VERSION_AFTER = regex.compile(r"\s*(?:v|version\s+|[<>=≥≤]+\s*)?\d")


def class_of(name: str) -> str | None:
    """The listed class of ``name`` ("MIT": "license"), or None."""
    return _CLASS_OF.get(name)


def alike(name: str, text: str, other: str, other_text: str) -> bool:
    """Whether ``other`` (as ``other_text`` uses it) may stand where ``name`` stands in ``text``:
    both of one listed class, or, unless both are listed (in two classes), beside a same word."""
    kinds = class_of(name), class_of(other)
    if kinds[0] is not None and kinds[1] is not None:
        return kinds[0] == kinds[1]
    return bool(neighbours(name, text) & neighbours(other, other_text))


@functools.lru_cache(maxsize=8192)
def neighbours(name: str, text: str) -> frozenset[str]:
    """The words right before and after ``name`` wherever ``text`` names it (word-bounded),
    lowered, of three letters or more and no stopword, each marked with its side ("<" before,
    ">" after): the slot a name fills (">client" in "an HTTP client")."""
    found: set[str] = set()
    for start in whole_words(text, name):
        end = start + len(name)
        before = text[max(0, start - _REACH) : start].split()
        after = text[end : end + _REACH].split()
        for side, word in (("<", before[-1] if before else ""), (">", after[0] if after else "")):
            word = word.strip(".,;:!?()[]\"'`*").lower()
            if len(word) >= 3 and word.isalpha() and word not in STOPWORDS:
                found.add(side + word)
    return frozenset(found)


def entity_swaps(answer: str, context: str, donor: str, draw: Random) -> Iterator[tuple[int, int, str, str]]:
    """A name swapped for one that may stand in its place (`alike`): another the context names,
    else one of its listed class the context does not name (``entity``); one only the donor names
    (``foreign_entity``). A name a version follows keeps it ("Python 3.12"), and a name the
    answer says twice is left alone: one swapped, the other would give it away ("APIs with Perl
    based on standard Python type hints")."""
    if not english.known():
        return
    ours, theirs = names(context), names(donor)
    for name, kind in names(answer).items():
        if (start := placed_at(answer, name)) < 0 or name not in ours:
            continue
        if _VERSION_AFTER.match(answer, start + len(name)) or len(whole_words(answer, name)) > 1:
            continue

        def fits(other: str, name: str = name) -> bool:
            lowered = (other.lower(), name.lower())
            return (
                lowered[0] not in lowered[1]
                and lowered[1] not in lowered[0]
                and not in_context(other, answer)
            )

        def swappable(other: str, other_kind: str, *, text: str, name: str = name, kind: str = kind) -> bool:
            if other_kind in ("name", "names") and not uncommon_name(other) and class_of(other) is None:
                return False  # what is swapped in must read as a name, not a word
            listed = class_of(name) is not None and class_of(name) == class_of(other)
            return (listed or (other_kind == kind and alike(name, context, other, text))) and fits(other)

        same = sorted(o for o, k in ours.items() if swappable(o, k, text=context))
        if not same and (kind_of := class_of(name)) is not None:
            same = [o for o in CLASSES[kind_of] if fits(o) and not in_context(o, context)]
        foreign = sorted(
            o for o, k in theirs.items() if swappable(o, k, text=donor) and not in_context(o, context)
        )
        if same:
            yield start, start + len(name), draw.choice(same), "entity"
        if foreign:
            yield start, start + len(name), draw.choice(foreign), "foreign_entity"
