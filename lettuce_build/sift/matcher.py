"""Matching a pattern set against the added lines of a unified diff.

Only added lines count: lines starting with "+" but not the "+++" file
headers. Line numbers are 1-based indices into ``patch.split("\\n")``. Per
category, the first pattern (in preset order) that matches a line is recorded
as ``"<pattern source> on line <i>: <snippet>"`` with the snippet being the line
without its "+", stripped, cut to 80 characters.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath

import regex

from lettuce_build.sift.patterns import PatternSet
from lettuce_build.swebench.patches import parse_patch

_DOCUMENTATION_SUFFIXES = frozenset({".rst", ".txt", ".md"})
_PYTHON_SUFFIXES = frozenset({".py", ".pyi"})
_TRIPLE_QUOTE = regex.compile(r'"""|\'\'\'')


_QUANTIFIERS = "?*{"
PYTEST_REPO = "pytest-dev/pytest"


def required_literal(source: str) -> str | None:
    """The longest literal run every match of the pattern must contain, casefolded; None if unsure.

    Used as a prefilter: ``literal in line.casefold()`` is a necessary condition
    for the case-insensitive pattern to match, and a substring test costs a
    fraction of a regex search. Groups, classes and escapes other than escaped
    punctuation end a run; a top-level alternation means there is no single
    required literal.
    """
    runs, current, i, depth = [], "", 0, 0
    while i < len(source):
        char = source[i]
        if char == "\\" and i + 1 < len(source):
            escaped = source[i + 1]
            i += 2
            if escaped.isalnum():  # \b, \s, \w, \d, \p{...}: not a literal
                runs.append(current)
                current = ""
                continue
            char = escaped
        elif char in "([":
            # skip the whole group or class; it may be optional or a lookaround
            runs.append(current)
            current = ""
            closing = ")" if char == "(" else "]"
            depth, i = 1, i + 1
            while i < len(source) and depth:
                if source[i] == "\\":
                    i += 2
                    continue
                depth += {char: 1, closing: -1}.get(source[i], 0)
                i += 1
            continue
        elif char == "|" and depth == 0:
            return None
        elif char in ".^$)]+*?{}":
            runs.append(current)
            current = ""
            i += 1
            continue
        else:
            i += 1
        if i < len(source) and source[i] in _QUANTIFIERS:  # an optional character is not required
            runs.append(current)
            current = ""
            continue
        current += char
    runs.append(current)
    best = max(runs, key=len)
    return best.casefold() if len(best) >= 3 else None


@dataclass(slots=True)
class LineMatch:
    """What the matcher made of one added line (internal: a dataclass, as it is made per line)."""

    line_number: int
    file: str | None
    text: str
    matches: dict[str, str] = field(default_factory=dict)
    skipped: str | None = None

    @property
    def snippet(self) -> str:
        return self.text[1:].strip()[:80]

    def record(self, category: str) -> str:
        return f"{self.matches[category]} on line {self.line_number}: {self.snippet}"


def _strip_trailing_comment(code: str) -> str:
    """The code before a ``#`` that is not inside a string literal."""
    quote: str | None = None
    escaped = False
    for i, char in enumerate(code):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif quote:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "#":
            return code[:i]
    return code


_OPENS_STRING = regex.compile(r"[=(\[{,:]\s*[rRuUbBfF]{0,2}(\"\"\"|\'\'\')")
_STARTS_WITH_QUOTE = regex.compile(r"\s*[rRuUbB]?(\"\"\"|\'\'\')")


_CODE_LIKE = regex.compile(
    r"^\s*(?:(?:if|elif|for|while|with|def|class|return|yield|raise|import|try|except|assert|del)\b"
    r"|from\s+\S+\s+import\b"
    r"|[\w.\[\]'\"]+\s*[-+*/|&]?=(?!=)\s*\S)"
)


