"""Tables written whole or not at all; a column's values read where they are."""

import numpy as np
import pyarrow as pa
import pytest

from lettuce_build.core.tables import read_jsonl, values_at, write_jsonl


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


def test_values_are_taken_at_rows_in_their_order_across_chunks():
    column = pa.chunked_array([["a0", "a1"], ["b0"], ["c0", "c1"]])
    assert values_at(column, np.array([4, 0, 2, 1])) == ["c1", "a0", "b0", "a1"]
    assert values_at(pa.array(["x", "y"]), np.array([1])) == ["y"]
    assert values_at(column, np.array([], dtype=np.int64)) == []
