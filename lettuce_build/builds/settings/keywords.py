"""The API's keywords, written from the recipe's fields: `lettuce_build.build(ratio=0.3)`
type-checks because ``lettuce_build/builds/settings/api_keywords.py`` declares ``ratio: float``,
and that file is made here from `Recipe` (``make keywords``), never by hand; tests/test_api.py
fails while it is stale. A type checker reads files, not models, so the keywords must be a file;
what they say comes only from the fields, the one place each setting is declared.

Each keyword takes what the field's validation takes: a path as text too, a settings model as a
mapping of its fields, a model that writes itself as text (a shard, ``"0/2"``) as that text.

    # writes lettuce_build/builds/settings/api_keywords.py
    python -m lettuce_build.builds.settings.keywords
"""

from __future__ import annotations

import json
import textwrap
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from lettuce_build.builds.settings.recipe import Recipe

#: where the keywords are written
KEYWORDS_FILE = Path(__file__).resolve().with_name("api_keywords.py")
#: fields of the recipe that are no keyword of their own: parameters of `build` and `dry_run`
#: (source, out, input, backend, which `build` takes as an object too; a type checker refuses a
#: keyword that is also a parameter) and what a build writes, not what it is asked (stages)
NOT_KEYWORDS = frozenset({"source", "out", "input", "backend", "stages"})

_HEADER = '''"""The keywords of `lettuce_build.build` and `dry_run`: each a field of `Recipe`, which
declares its type, default, bounds and meaning. Written by lettuce_build/builds/settings/keywords.py
(``make keywords``) from the fields; never edit it by hand."""

from __future__ import annotations

{imports}


class Settings(TypedDict, total=False):
    """A recipe's settings as `build` and `dry_run` take them (see `Recipe` for each one's default
    and meaning; the recipe checks every value)."""

'''


class _Imports:
    """The names a rendered annotation needs, by module."""

    def __init__(self) -> None:
        self.names: dict[str, set[str]] = {"typing": {"TypedDict"}}

    def name(self, kind: type | Any, module: str | None = None) -> str:
        module = module or kind.__module__
        if module != "builtins":
            self.names.setdefault(module, set()).add(kind.__name__)
        return str(kind.__name__)

    def lines(self) -> str:
        """The import lines, the standard library's first, then the package's (as ruff orders them)."""
        groups = [
            [module for module in sorted(self.names) if module.startswith("lettuce_build") == ours]
            for ours in (False, True)
        ]
        return "\n\n".join(
            "\n".join(f"from {module} import {', '.join(sorted(self.names[module]))}" for module in group)
            for group in groups
            if group
        )


def _written_as_text(model: type[BaseModel]) -> bool:
    """Whether ``model`` writes itself as a string (and so is given as one: a shard's ``"I/N"``)."""
    return model.model_json_schema(mode="serialization").get("type") == "string"


def _render(annotation: Any, imports: _Imports) -> str:
    """``annotation`` as source, widened to what validation accepts in its place."""
    origin, args = get_origin(annotation), get_args(annotation)
    if annotation is type(None):
        return "None"
    if origin in (Union, types.UnionType):
        return " | ".join(dict.fromkeys(_render(arg, imports) for arg in args))
    if origin is Literal:
        return f"{imports.name(Literal, 'typing')}[{', '.join(json.dumps(arg) for arg in args)}]"
    if annotation is Any:
        return imports.name(Any, "typing")
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if _written_as_text(annotation):
            return f"{imports.name(annotation)} | str"
        mapping = f"{imports.name(Mapping, 'collections.abc')}[str, {imports.name(Any, 'typing')}]"
        return f"{imports.name(annotation)} | {mapping}"
    if annotation is Path:
        return f"str | {imports.name(Path, 'pathlib')}"
    if origin is dict:
        key, value = args
        return (
            f"{imports.name(Mapping, 'collections.abc')}[{_render(key, imports)}, {_render(value, imports)}]"
        )
    if origin in (list, tuple):
        return f"{origin.__name__}[{', '.join(_render(arg, imports) for arg in args)}]"
    if isinstance(annotation, type):
        return imports.name(annotation)
    raise TypeError(f"a recipe field of type {annotation!r}: keywords.py cannot write it yet")


def keywords_source(model: type[BaseModel] = Recipe) -> str:
    """The keywords module for ``model``'s fields, as source (what ``make keywords`` writes)."""
    imports = _Imports()
    body = []
    for name, field in model.model_fields.items():
        if name in NOT_KEYWORDS:
            continue
        if field.description:  # a type checker shows it beside the keyword
            body += textwrap.wrap(
                field.description,
                width=106,
                initial_indent="    #: ",
                subsequent_indent="    #: ",
                break_on_hyphens=False,
            )
        body.append(f"    {name}: {_render(field.annotation, imports)}")
    return _HEADER.format(imports=imports.lines()) + "\n".join(body) + "\n"


if __name__ == "__main__":
    KEYWORDS_FILE.write_text(keywords_source(), encoding="utf-8")
    print(f"wrote {KEYWORDS_FILE}")
