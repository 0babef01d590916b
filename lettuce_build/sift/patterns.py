"""What a sift preset is: regex sources per security category, and the exclusions beside them."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

CATEGORIES: tuple[str, ...] = (
    "file_io",
    "user_input",
    "database",
    "serialisation",
    "auth",
    "url_routing",
    "command_exec",
    "html_rendering",
)


class PatternSet(BaseModel):
    """Regex sources per category (order matters: the first match on a line is recorded).

    All patterns are case-insensitive; a pattern that must not be can say so
    inline with ``(?-i:...)``.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    categories: dict[str, list[str]]
    #: A line matching any of these is skipped for every category.
    exclusions: list[str] = []
    #: A line matching one of these is skipped for that category only.
    category_exclusions: dict[str, list[str]] = {}
    #: Like ``category_exclusions``, but only where ``request`` is pytest's fixture request:
    #: in the pytest repository itself and in any ``conftest.py``.
    pytest_exclusions: dict[str, list[str]] = {}
    #: v1/v2 match the raw diff line, leading "+" included; later presets match the code.
    strip_added_marker: bool = False
    #: Skip comment lines, trailing comments and docstrings of Python files.
    skip_comments_and_docstrings: bool = False
    #: Skip added lines of documentation files (.rst, .txt, .md).
    skip_documentation_files: bool = False
