"""How `lettuce-build build`'s flags become a recipe's settings: a recipe file as the defaults of
every flag, and the flags whose values are small languages of their own (engine arguments,
per-stage sampling, column maps, JSON objects), each checked with a one-line error."""

from __future__ import annotations

import json
from pathlib import Path

import click
from pydantic import ValidationError

from lettuce_build.builds.settings.recipe import StageSampling


def load_config(ctx: click.Context, param: click.Parameter, path: Path | None) -> Path | None:
    """--config: the recipe's settings become the defaults of every other option (a flag given
    on the command line still wins)."""
    if path is None:
        return None
    from lettuce_build.builds.settings.recipe import read_recipe_file

    settings = read_recipe_file(path)
    engine = settings.pop("engine", None) or {}
    sampling = settings.pop("sampling", None) or {}
    settings["sampling"] = [
        f"{stage}:{key}={value}" for stage, values in sampling.items() for key, value in values.items()
    ]
    # an engine setting with a flag of its own defaults that flag; every other one --engine-arg,
    # so that none is dropped (click ignores defaults of options that do not exist)
    flags = {param.name for param in ctx.command.params}
    settings["engine_arg"] = [
        f"{key}={json.dumps(value)}" for key, value in engine.items() if key not in flags
    ]
    flagged = {key: value for key, value in engine.items() if key in flags}
    columns = settings.pop("columns", None) or {}
    settings["columns"] = ",".join(f"{ours}={theirs}" for ours, theirs in columns.items()) or None
    ctx.default_map = {**(ctx.default_map or {}), **settings, **flagged}
    return path


def engine_args(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict:
    """``max_num_seqs=8`` (repeatable; a value is JSON or plain text) -> {"max_num_seqs": 8},
    each checked against the engine's settings (`EngineSettings`)."""
    from lettuce_build.llm.settings import EngineSettings

    found: dict[str, object] = {}
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or key not in EngineSettings.model_fields:
            fields = ", ".join(EngineSettings.model_fields)
            raise click.BadParameter(f"{value!r}: expected KEY=VALUE, KEY one of {fields}")
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            parsed = text  # plain text: a dtype, a revision
        try:
            EngineSettings.model_validate({key: parsed})
        except ValidationError as err:
            raise click.BadParameter(f"{value!r}: {err.errors()[0]['msg']}") from None
        found[key] = parsed
    return found


def stage_sampling(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict:
    """``answer:temperature=0.2`` (repeatable) -> {"answer": {"temperature": "0.2"}}."""
    found: dict[str, dict[str, str]] = {}
    expected = f"expected STAGE:FIELD=VALUE, FIELD one of {', '.join(StageSampling.model_fields)}"
    for value in values:
        stage, _, setting = value.partition(":")
        key, _, number = setting.partition("=")
        if not stage or key not in StageSampling.model_fields or not number:
            raise click.BadParameter(f"{value!r}: {expected}")
        try:
            StageSampling.model_validate({key: number})
        except ValidationError as err:
            raise click.BadParameter(f"{value!r}: {key} {err.errors()[0]['msg'].lower()}") from None
        found.setdefault(stage, {})[key] = number
    return found


def column_map(ctx: click.Context, param: click.Parameter, value: object) -> dict[str, str]:
    """``context=passage,question=query`` -> {"context": "passage", "question": "query"}."""
    if value is None or isinstance(value, dict):  # none, or from a recipe file
        return value or {}
    pairs = [part.partition("=") for part in str(value).split(",") if part.strip()]
    if any(not sep or not ours.strip() or not theirs.strip() for ours, sep, theirs in pairs):
        raise click.BadParameter(f"{value!r}: expected OURS=THEIRS pairs joined by commas")
    return {ours.strip(): theirs.strip() for ours, _, theirs in pairs}


class JsonObject(click.ParamType):
    name = "json"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> dict:
        if isinstance(value, dict):  # from a recipe file
            return value
        try:
            parsed = json.loads(str(value))
        except json.JSONDecodeError as err:
            self.fail(f"{value!r} is not JSON: {err.msg}", param, ctx)
        if not isinstance(parsed, dict):
            self.fail(f"{value!r} is not a JSON object", param, ctx)
        return parsed
