"""README and Wikipedia loaders: chunks become work items; bad documents are skipped and counted."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lettuce_build.core.errors import TableError, UnknownSource
from lettuce_build.sources.base import LoadOptions
from lettuce_build.sources.documents import ReadmeSource, WikipediaSource
from lettuce_build.sources.registry import SOURCES, get_source

from ..support.documents import README_A, README_B, write_readmes


def test_the_registry_names_every_document_source():
    assert {"readme", "wikipedia", "acl"} <= set(SOURCES)
    assert get_source("readme").dataset_name == "lettucedetect-readme"
    with pytest.raises(UnknownSource, match="unknown source 'nope'"):
        get_source("nope")


def test_a_folder_of_readmes_becomes_keyed_work_items(tmp_path):
    loaded = ReadmeSource().load(str(write_readmes(tmp_path / "docs")), LoadOptions(seed=3))
    assert loaded.documents == 3
    keys = [item["key"] for item in loaded.items]
    assert len(keys) == len(set(keys)) and all(k.startswith("readme::") for k in keys)
    for item in loaded.items:
        assert item["question_type"] in ReadmeSource.question_types
        assert item["split"] in ("train", "validation", "test")
        assert item["context"] == item["chunk"]


def test_loading_is_deterministic_for_a_seed(tmp_path):
    folder = str(write_readmes(tmp_path / "docs"))
    assert (
        ReadmeSource().load(folder, LoadOptions(seed=1)).items
        == ReadmeSource().load(folder, LoadOptions(seed=1)).items
    )


def test_binary_non_utf8_empty_and_enormous_files_are_skipped_and_counted(tmp_path):
    folder = write_readmes(tmp_path / "docs")
    (folder / "binary.md").write_bytes(b"# x\n\x00\x01\x02")
    (folder / "latin1.md").write_bytes("# Caf\xe9\n".encode("latin-1") + b"\xe9" * 400)
    (folder / "empty.md").write_text("  \n\n")
    (folder / "huge.md").write_text("# Huge\n" + "h" * 2_100_000)
    loaded = ReadmeSource().load(str(folder), LoadOptions())
    assert dict(loaded.skipped) == {"binary": 1, "not_utf8": 1, "empty": 1, "too_large": 1}
    assert loaded.documents == 3


def test_the_limit_caps_work_items(tmp_path):
    assert len(ReadmeSource().load(str(write_readmes(tmp_path / "d")), LoadOptions(limit=1)).items) == 1


def test_a_jsonl_of_repo_and_readme(tmp_path):
    path = tmp_path / "readmes.jsonl"
    path.write_text(
        json.dumps({"repo": "acme/fastgrid", "readme": README_A})
        + "\n"
        + json.dumps({"repo": "acme/pebble", "readme": README_B})
        + "\n"
    )
    loaded = ReadmeSource().load(str(path), LoadOptions())
    assert {json.loads(i["metadata"])["doc_id"] for i in loaded.items} == {"acme/fastgrid", "acme/pebble"}


def test_a_malformed_jsonl_line_is_skipped_and_counted_the_others_are_read(tmp_path, caplog):
    path = tmp_path / "readmes.jsonl"
    lines = [
        json.dumps({"repo": "a", "readme": README_A}),
        '{"repo": "b", "readme',
        json.dumps({"readme": "x"}),
    ]
    path.write_text("\n".join(lines) + "\n")
    loaded = ReadmeSource().load(str(path), LoadOptions())
    assert dict(loaded.skipped) == {"malformed_json": 1, "missing_column": 1}
    assert loaded.documents == 1
    assert "readmes.jsonl:2" in caplog.text and "readmes.jsonl:3" in caplog.text


def test_a_missing_column_is_named(tmp_path):
    path = tmp_path / "readmes.jsonl"
    path.write_text(json.dumps({"name": "a", "readme": README_A}) + "\n")
    with pytest.raises(TableError, match=r"readmes\.jsonl:1: missing column\(s\) \['repo'\]"):
        ReadmeSource().load(str(path), LoadOptions())


def test_a_missing_input_is_a_clear_error(tmp_path):
    with pytest.raises(TableError, match="no such file or folder"):
        ReadmeSource().load(str(tmp_path / "absent"), LoadOptions())


def test_wikipedia_keeps_articles_of_1500_characters_or_more(tmp_path):
    long_article = "# Lettuce\n\n" + ("Lettuce is a leafy plant grown as a vegetable. " * 40)
    path = tmp_path / "wiki.parquet"
    pq.write_table(
        pa.table(
            {
                "id": ["1", "2"],
                "markdown": [long_article, "# Stub\n\nToo short."],
                "length": [len(long_article), 18],
            }
        ),
        path,
    )
    loaded = WikipediaSource().load(str(path), LoadOptions())
    assert loaded.documents == 1 and loaded.skipped["too_short"] == 1
    assert loaded.items[0]["question_type"] in WikipediaSource.question_types


def test_wikipedia_parquet_without_the_markdown_column_is_named(tmp_path):
    path = tmp_path / "wiki.parquet"
    pq.write_table(pa.table({"id": ["1"], "text": ["x"]}), path)
    with pytest.raises(TableError, match=r"missing column\(s\) \['markdown'\]"):
        WikipediaSource().load(str(path), LoadOptions())


def test_a_file_name_that_is_not_utf8_is_skipped_and_named(tmp_path):
    import os

    folder = write_readmes(tmp_path / "docs")
    (folder / os.fsdecode(b"caf\xe9.md")).write_text(README_B + "\nAnother one.\n")
    loaded = ReadmeSource().load(str(folder), LoadOptions())
    assert dict(loaded.skipped) == {"name_not_utf8": 1} and loaded.documents == 3


def test_a_row_whose_repo_is_not_a_string_is_skipped_with_its_reason(tmp_path):
    path = tmp_path / "readmes.jsonl"
    path.write_text(
        json.dumps({"repo": ["acme", "fastgrid"], "readme": README_A})
        + "\n"
        + json.dumps({"repo": "acme/pebble", "readme": README_B})
        + "\n"
    )
    loaded = ReadmeSource().load(str(path), LoadOptions())
    assert dict(loaded.skipped) == {"not_a_string": 1}
    assert {json.loads(i["metadata"])["doc_id"] for i in loaded.items} == {"acme/pebble"}


def test_control_bidi_and_zero_width_characters_are_cleaned_from_inputs(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    dirty = README_A.replace("fastgrid", "fast\u200bgrid", 1).replace("\n", "\x1b[0m\n", 1) + "\u202e\x00"
    (folder / "dirty.md").write_text(dirty.replace("\x00", ""), encoding="utf-8")
    loaded = ReadmeSource().load(str(folder), LoadOptions())
    assert loaded.items and loaded.skipped == {}
    for item in loaded.items:
        assert not any(c in item["context"] for c in "\u200b\x1b\u202e")


def test_a_local_path_that_does_not_exist_is_no_hub_id(tmp_path, monkeypatch):
    from lettuce_build.core.tables import is_hub_id

    monkeypatch.chdir(tmp_path)
    assert is_hub_id("org/name")
    assert not is_hub_id("data/rows.jsonl") and not is_hub_id("data/wiki.parquet")
    (tmp_path / "data").mkdir()
    assert not is_hub_id("data/rows")
    with pytest.raises(TableError, match="no such file or folder"):
        WikipediaSource().load("data/rows.jsonl", LoadOptions())
