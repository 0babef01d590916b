"""Text hygiene, in one place: the characters no published text may hold, found, described and
removed.

What is refused, and why each:
- lone surrogates (U+D800-U+DFFF on their own): no encoding, file or tokenizer takes them;
- C0 and C1 control characters (NUL, ESC, DEL, U+0080-U+009F...) other than tab, newline and
  carriage return: terminal escapes and binary debris, never prose;
- bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069): they make a
  text display in another order than it reads ("Trojan Source"); the marks U+200E/U+200F and
  U+061C stay, since right-to-left text uses them;
- zero-width spaces and joiners that separate nothing (U+200B, U+2060, U+FEFF, U+180E): they
  hide inside words and break matching; ZWJ and ZWNJ (U+200C, U+200D) stay, since emoji
  sequences and several scripts need them.

A model's output holding one fails its stage (``invalid_characters``, retried); an input holding
one is cleaned (or, where spans point into it, refused); `validate` and `audit` flag them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any

_INVALID = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200b\u2060\ufeff\u180e\ud800-\udfff]"
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def invalid_character(text: str) -> str | None:
    """The first refused character of ``text`` described ("U+202E RIGHT-TO-LEFT OVERRIDE at
    offset 12"), or None when the text is clean."""
    found = _INVALID.search(text)
    if found is None:
        return None
    char = found.group()
    if 0xD800 <= ord(char) <= 0xDFFF:
        name = "lone surrogate"
    else:
        name = unicodedata.name(char, "control character")
    return f"U+{ord(char):04X} {name} at offset {found.start()}"


def invalid_in(value: object, where: str = "") -> str | None:
    """The first refused character in any string of ``value`` (strings, lists and dicts of them,
    as a stage's parsed output is), with the field it is in; None when all are clean."""
    if isinstance(value, str):
        problem = invalid_character(value)
        return f"{where or 'text'}: {problem}" if problem else None
    items: Iterable[tuple[Any, Any]]
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    else:
        return None
    for key, part in items:
        if problem := invalid_in(part, f"{where}.{key}" if where else str(key)):
            return problem
    return None


def clean_text(text: str) -> str:
    """``text`` without its refused characters."""
    return _INVALID.sub("", text)


def displayable(text: str) -> str:
    """``text`` with lone surrogates shown as U+FFFD, for what only people read (failure rows,
    logs): everything else is kept as it was, so a row shows what the model wrote."""
    return _SURROGATE.sub("\ufffd", text)
