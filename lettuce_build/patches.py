"""The one reader of unified diffs: files, hunks on both sides, their raw lines, and names.

Used wherever a gold patch is read: squeez (tool calls, labels), the code source (answers
built from hunks) and the sift (added lines with their patch line numbers).
"""

from __future__ import annotations

import regex
from pydantic import BaseModel, Field

_DIFF = regex.compile(r"^diff --git a/(.+?) b/(.+)$")
_HUNK = regex.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_DEF = regex.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)")
_ASSIGN = regex.compile(r"^\s*(?:self\.)?([A-Za-z_]\w*)\s*(?::[^=]+)?=(?!=)")


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
        return "\n".join(raw[1:] for _, raw in self.lines if raw[:1] in (" ", keep))

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
                for pattern in (_DEF, _ASSIGN):
                    if (match := pattern.match(line)) and len(match.group(1)) > 2:
                        names.setdefault(match.group(1), None)
        return list(names)


def parse_patch(patch: str) -> PatchInfo:
    files: list[FilePatch] = []
    old_line = new_line = 0
    for number, line in enumerate(patch.split("\n"), start=1):
        if match := _DIFF.match(line):
            files.append(FilePatch(path=match.group(2), old_path=match.group(1)))
            continue
        if not files:
            continue
        current = files[-1]
        if match := _HUNK.match(line):
            old_start, new_start = int(match.group(1)), int(match.group(3))
            current.hunks.append(
                Hunk(
                    header=line,
                    old_start=old_start,
                    old_length=int(match.group(2) or 1),
                    new_start=new_start,
                    new_length=int(match.group(4) or 1),
                )
            )
            old_line, new_line = old_start, new_start
            continue
        if not current.hunks or line.startswith(("+++", "---")):
            continue
        hunk = current.hunks[-1]
        if line.startswith("+"):
            current.added.append(line[1:])
            hunk.old_changed.append(max(old_line - 1, 1))  # inserted after the previous base line
            hunk.lines.append((number, line))
            new_line += 1
        elif line.startswith("-"):
            current.removed.append(line[1:])
            hunk.old_changed.append(old_line)
            hunk.lines.append((number, line))
            old_line += 1
        elif line.startswith(" "):
            hunk.lines.append((number, line))
            old_line += 1
            new_line += 1
    for file in files:
        for hunk in file.hunks:
            hunk.old_changed = sorted(set(hunk.old_changed))
    return PatchInfo(files=files)