def _flags_from(codes: list[str], mode: str) -> list[bool]:
    """Docstring flags of a hunk's lines, starting in ``mode`` ("code" or "docstring")."""
    flags = []
    for code in codes:
        quotes = len(_TRIPLE_QUOTE.findall(code))
        if mode == "docstring":
            flags.append(True)
            if quotes % 2:
                mode = "code"
        elif mode == "string":
            flags.append(False)
            if quotes % 2:
                mode = "code"
        else:
            starts_docstring = bool(_STARTS_WITH_QUOTE.match(code)) and quotes > 0
            flags.append(starts_docstring)
            if quotes % 2:
                mode = "docstring" if starts_docstring else "string"
    return flags


def _code_in_docstrings(codes: list[str], flags: list[bool]) -> int:
    return sum(1 for code, flag in zip(codes, flags, strict=True) if flag and _CODE_LIKE.match(code))


def docstring_flags(codes: list[str], hunk_starts_file: bool) -> list[bool]:
    """For the lines of one hunk (context and new side), which are docstring text.

    A hunk shows only part of a file, so whether it begins inside a docstring is inferred from
    its first line holding an odd number of triple quotes. Mid-line, after ``=``, ``(`` and the
    like, that quote opens a string literal (code, e.g. SQL); mid-line otherwise it closes a
    docstring. At a line start with text after it (``\"\"\"Return ...``) it opens one; so it does
    after a ``def ...:``/``class ...:`` line or at the top of the file. A bare quote elsewhere is
    ambiguous: of the two readings, the one that puts fewer code-like lines (statements,
    assignments) inside docstrings wins, closing on a tie. Mid-line string literals stay code.
    """
    first = next((i for i, code in enumerate(codes) if len(_TRIPLE_QUOTE.findall(code)) % 2), None)
    if first is None:
        return _flags_from(codes, "code")
    code = codes[first]
    match = _STARTS_WITH_QUOTE.match(code)
    previous = next((c for c in reversed(codes[:first]) if c.strip()), None)
    if not match:
        opens = bool(_OPENS_STRING.search(code))
    elif code[match.end() :].strip():
        opens = True
    elif previous is not None and previous.rstrip().endswith(":") or previous is None and hunk_starts_file:
        opens = True
    else:
        opened, closed = _flags_from(codes, "code"), _flags_from(codes, "docstring")
        return opened if _code_in_docstrings(codes, opened) < _code_in_docstrings(codes, closed) else closed
    return _flags_from(codes, "code" if opens else "docstring")


