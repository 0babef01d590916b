"""The `squeez` command's options are made from `SqueezOptions`, as `build`'s are from `Recipe`."""

import click
from click.testing import CliRunner

from lettuce_build.cli import main
from lettuce_build.cli.swebench import squeez
from lettuce_build.core.flags import flag_names
from lettuce_build.squeez.options import SqueezOptions


def test_every_squeez_setting_is_a_flag_with_its_field_s_help_and_default():
    options = {param.name: param for param in squeez.params}
    for name, field in SqueezOptions.model_fields.items():
        option = options[name]
        assert isinstance(option, click.Option) and option.help == field.description, name
        assert option.opts[0] == flag_names(name, field)[0]
        default = field.get_default(call_default_factory=True)
        if default not in (None, [], False):
            assert option.default == default, name


def test_a_shard_out_of_range_is_one_line_naming_its_flag(tmp_path):
    result = CliRunner().invoke(
        main, ["squeez", "--phase", "1", "--out", str(tmp_path / "o"), "--shard", "3/2"]
    )
    assert result.exit_code == 1
    assert result.output.strip() == "Error: --shard: shard 3/2: the index runs from 0 to 1, got '3/2'"
