"""Shards: `--shard i/n` picks a deterministic slice of the work items by a hash of their
document, so n shards cover every item once and a document's items stay together."""

import pytest

from lettuce_build.builds.settings.options import BuildOptions
from lettuce_build.builds.settings.shards import Shard, slice_items
from lettuce_build.cli.fields import checked
from lettuce_build.core.errors import RecipeError
from lettuce_build.sources.documents import ReadmeSource
from lettuce_build.sources.tool_output import ToolOutputSource


def test_a_shard_is_written_as_on_the_command_line():
    shard = Shard.model_validate("1/4")
    assert (shard.index, shard.count) == (1, 4)
    assert str(shard) == "1/4" and shard.model_dump() == "1/4"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4/4", "shard 4/4: the index runs from 0 to 3"),
        ("-1/2", "expected I/N, e.g. 0/4"),
        ("1", "expected I/N, e.g. 0/4"),
        ("a/b", "expected I/N, e.g. 0/4"),
        ("1/0", "greater than or equal to 1"),
        ("", "expected I/N, e.g. 0/4"),
    ],
)
def test_a_wrong_shard_is_one_line_naming_its_flag_and_the_form(text, expected):
    with pytest.raises(RecipeError, match=r"^--shard\b") as raised:
        checked(BuildOptions, {"source": "readme", "out": ".", "shard": text})
    assert expected in str(raised.value) and "\n" not in str(raised.value)


def test_n_shards_hold_every_item_once_and_keep_a_document_s_items_together():
    items = [{"key": f"readme::doc{d}::{c}"} for d in range(40) for c in range(3)]
    source = ReadmeSource()
    slices = [list(slice_items(items, Shard(index=i, count=3), source.document_of)) for i in range(3)]
    positions = sorted(p for part in slices for p, _ in part)
    assert positions == list(range(len(items)))
    for part in slices:
        assert part, "40 documents over 3 shards: none is empty"
        documents = {source.document_of(item) for _, item in part}
        assert len(part) == 3 * len(documents)  # all three chunks of each document
        assert [p for p, _ in part] == sorted(p for p, _ in part)  # the build's order
    again = list(slice_items(items, Shard(index=1, count=3), source.document_of))
    assert again == slices[1]


def test_tool_output_items_of_one_instance_are_one_document():
    source = ToolOutputSource()
    assert source.document_of({"key": "train::django__django-1::grep::2"}) == "train::django__django-1"
    assert source.document_of({"key": "train::django__django-1::ls"}) == "train::django__django-1"
