"""Tables written whole or not at all."""

import pytest

from lettuce_build.core.tables import read_jsonl, write_jsonl


def test_rows_are_written_one_per_line_and_a_failed_write_leaves_the_old_file(tmp_path):
    path = tmp_path / "rows.jsonl"
    assert write_jsonl(path, iter([{"a": 1}, {"a": "é"}])) == 2
    assert [row for _, row in read_jsonl(path)] == [{"a": 1}, {"a": "é"}]

    def broken():
        yield {"a": 3}
        raise OSError("disk full")

    with pytest.raises(OSError):
        write_jsonl(path, broken())
    assert [row for _, row in read_jsonl(path)] == [{"a": 1}, {"a": "é"}]
    assert [p.name for p in tmp_path.iterdir()] == ["rows.jsonl"]  # no temporary file left
