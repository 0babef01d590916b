"""The edits of values: a count changed (``number``, ``duration``), a year shifted (``date``), a
version bumped (``version``). Each takes first a value of the same kind that the context holds
in another role (context_values.py), and invents one only where the context has none: off by
one, doubled or the next round number for a count, a near year, the next or previous release.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from random import Random

import regex

from lettuce_build.core import english
from lettuce_build.rules.context_values import from_context, refused, unit_of
from lettuce_build.rules.prose_names import free
from lettuce_build.rules.prose_words import MEASURES, NUMBER_WORDS, TIME_UNITS, VERSION_WORDS

_NUMBER = regex.compile(r"(?<![\w.,/#-])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w/]|[.,]\d)")
_VERSION = regex.compile(r"(?<![\w.])(v?)(\d+)\.(\d+)(?:\.(\d+))?(?![\w]|\.\d)")
_YEAR = regex.compile(r"(?<![\w.,-])(?:19|20)\d\d(?!\w|[.,]\d)")
#: the word after a value (its unit)
FOLLOWING = regex.compile(r"\s+([\w%]+)")
#: the word and spaces just before a position, matched backwards from it (a forward search of
#: all the text before it costs as much as that text, at each number of a long context)
_NAME_BEFORE = regex.compile(r"([\w.-]+)\s+", flags=regex.REVERSE)


def _other_number(value: str, percent: bool, draw: Random) -> str | None:
    """A plausible other value of the same form: off by one, doubled, the next round number."""
    plain = value.replace(",", "")
    if "." in plain:
        decimals = len(plain.split(".")[1])
        number = float(plain)
        step = 10**-decimals
        options = [number + step, number * 2, max(number - step, step)]
        shown = [f"{o:.{decimals}f}" for o in options]
    else:
        number = int(plain)
        magnitude = 10 ** max(len(plain) - 1, 1)
        options = [number + 1, number * 2, (number // magnitude + 1) * magnitude]
        options += [number - 1] if number > 2 else []
        shown = [f"{o:,}" if "," in value else str(o) for o in options]
    fitting = [s for s in shown if s != value and (not percent or float(s.replace(",", "")) <= 100)]
    return draw.choice(sorted(set(fitting))) if fitting else None


#: a value's (start, end, text) in the text it was found in
Found = tuple[tuple[int, int, str], ...]


@functools.lru_cache(maxsize=256)  # a context is searched again for each value of its answer
def _counts(text: str) -> Found:
    """(start, end, value) of each count of ``text``: its numbers that are no year, no version
    and no release ("Python 3")."""
    versions = [m.span() for m in _VERSION.finditer(text) if _is_version(text, m)]
    years = {m.start() for m in _YEAR.finditer(text)}
    found = []
    for match in _NUMBER.finditer(text):
        start, end = match.span()
        if start in years or not free(versions, start, end):
            continue
        if _names_a_release(text, start) and not _measured(text, end):
            continue  # "Python 3" is a release, not a count
        found.append((start, end, match.group()))
    return tuple(found)


@functools.lru_cache(maxsize=256)
def _years(text: str) -> Found:
    return tuple((m.start(), m.end(), m.group()) for m in _YEAR.finditer(text))


@functools.lru_cache(maxsize=256)
def _versions(text: str) -> Found:
    return tuple((m.start(), m.end(), m.group()) for m in _VERSION.finditer(text) if _is_version(text, m))


def _same_series(original: str, text: str) -> Found:
    """The versions of ``text`` that could be another release of what ``original`` versions: the
    same major and as many parts. Another package's "4.5.0" is no Python version ("Python
    [4.5.0]+", read on redis-py's README): plausible edits stay in their series."""
    major, parts = original.lstrip("v").split(".")[0], original.count(".")
    return tuple(
        (start, end, value)
        for start, end, value in _versions(text)
        if value.lstrip("v").split(".")[0] == major and value.count(".") == parts
    )


def numbers(answer: str, context: str, draw: Random) -> Iterator[tuple[int, int, str, str]]:
    for start, end, value in _counts(answer):
        after = FOLLOWING.match(answer, end)
        unit = (after.group(1).lower() if after else "") or answer[end : end + 1]
        rule = "duration" if unit in TIME_UNITS else "number"
        # a count of the same unit the context gives in another role, else a plausible other one
        new = from_context(
            answer,
            (start, end),
            context=context,
            values=_counts,
            unit=unit_of(answer, end),
            draw=draw,
        ) or _other_number(value, answer[end : end + 1] == "%", draw)
        if new is not None and not refused(answer, (start, end), new, context=context):
            yield start, end, new, rule
    for match in regex.finditer(rf"\b(?:{'|'.join(NUMBER_WORDS)})\b", answer):
        word = match.group()
        following = NUMBER_WORDS[(NUMBER_WORDS.index(word) + 1) % len(NUMBER_WORDS)]
        yield match.start(), match.end(), following, "number"


def _is_version(text: str, match: regex.Match[str]) -> bool:
    """A dotted number is a version when it says so ("v2.1", three parts) or follows a name or
    the word "version" ("Python 3.10", "version 2.0")."""
    if match.group(1) or match.group(4) is not None:
        return True
    return not _measured(text, match.end()) and _names_a_release(text, match.start())


def _measured(text: str, end: int) -> bool:
    """Whether the number ending at ``end`` has a unit ("QDA 99.4%", "3.5 MB"): no version has."""
    after = FOLLOWING.match(text, end)
    return text[end : end + 1] == "%" or bool(after and after.group(1).lower() in MEASURES)


def _names_a_release(text: str, start: int) -> bool:
    """Whether the word before ``start`` names what a number there is a release of: "version",
    a capitalised name ("Python 3"), a package's name ("chardet 7.0")."""
    before = _NAME_BEFORE.match(text, 0, start)
    word = before.group(1) if before else ""
    if word.lower() in VERSION_WORDS:
        return True
    return bool(word.isalpha() and (word[:1].isupper() or english.is_english(word) is False))


def temporal(answer: str, context: str, draw: Random) -> Iterator[tuple[int, int, str, str]]:
    for match in _YEAR.finditer(answer):
        year, span = int(match.group()), match.span()
        # another year the context gives, else a near one
        new = from_context(answer, span, context=context, values=_years, draw=draw)
        new = new or str(year + draw.choice((-3, -2, -1, 1, 2)))
        if not refused(answer, span, new, context=context):
            yield *span, new, "date"
    for match in _VERSION.finditer(answer):
        if not _is_version(answer, match):
            continue
        series = functools.partial(_same_series, match.group())
        if named := from_context(answer, match.span(), context=context, values=series, draw=draw):
            yield *match.span(), named, "version"  # another version of the series the context names
            continue
        prefix, major, minor, patch = match.group(1), match.group(2), match.group(3), match.group(4)
        if patch is not None:
            bumped = draw.choice([f"{major}.{minor}.{int(patch) + 1}", f"{major}.{int(minor) + 1}.0"])
        else:
            older = [f"{major}.{int(minor) - 1}"] if int(minor) > 0 else []
            bumped = draw.choice([f"{major}.{int(minor) + 1}", *older])
        if not refused(answer, match.span(), prefix + bumped, context=context):
            yield *match.span(), prefix + bumped, "version"
