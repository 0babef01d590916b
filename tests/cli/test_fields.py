"""Options are made from the settings' fields: a field added to the recipe is a flag of `build`
and a keyword of the API with nothing else written; every flag shows its field's help, default,
bounds and choices."""

import importlib

import click
import pytest
from click.testing import CliRunner
from pydantic import Field

import lettuce_build
import lettuce_build.api
import lettuce_build.builds.settings.recipe
import lettuce_build.cli.build
from lettuce_build.builds.settings.keywords import keywords_source
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.cli.fields import field_option, model_options
from lettuce_build.core.flags import flag_names
from lettuce_build.llm.settings import EngineSettings


class Wider(Recipe):
    """The recipe with one more setting, declared as every setting is: once, on its field."""

    warmth: float = Field(default=0.25, ge=0.0, le=1.0)
    """How warm the answers are."""


@pytest.fixture
def wider(monkeypatch):
    """The package as it would be with `Wider`'s field added to `Recipe`: the build command is
    made again from the model, as importing it makes it."""
    monkeypatch.setattr(lettuce_build.builds.settings.recipe, "Recipe", Wider)
    monkeypatch.setattr(lettuce_build.api, "Recipe", Wider)
    yield importlib.reload(lettuce_build.cli.build).build
    monkeypatch.undo()
    importlib.reload(lettuce_build.cli.build)


def test_a_field_added_to_the_recipe_is_a_flag_and_an_api_keyword_with_nothing_else_written(
    wider, monkeypatch, tmp_path
):
    help_text = CliRunner().invoke(wider, ["--help"], terminal_width=200).output
    line = next(line for line in help_text.splitlines() if "--warmth" in line)
    assert "How warm the answers are." in line and "[default: 0.25; 0.0<=x<=1.0]" in line
    refused = CliRunner().invoke(wider, ["--source", "readme", "--out", str(tmp_path), "--warmth", "3"])
    assert refused.exit_code == 2 and "Invalid value for '--warmth'" in refused.output

    seen = []

    def capture(recipe, *_, **__):  # the recipe a build would run, and no build
        seen.append(recipe)
        raise SystemExit(0)

    monkeypatch.setattr(lettuce_build.api, "run_build", capture)
    CliRunner().invoke(wider, ["--source", "readme", "--out", str(tmp_path / "a"), "--warmth", "0.5"])
    with pytest.raises(SystemExit):
        lettuce_build.build("readme", out=tmp_path / "b", warmth=0.75)
    assert [recipe.warmth for recipe in seen] == [0.5, 0.75]
    # and for type checkers, `make keywords` writes it from the field
    assert "    #: How warm the answers are.\n    warmth: float\n" in keywords_source(Wider)


def test_every_setting_of_the_recipe_and_the_engine_is_a_flag_with_its_field_s_help_and_default():
    from lettuce_build.cli.build import build

    options = {param.name: param for param in build.params}
    made_otherwise = {"engine", "stages"}  # the engine's own fields are flags; stages are recorded
    for model in (Recipe, EngineSettings):
        for name, field in model.model_fields.items():
            if name in made_otherwise:
                continue
            option = options[name]
            assert isinstance(option, click.Option) and option.help == field.description, name
            assert option.opts[0].split("/")[0] == flag_names(name, field)[0]
            default = None if field.is_required() else field.get_default(call_default_factory=True)
            assert option.required == field.is_required(), name
            if default not in (None, {}):
                given = option.default
                assert (list(given) if isinstance(given, tuple) else given) == default, name


def test_a_setting_without_help_cannot_become_a_flag():
    from lettuce_build.builds.settings.recipe import StageSampling

    with pytest.raises(TypeError, match="temperature: a setting with a flag needs a docstring"):
        model_options(StageSampling)
    with pytest.raises(TypeError):
        field_option("max_tokens", StageSampling.model_fields["max_tokens"])