class CompiledPatternSet:
    """A preset compiled once; `scan` and `matched` run it over patches."""

    def __init__(self, preset: PatternSet, prefilter: bool = True) -> None:
        self.preset = preset
        flags = regex.IGNORECASE
        self.categories = {
            category: [(source, regex.compile(source, flags)) for source in sources]
            for category, sources in preset.categories.items()
        }
        # Prefilter literals, not one combined alternation: benchmarks/sift_matcher.py
        # measured the alternation slower than the separate searches it would save.
        every = [
            *preset.exclusions,
            *(s for sources in preset.category_exclusions.values() for s in sources),
            *(s for sources in preset.pytest_exclusions.values() for s in sources),
            *(s for sources in preset.categories.values() for s in sources),
        ]
        self.literals = {source: required_literal(source) for source in every}
        self.prefilter = prefilter
        self.exclusions = [(s, regex.compile(s, flags)) for s in preset.exclusions]
        self.category_exclusions = {
            category: [(s, regex.compile(s, flags)) for s in sources]
            for category, sources in preset.category_exclusions.items()
        }
        self.pytest_exclusions = {
            category: [(s, regex.compile(s, flags)) for s in sources]
            for category, sources in preset.pytest_exclusions.items()
        }

    def _added_lines(self, patch: str) -> Iterator[tuple[int, str, str | None, str | None]]:
        """(line number, raw line, file, reason the line is not code) for every added line."""
        for file in parse_patch(patch).files:
            for hunk in file.hunks:
                yield from self._hunk_lines(hunk.lines, file.old_path, hunk.old_start in (0, 1))

    def _hunk_lines(
        self, hunk: list[tuple[int, str]], file: str | None, hunk_starts_file: bool
    ) -> Iterator[tuple[int, str, str | None, str | None]]:
        preset = self.preset
        suffix = PurePosixPath(file).suffix if file else ""
        new_side = [
            (n, line) for n, line in hunk if line.startswith(("+", " ")) and not line.startswith("+++")
        ]
        in_docstring: dict[int, bool] = {}
        if preset.skip_comments_and_docstrings and suffix in _PYTHON_SUFFIXES:
            flags = docstring_flags([line[1:] for _, line in new_side], hunk_starts_file)
            in_docstring = {n: flag for (n, _), flag in zip(new_side, flags, strict=True)}
        for number, line in hunk:
            if not line.startswith("+") or line.startswith("+++"):
                continue
            not_code: str | None = None
            if preset.skip_documentation_files and suffix in _DOCUMENTATION_SUFFIXES:
                not_code = "documentation file"
            elif in_docstring.get(number):
                not_code = "docstring"
            elif in_docstring and line[1:].lstrip().startswith("#"):
                not_code = "comment"
            yield number, line, file, not_code

    @staticmethod
    def _hits(
        source: str, pattern: regex.Pattern[str], *, text: str, folded: str, literals: dict[str, str | None]
    ) -> bool:
        literal = literals.get(source)
        return (literal is None or literal in folded) and pattern.search(text) is not None

    def _any_match(self, text: str) -> bool:
        return any(p.search(text) for patterns in self.categories.values() for _, p in patterns)

    def scan(self, patch: str, repo: str | None = None) -> list[LineMatch]:
        """Every added line with its matches, or the reason it was skipped. ``repo`` (owner/name)
        tells where pytest's own idioms are meant (`PatternSet.pytest_exclusions`)."""
        results: list[LineMatch] = []
        for number, line, file, not_code in self._added_lines(patch):
            pytest_code = repo == PYTEST_REPO or PurePosixPath(file or "").name == "conftest.py"
            result = LineMatch(line_number=number, file=file, text=line)
            results.append(result)
            if not_code:
                result.skipped = not_code
                continue
            text = line[1:] if self.preset.strip_added_marker else line
            if (
                self.preset.skip_comments_and_docstrings
                and PurePosixPath(file or "").suffix in _PYTHON_SUFFIXES
            ):
                code = _strip_trailing_comment(text)
                if code != text and not self._any_match(code) and self._any_match(text):
                    result.skipped = "trailing comment"
                    continue
                text = code
            folded = text.casefold()
            literals = self.literals if self.prefilter else {}
            excluded = next(
                (
                    s
                    for s, p in self.exclusions
                    if self._hits(s, p, text=text, folded=folded, literals=literals)
                ),
                None,
            )
            if excluded:
                result.skipped = f"excluded by {excluded}"
                continue
            for category, patterns in self.categories.items():
                exclusions = [
                    *self.category_exclusions.get(category, ()),
                    *(self.pytest_exclusions.get(category, ()) if pytest_code else ()),
                ]
                if any(self._hits(s, p, text=text, folded=folded, literals=literals) for s, p in exclusions):
                    continue
                for source, pattern in patterns:
                    if self._hits(source, pattern, text=text, folded=folded, literals=literals):
                        result.matches[category] = source
                        break
        return results

    def matched(self, patch: str, repo: str | None = None) -> dict[str, list[str]]:
        """Category -> match records, for the categories that matched at least once."""
        found: dict[str, list[str]] = {}
        for line in self.scan(patch, repo):
            for category in line.matches:
                found.setdefault(category, []).append(line.record(category))
        return {c: found[c] for c in self.categories if c in found}
