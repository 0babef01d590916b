"""The names a code answer uses that its context never shows: what the taxonomy calls a
fabricated reference, so a clean answer holding one contradicts its label. `audit` reports them
(``ungrounded_reference``) and the code source's grounding looks up what an answer references."""

from __future__ import annotations

import builtins
import keyword
import re

_FENCE = re.compile(r"```[^\n]*\n(.*?)(?:```|$)", re.DOTALL)
#: a call of a bare name or of a method on ``self``/``cls`` (a method some class in the context
#: must define), and a raised or caught name; other attribute calls are left to the objects
#: they belong to, which a pattern cannot resolve
_USED = re.compile(
    r"(?<![\w.])([A-Za-z_]\w*)\s*\(|\b(?:self|cls)\.([A-Za-z_]\w*)\s*\(|\b(?:raise|except)\s+\(?([A-Za-z_]\w*)"
)
_DEFINED = re.compile(r"\b(?:def|class)\s+([A-Za-z_]\w*)|^\s*([A-Za-z_]\w*)\s*=(?!=)", re.MULTILINE)
#: an import, on a line of code or of a diff ("+from x import y"), its names in parentheses over
#: several lines too
_IMPORTED = re.compile(r"^[+ -]?[ \t]*(?:from[ \t]+\S+[ \t]+)?import[ \t]+(\([^)]*\)|[^\n#]+)", re.MULTILINE)
#: a comment to the end of its line (a "#" that starts a line or follows a space)
_COMMENT = re.compile(r"(?:^|(?<=\s))#[^\n]*", re.MULTILINE)
#: Python 2's builtins: SWE-bench's older repositories (requests, django) were written for it
_PYTHON2_BUILTINS = frozenset(
    {"unicode", "basestring", "long", "xrange", "file", "raw_input", "unichr", "execfile", "cmp", "buffer"}
)
#: names any Python program may use without showing where they come from
_BUILTIN_NAMES = (
    frozenset(dir(builtins)) | frozenset(keyword.kwlist) | _PYTHON2_BUILTINS | {"self", "cls", "super"}
)


def code_of(answer: str) -> str:
    """The code of an answer: its fenced blocks, or the whole answer when it has none."""
    fenced = _FENCE.findall(answer)
    return "\n".join(fenced) if fenced else answer


def imported_unshown(answer: str, context: str) -> list[str]:
    """The names a code answer imports and uses that its context never shows (``from .compat
    import builtin_str`` then ``builtin_str(method)``): real, yet a reader of the context cannot
    see them, so grounding shows their definitions too (after the ungrounded ones)."""
    code = _COMMENT.sub("", code_of(answer))
    used = {name for match in _USED.finditer(code) for name in match.groups() if name}
    imported: set[str] = set()
    for match in _IMPORTED.finditer(code):
        imported.update(re.findall(r"(?:\bas\s+)?([A-Za-z_]\w*)", match.group(1)))
    return sorted(
        name
        for name in (used & imported) - _BUILTIN_NAMES
        if not re.search(rf"(?<![\w]){re.escape(name)}(?!\w)", context)
    )


def ungrounded_names(answer: str, context: str) -> list[str]:
    """The names a code answer calls (on ``self`` or ``cls`` too), raises or catches that its
    context never shows (word-bounded), that are no builtin, and that the answer neither defines
    nor imports (an import is evidence the name exists): what the taxonomy calls a fabricated
    reference, so a clean answer that has one contradicts its label."""
    code = _COMMENT.sub("", code_of(answer))  # "the indicator (b'')" in a comment is no call
    used = {name for match in _USED.finditer(code) for name in match.groups() if name}
    own = {name for match in _DEFINED.finditer(code) for name in match.groups() if name}
    for match in _IMPORTED.finditer(code):
        own.update(re.findall(r"(?:\bas\s+)?([A-Za-z_]\w*)", match.group(1)))
    return sorted(
        name
        for name in used - own - _BUILTIN_NAMES
        if not re.search(rf"(?<![\w]){re.escape(name)}(?!\w)", context)
    )
