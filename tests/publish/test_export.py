"""`lettuce-build export`: a build (its folder, its Hub folder or a Hub id) in another tool's
layout, which `validate` and `audit` read back with the build's own counts."""

import json

import pytest
from click.testing import CliRunner

import lettuce_build
from lettuce_build.cli import main
from lettuce_build.cli.publish import EXPORT_FORMATS
from lettuce_build.core.errors import OutputError
from lettuce_build.formats import FORMATS
from lettuce_build.view.audit import GATE_SIGNALS, quality_report
from lettuce_build.view.validate import validate

OUT = {"lettucedetect": "data.json", "ragtruth": "ragtruth", "sft": "sft.jsonl", "spans": "spans.jsonl"}


@pytest.fixture
def build(scripted_build):
    return scripted_build


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.mark.parametrize("name", [*OUT, "jsonl"])
def test_every_format_reads_back_with_the_build_s_counts(build, tmp_path, name):
    out = tmp_path / OUT.get(name, "rows.jsonl")
    result = invoke("export", build, "--format", name, "--out", out)
    assert result.exit_code == 0, result.output
    built = validate(build)
    assert len(built.by_split) > 1  # the build has more than one split to map
    back = validate(out)
    assert back.ok, back.problems[:3]
    hallucinated = built.rows - built.by_category["(clean)"]
    if name == "spans":  # only the hallucinated samples have spans, and rows
        assert back.rows == hallucinated and "(clean)" not in back.by_category
    else:
        assert (back.rows, back.by_split, back.by_category) == (built.rows, built.by_split, built.by_category)
    assert back.by_subcategory == built.by_subcategory
    audited, original = quality_report(out), quality_report(build)
    assert audited.rows == back.rows and not audited.unreadable
    if name != "spans":  # the same rows: the same signals of the gates
        assert {s: audited.signal_total(s) for s in GATE_SIGNALS} == {
            s: original.signal_total(s) for s in GATE_SIGNALS
        }
    assert f"wrote {back.rows} samples" in result.output


def test_an_export_from_the_hub_folder_equals_one_from_the_build(build, tmp_path):
    lettuce_build.export(build, format="lettucedetect", out=tmp_path / "a.json")
    lettuce_build.export(build / "hub", format="lettucedetect", out=tmp_path / "b.json")
    assert json.loads((tmp_path / "a.json").read_text()) == json.loads((tmp_path / "b.json").read_text())


def test_the_command_s_formats_are_the_package_s():
    assert set(EXPORT_FORMATS) == set(FORMATS)


def test_what_cannot_be_exported_is_one_line(build, tmp_path, hub_offline):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine")
    with pytest.raises(OutputError, match="holds other files"):
        lettuce_build.export(build, format="ragtruth", out=tmp_path / "full")
    with pytest.raises(OutputError, match="a folder; lettucedetect writes one file"):
        lettuce_build.export(build, format="lettucedetect", out=tmp_path / "full")
    with pytest.raises(OutputError, match="no such build, file or folder"):
        lettuce_build.export(tmp_path / "missing", format="jsonl", out=tmp_path / "x.jsonl")
    result = invoke("export", "nobody/nothing-here", "--format", "jsonl", "--out", tmp_path / "x.jsonl")
    assert result.exit_code == 1 and "cannot read this Hugging Face dataset" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "x.jsonl").exists()


def test_a_row_that_cannot_be_read_is_left_out_and_named(build, tmp_path):
    rows = tmp_path / "rows.jsonl"
    lettuce_build.export(build, format="jsonl", out=rows)
    lines = rows.read_text().splitlines()
    lines[1] = "{not json"
    rows.write_text("\n".join(lines) + "\n")
    counts = lettuce_build.export(rows, format="lettucedetect", out=tmp_path / "data.json")
    assert counts.samples == len(lines) - 1
    assert "1 row(s)" in counts.notes[0] and "rows.jsonl:2" in counts.notes[1]
