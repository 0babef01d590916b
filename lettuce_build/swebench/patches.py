"""The one reader of unified diffs: files, hunks on both sides, their raw lines, and names.

Used wherever a gold patch is read: squeez (tool calls, labels), the code source (answers
built from hunks) and the sift (added lines with their patch line numbers).
"""

from __future__ import annotations

import builtins
import keyword

import regex
from pydantic import BaseModel, Field
from unidiff import LINE_TYPE_ADDED, LINE_TYPE_REMOVED, PatchedFile, PatchSet, UnidiffParseError
from unidiff.constants import LINE_TYPE_NO_NEWLINE

from lettuce_build.core.errors import PatchError

#: a line that defines a function or class, and its name
DEFINITION = regex.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)")
_ASSIGN = regex.compile(r"^\s*(?:self\.)?([A-Za-z_]\w*)\s*(?::[^=]+)?=(?!=)")
_HUNK_CONTEXT = regex.compile(r"@@[^@]*@@\s*(?:async\s+)?(?:def|class)\s+(\w+)")
_NAME = regex.compile(r"\b[A-Za-z_][A-Za-z0-9_]{3,}\b")
#: names too common to say anything about a fix: grepping them finds half the repository
_GENERIC = frozenset(
    {
        *keyword.kwlist,
        *dir(builtins),
        *"""self args kwargs name names value values data result results item items path text line
        lines func test tests kind type info msg message error key keys obj other options config
        request response method params default string number index attr""".split(),
    }
)
MAX_TELLING_NAMES = 8


class Hunk(BaseModel):
    header: str = ""
    old_start: int
    old_length: int
    new_start: int
    new_length: int
    #: old-side line numbers the patch removes, or after which it inserts (base-commit lines)
    old_changed: list[int] = Field(default_factory=list)
    #: (1-based line number in the patch, raw line with its " ", "+" or "-" prefix)
    lines: list[tuple[int, str]] = Field(default_factory=list)

    @property
    def text(self) -> str:
        """The hunk as it stands in the patch, header included."""
        return "\n".join([self.header, *(raw for _, raw in self.lines)])

    def side(self, new: bool) -> str:
        """The hunk's code before (``new=False``) or after the patch, without prefixes."""
        keep = "+" if new else "-"
        return "\n".join(raw[1:] for _, raw in self.lines if raw[:1] in ("", " ", keep))

    @property
    def first_changed_line(self) -> int:
        """The new-side line number where the hunk first adds or removes something."""
        line = self.new_start
        for _, raw in self.lines:
            if raw.startswith(("+", "-")):
                return line
            line += 1
        return line


class FilePatch(BaseModel):
    path: str
    #: the path on the old side (``a/...``); differs from ``path`` for a rename
    old_path: str = ""
    hunks: list[Hunk] = Field(default_factory=list)
    added: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)


class PatchInfo(BaseModel):
    files: list[FilePatch]

    @property
    def paths(self) -> list[str]:
        return [f.path for f in self.files]

    def file(self, path: str) -> FilePatch | None:
        return next((f for f in self.files if f.path == path), None)

    def identifiers(self) -> list[str]:
        """def/class names and assignment targets of changed lines, in patch order, without duplicates."""
        names: dict[str, None] = {}
        for file in self.files:
            for line in file.added + file.removed:
                for pattern in (DEFINITION, _ASSIGN):
                    if (match := pattern.match(line)) and len(match.group(1)) > 2:
                        names.setdefault(match.group(1), None)
        return list(names)

    def definitions(self) -> list[str]:
        """Functions and classes the patch defines or changes, and those its hunks sit in."""
        names: dict[str, None] = {}
        for file in self.files:
            for line in file.added + file.removed:
                if match := DEFINITION.match(line):
                    names.setdefault(match.group(1), None)
            for hunk in file.hunks:
                if match := _HUNK_CONTEXT.match(hunk.header):
                    names.setdefault(match.group(1), None)
        return list(names)

    def telling_names(self) -> list[str]:
        """The names that say what the fix is about, most telling first (at most 8).

        Defined names (def/class/assignment targets), then the functions the hunks sit in,
        then the other names on changed lines; never keywords, builtins or generic words,
        never dunders (``__init__`` is in every class), never shorter than 4 characters.
        """
        found: dict[str, None] = dict.fromkeys(self.identifiers())
        found.update((name, None) for name in self.definitions() if name not in found)
        for file in self.files:
            for line in file.removed + file.added:
                for match in _NAME.finditer(line.split("#", 1)[0]):
                    found.setdefault(match.group(0), None)
        return [t for t in found if _telling(t)][:MAX_TELLING_NAMES]


def _telling(name: str) -> bool:
    return len(name) >= 4 and name not in _GENERIC and not name.isdigit() and not name.startswith("__")


def parse_patch(patch: str) -> PatchInfo:
    """Files, hunks and changed lines of a unified diff, read by ``unidiff``: it counts each
    hunk's lines from its header, so a changed line that itself starts with ``---`` or ``+++``
    (an RST underline, a ``++i``) stays a changed line. Raw lines are the patch's own, byte for
    byte, numbered as in the patch."""
    try:
        parsed = PatchSet(patch)
    except UnidiffParseError as err:
        raise PatchError(f"not a unified diff unidiff can read: {err}") from err
    raw = patch.split("\n")
    return PatchInfo(files=[_file(file, raw) for file in parsed])


def _file(file: PatchedFile, raw: list[str]) -> FilePatch:
    target, source = _strip(file.target_file), _strip(file.source_file)
    path = target if target != "/dev/null" else source  # a deleted file keeps its old path
    current = FilePatch(path=path, old_path=source if source != "/dev/null" else path)
    for hunk in file:
        # every line but "\\ No newline at end of file"; an empty line is context whose space
        # an editor stripped
        body = [line for line in hunk if line.line_type != LINE_TYPE_NO_NEWLINE]
        header = raw[_numbered(body[0].diff_line_no) - 2] if body else ""
        current.hunks.append(
            Hunk(
                header=header,
                old_start=hunk.source_start,
                old_length=hunk.source_length,
                new_start=hunk.target_start,
                new_length=hunk.target_length,
                lines=[
                    (_numbered(line.diff_line_no), raw[_numbered(line.diff_line_no) - 1]) for line in body
                ],
            )
        )
        old_changed = current.hunks[-1].old_changed
        previous_old = hunk.source_start - 1  # the base line before the hunk's first line
        for line in body:
            if line.line_type == LINE_TYPE_ADDED:
                current.added.append(line.value.removesuffix("\n"))
                old_changed.append(max(previous_old, 1))  # inserted after the previous base line
            elif line.line_type == LINE_TYPE_REMOVED:
                current.removed.append(line.value.removesuffix("\n"))
                old_changed.append(_numbered(line.source_line_no))
            if line.source_line_no is not None:
                previous_old = line.source_line_no
        current.hunks[-1].old_changed = sorted(set(old_changed))
    return current


def _strip(name: str) -> str:
    """A header's file name without git's ``a/`` or ``b/``."""
    return name[2:] if name.startswith(("a/", "b/")) else name


def _numbered(number: int | None) -> int:
    """A line number unidiff gives a parsed patch's line (a removed line has its base one)."""
    if number is None:
        raise PatchError("a line of the patch has no number")
    return number
