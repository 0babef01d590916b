"""Coding agents' mistakes a small model cannot break: mutations of the gold fix, offered as a menu.

The embedded model's own code edits were rarely code (an identifier replaced by a sentence, a
line by half a function) and, when they were, renamed things at random ("timestamp" ->
"tikkaket"). Here the edits are made mechanically from the fix's new lines, as mutation testing
makes them, and the model only chooses one through a JSON-schema enum:

- ``wrong_implementation``: a comparison, boolean or arithmetic operator flipped, a condition
  negated, an integer off by one, a call to its counterpart (``min`` -> ``max``, ``getattr`` ->
  ``setattr``);
- ``unrequested_change``: a default of the fixed function changed (``strict=False`` ->
  ``strict=True``, ``retries=3`` -> ``retries=6``);
- ``fabricated_api``: a member renamed to a plausible one the context does not show
  (``get_items`` -> ``fetch_items``); the stage then refuses a name the repository has.

Each edit replaces one whole line of the new code (a line that occurs once in the answer), so
its span is the line a reviewer would flag. A mutation may leave behaviour unchanged (an
unreachable branch); the span judge (``--verify``) reads them like any edit.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator

import regex
from pydantic import BaseModel

from lettuce_build.core.seeding import rng
from lettuce_build.core.spans import fenced_regions

#: a menu offers at most this many mutations (a seeded sample in answer order)
MAX_MUTATIONS = 12

_STRING = regex.compile(r"""(?:[rbuf]{0,2})(?:"[^"\n]*"|'[^'\n]*')""")
_COMMENT = regex.compile(r"#.*$")
_INT = regex.compile(r"(?<![\w.])\d+(?![\w.])")
_CONDITION = regex.compile(r"^(\s*(?:el)?if |\s*while )(.+):$")
#: a condition an operator flip already mutates, or that "not" would not simply negate
_COMPARES = regex.compile(r"==|!=|<|>|\bis\b|\bin\b|\band\b|\bor\b")
_DEF = regex.compile(r"^\s*(?:async\s+)?def \w+\(")
_DEFAULT = regex.compile(r"(?<=[(,]\s*\w+(?:\s*:\s*[\w.\[\], ]+)?\s*=\s*)(True|False|\d+)(?=\s*[,)])")
_MEMBER = regex.compile(r"(?<=\.)([a-z_][a-z0-9_]*)(?=\s*\()")
#: operators flipped as a coding agent gets them wrong, tried in this order (``is not`` before ``is``)
_OPERATORS = (
    (" == ", " != "),
    (" != ", " == "),
    (" <= ", " < "),
    (" >= ", " > "),
    (" < ", " <= "),
    (" > ", " >= "),
    (" is not ", " is "),
    (" is ", " is not "),
    (" not in ", " in "),
    (" and ", " or "),
    (" or ", " and "),
    (" + ", " - "),
    (" - ", " + "),
)
_WORDS = {"True": "False", "False": "True"}
#: calls and their counterparts: the same shape, the other behaviour
_COUNTERPARTS = dict(
    pair
    for a, b in (
        ("min", "max"),
        ("getattr", "setattr"),
        ("startswith", "endswith"),
        ("append", "extend"),
        ("lower", "upper"),
        ("keys", "values"),
        ("any", "all"),
        ("lstrip", "rstrip"),
        ("encode", "decode"),
        ("isinstance", "issubclass"),
        ("floor", "ceil"),
        ("sorted", "reversed"),
        ("remove", "discard"),
        ("search", "match"),
        ("loads", "dumps"),
        ("warning", "error"),
    )
    for pair in ((a, b), (b, a))
)
#: how a member's name is turned into a plausible one that may not exist
_RENAMES = (
    ("get_", "fetch_"),
    ("set_", "update_"),
    ("is_", "has_"),
    ("has_", "is_"),
    ("add_", "register_"),
    ("remove_", "delete_"),
    ("to_", "as_"),
    ("make_", "create_"),
    ("load_", "read_"),
    ("read_", "load_"),
    ("_from_", "_of_"),
)


class Mutation(BaseModel):
    """One offered mistake: a line of the fix and the line with the mistake in it."""

    error: str
    original: str
    hallucinated: str

    @property
    def entry(self) -> str:
        """How the menu shows it, and what the model answers with."""
        return f"{self.original}  ->  {self.hallucinated}"


class MutationChoice(BaseModel):
    mistake: str


