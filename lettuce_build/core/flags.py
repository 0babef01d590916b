"""How a setting shows on the command line, said on its pydantic field beside its type, default,
bounds and help (the attribute's docstring, which ``use_attribute_docstrings`` makes its
``description``): the `build` command's options are made from the fields (cli/fields.py), and an
error about a setting names its flag.

    ratio: float = Field(default=0.5, ge=0.0, le=1.0)
    \"\"\"Share of items ...\"\"\"
    out: Path = Field(json_schema_extra=flag("--out", "--output-dir"))
    \"\"\"Build folder ...\"\"\"
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from lettuce_build.core.errors import RecipeError

#: the key of a field's ``json_schema_extra`` that holds how it shows on the command line
FLAG_KEY = "cli"


def flag(
    *names: str, metavar: str | None = None, also: tuple[str, ...] = (), exists: bool = False
) -> dict[str, Any]:
    """A field's command-line form: its flag ``names`` (the first is the one errors use; none:
    ``--field-name``), the ``metavar`` its help shows, choices it takes ``also`` beside its
    type's (other tools' names for them), and whether a path must ``exist``."""
    return {FLAG_KEY: {"names": list(names), "metavar": metavar, "also": list(also), "exists": exists}}


#: a field the command line does not set (the build writes it, or its parts have flags of their own)
NO_FLAG: dict[str, Any] = {FLAG_KEY: {"none": True}}


def flag_form(field: FieldInfo) -> dict[str, Any]:
    """The command-line form a field declares (empty: the defaults)."""
    extra = field.json_schema_extra
    return dict(extra.get(FLAG_KEY) or {}) if isinstance(extra, dict) else {}  # type: ignore[arg-type]


def flag_names(name: str, field: FieldInfo) -> list[str]:
    """The flags that set the field ``name``; the first is the one to name it by."""
    return flag_form(field).get("names") or ["--" + name.replace("_", "-")]


def flag_of(model: type[BaseModel], name: str) -> str:
    """The flag that sets ``model``'s field ``name`` (``--name`` for a name it does not have)."""
    field = model.model_fields.get(name)
    return flag_names(name, field)[0] if field is not None else "--" + name.replace("_", "-")


def settings_error(model: type[BaseModel], err: ValidationError) -> RecipeError:
    """What a person who gave ``model`` its settings (flags, keywords) is told of a value that
    does not fit: one line naming its option and what was expected, not a validation dump.
    (The caller validates: ``model``'s validators belong to its layer, not to this one.)"""
    first = err.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    named = flag_of(model, where.split(".")[0]) if where else "the settings"
    detail = f" ({where})" if "." in where else ""
    message = first["msg"].removeprefix("Value error, ")  # pydantic's, before a validator's own
    if not where:  # a rule over several settings: its message names them
        return RecipeError(message)
    return RecipeError(f"{named}{detail}: {message}, got {first.get('input')!r}")
