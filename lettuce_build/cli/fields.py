"""Options made from pydantic fields: each setting's name, type, default, bounds, choices and help
are declared once, on its field (core/flags.py says how a field shows as a flag), and read here.

A field's type picks its option: a bool is a flag (``--x/--no-x`` when it defaults to true), a
Literal a choice, a number a range from its bounds, a list a repeatable option, a path a
resolved path; a few types are small languages of their own (a price ``IN/OUT``, a column map,
a JSON object, per-stage sampling). Values are checked again by the model, which has the last
word (`Recipe.checked`)."""

from __future__ import annotations

import types
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

import annotated_types
import click
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from lettuce_build.cli.options import PRICE, Decorator, FloatRange, combined, folder
from lettuce_build.cli.recipe_flags import JsonObject, column_map, stage_sampling
from lettuce_build.core.flags import flag_form, flag_names, settings_error
from lettuce_build.llm.settings import EndpointSettings

Settings = TypeVar("Settings", bound=BaseModel)


def _bare(annotation: Any) -> Any:
    """The annotation without ``| None``."""
    if get_origin(annotation) in (Union, types.UnionType):
        kept = [arg for arg in get_args(annotation) if arg is not type(None)]
        return kept[0] if len(kept) == 1 else annotation
    return annotation


def _bounds(field: FieldInfo) -> dict[str, Any]:
    """click's range keywords from the field's bounds (``ge``, ``gt``, ``le``, ``lt``)."""
    found: dict[str, Any] = {}
    for bound in field.metadata:
        if isinstance(bound, annotated_types.Ge):
            found["min"] = bound.ge
        elif isinstance(bound, annotated_types.Gt):
            found |= {"min": bound.gt, "min_open": True}
        elif isinstance(bound, annotated_types.Le):
            found["max"] = bound.le
        elif isinstance(bound, annotated_types.Lt):
            found |= {"max": bound.lt, "max_open": True}
    return found


def _kind(field: FieldInfo) -> dict[str, Any]:
    """click.option keywords for the field's type."""
    annotation, form = _bare(field.annotation), flag_form(field)
    origin, args = get_origin(annotation), get_args(annotation)
    if annotation is bool:
        # off by default: a flag; on, or unset (the engine's default decides): --x/--no-x
        return {"is_flag": True} if field.default is False else {"secondary": True}
    if origin is Literal:
        return {"type": click.Choice([*args, *form.get("also", ())])}
    if annotation is int:
        bounds = _bounds(field)
        if bounds.pop("min_open", False):
            bounds["min"] += 1
        return {"type": click.IntRange(**bounds)} if bounds else {"type": int}
    if annotation is float:
        bounds = _bounds(field)
        return {"type": FloatRange(**bounds)} if bounds else {"type": float}
    if annotation is Path:
        exists = bool(form.get("exists"))
        return {"type": folder(exists)}
    if origin is tuple and args == (float, float):
        return {"type": PRICE}
    if origin is list and args == (Path,):
        return {"multiple": True, "type": folder(bool(form.get("exists")))}
    if origin is list:
        return {"multiple": True}
    if origin is dict and args == (str, str):
        return {"callback": column_map}
    if origin is dict and isinstance(args[1], type) and issubclass(args[1], BaseModel):
        return {"multiple": True, "callback": stage_sampling}
    if origin is dict:
        return {"type": JsonObject()}
    return {"type": str}  # text, or a model that reads its text form (a shard "I/N")


def field_option(name: str, field: FieldInfo, *, required: bool = False, prefix: str = "") -> Decorator:
    """The option that sets the field ``name`` (``prefix``: before its flag's name, for a
    command with two of them: ``--teacher-api-key-env``)."""
    if not field.description:
        raise TypeError(f"{name}: a setting with a flag needs a docstring (its help)")
    kind = _kind(field)
    names = [f"--{prefix}{flag.removeprefix('--')}" for flag in flag_names(name, field)]
    name = prefix.replace("-", "_") + name
    if kind.pop("secondary", False):  # a setting that defaults to true is turned off by --no-x
        names = [f"{names[0]}/--no-{names[0].removeprefix('--')}"]
    default = None if field.is_required() else field.get_default(call_default_factory=True)
    if default == {}:  # a map's option reads text; unset, its callback or the model gives the {}
        default = None
    return click.option(
        *names,
        name,
        default=default,
        show_default=default is not None and default is not False and default not in ([], {}),
        required=required,
        metavar=flag_form(field).get("metavar"),
        help=field.description,
        **kind,
    )


def checked(model: type[Settings], settings: dict[str, Any]) -> Settings:
    """``model`` from a command's options; a value that does not fit is one line
    (`flags.settings_error`)."""
    try:
        return model.model_validate(settings)
    except ValidationError as err:
        raise settings_error(model, err) from err


def model_options(
    model: type[BaseModel], *, first: Iterable[str] = (), skip: Iterable[str] = ()
) -> Decorator:
    """An option per field of ``model`` that has a flag, those named in ``first`` first (in that
    order), then the rest as the model declares them; ``skip``: fields set another way. A
    required field is a required option."""
    skipped = set(skip)
    fields = {
        name: field
        for name, field in model.model_fields.items()
        if name not in skipped and not flag_form(field).get("none")
    }
    order = [name for name in first if name in fields] + [name for name in fields if name not in first]
    return combined(
        *(field_option(name, fields[name], required=fields[name].is_required()) for name in order)
    )


def endpoint_options(prefix: str = "") -> Decorator:
    """The options of an OpenAI-compatible endpoint's requests (``prefix``: whose key)."""
    fields = EndpointSettings.model_fields
    chosen = ("concurrency", "request_timeout", "max_retries", "rpm", "tpm")
    return combined(
        field_option("api_key_env", fields["api_key_env"], prefix=prefix),
        *(field_option(name, fields[name]) for name in chosen),
    )