def new_code_lines(answer: str) -> list[str]:
    """The lines of the fix's new code, stripped, each occurring once in the answer: a diff's
    added lines (without their ``+``), the block after "with:" of a replacement, every line of a
    fixed function; never the code a replacement removes (editing it changes nothing the fix does)."""
    found: list[str] = []
    for start, end in fenced_regions(answer):
        fence_start = answer.rfind("\n", 0, start - 1) + 1
        fence = answer[fence_start:start].strip()
        introduction = answer[:fence_start].rstrip("\n").rsplit("\n", 1)[-1]
        if introduction.endswith("replace:"):
            continue  # the code being replaced
        lines = answer[start:end].split("\n")
        in_docstring = _opens_in_docstring(lines)
        for line in lines:
            if fence == "```diff":
                if line.startswith(("-", "@@", "+++")):
                    continue
                added, line = line.startswith("+"), line[1:]
            else:
                added = True
            # a docstring's lines document the code, they do not run (seen live: a usage
            # example in flask's Config.from_file docstring offered as a line to mutate)
            quotes = line.count('"""') + line.count("'''")
            if quotes or in_docstring:
                in_docstring = in_docstring != (quotes % 2 == 1)
                continue
            if added:
                found.append(line.rstrip())
    # a comment or a doctest's line is no code the fix runs; nor is a line with a URL outside
    # a string (a docstring's text: seen live, "https://docs.python.org/3/..." offered as code)
    lines = [
        line
        for line in found
        if line.strip() and not line.strip().startswith(("#", ">>>", "...")) and "://" not in _masked(line)
    ]
    return [line.strip() for line in lines if answer.count(line.strip()) == 1]


def _opens_in_docstring(lines: list[str]) -> bool:
    """Whether a block (a hunk's side) starts inside a docstring: its first triple quote stands
    alone on its line (a docstring's close), not after a ``def`` or ``class`` line (an opening)."""
    before = ""
    for line in lines:
        code = line[1:] if line[:1] in "+- " and line[1:2] == " " else line
        if '"""' in code or "'''" in code:
            alone = code.strip() in ('"""', "'''")
            return alone and not before.rstrip().endswith(":")
        before = code if code.strip() else before
    return False


def _masked(line: str) -> str:
    """The line with its strings and comment blanked, so mutations touch only code."""
    masked = _STRING.sub(lambda m: " " * len(m.group()), line)
    return _COMMENT.sub(lambda m: " " * len(m.group()), masked)


def _at(line: str, start: int, end: int, new: str) -> str:
    return line[:start] + new + line[end:]


def _wrong_implementations(line: str, code: str) -> Iterator[str]:
    for old, new in _OPERATORS:
        if (at := code.find(old)) >= 0 and not (old == " - " and "=" not in code):
            yield _at(line, at, at + len(old), new)
            break  # one operator per line: the menu stays varied
    if (match := _CONDITION.match(code)) and not _COMPARES.search(match.group(2)):
        condition = line[match.start(2) : match.end(2)]  # the line's own text, strings kept
        negated = condition[4:] if condition.startswith("not ") else f"not {condition}"
        yield _at(line, match.start(2), match.end(2), negated)
    for match in regex.finditer(r"\b(True|False)\b", code):
        if not _DEF.match(code):  # a changed default is an unrequested change
            yield _at(line, match.start(), match.end(), _WORDS[match.group()])
            break
    if not _DEF.match(code) and (match := _INT.search(code)):
        value = int(match.group())
        yield _at(line, match.start(), match.end(), str(value + 1 if value != 1 else 0))
    for match in regex.finditer(r"\b([a-z_]+)(?=\()", code):
        if counterpart := _COUNTERPARTS.get(match.group(1)):
            yield _at(line, match.start(1), match.end(1), counterpart)
            break


def _unrequested_changes(line: str, code: str) -> Iterator[str]:
    if not _DEF.match(code):
        return
    for match in _DEFAULT.finditer(code):
        value = match.group(1)
        new = _WORDS.get(value) or str(int(value) * 2 if int(value) else 1)
        yield _at(line, match.start(1), match.end(1), new)


def _fabrications(line: str, code: str, seen: str) -> Iterator[str]:
    for match in _MEMBER.finditer(code):
        name = match.group(1)
        for old, new in _RENAMES:
            if old in name:
                renamed = name.replace(old, new, 1)
                if not regex.search(rf"\b{regex.escape(renamed)}\b", seen):
                    yield _at(line, match.start(1), match.end(1), renamed)
                break


_MAKERS: dict[str, Callable[[str, str, str], Iterator[str]]] = {
    "wrong_implementation": lambda line, code, seen: _wrong_implementations(line, code),
    "unrequested_change": lambda line, code, seen: _unrequested_changes(line, code),
    "fabricated_api": _fabrications,
}


@functools.lru_cache(maxsize=256)
def mutations(answer: str, context: str, error: str, seed: tuple[object, ...] = ()) -> tuple[Mutation, ...]:
    """The mistakes of kind ``error`` the fix's new lines can take, in answer order; a seeded
    sample of `MAX_MUTATIONS` when there are more. Names a fabrication invents are absent from
    the context and the answer (the repository is asked later). Cached: an item's schema,
    prompt and parse all read them."""
    found: dict[str, Mutation] = {}
    seen = f"{context}\n{answer}"
    for line in new_code_lines(answer):
        for hallucinated in _MAKERS[error](line, _masked(line), seen):
            if hallucinated != line and hallucinated.strip():
                mutation = Mutation(error=error, original=line, hallucinated=hallucinated)
                found.setdefault(mutation.entry, mutation)
    offered = list(found.values())
    if len(offered) > MAX_MUTATIONS:
        keep = set(rng(*seed, "mutations").sample(range(len(offered)), MAX_MUTATIONS))
        offered = [m for index, m in enumerate(offered) if index in keep]
    return tuple(offered)
